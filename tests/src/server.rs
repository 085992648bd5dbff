//! Shared helpers for end-to-end tests of `redmark serve`: build and locate the binary, start
//! it on loopback with ephemeral ports, discover the ports from its stderr, talk raw
//! newline-delimited JSON-RPC (TCP, stdio) or raw HTTP/1.1 to it, and kill it on drop.
//!
//! Every wait is bounded by [`WAIT`]; a [`Server`] SIGKILLs its process when dropped (also when
//! a test panics), and its data directory ([`TempDir`]) is removed when dropped.
//!
//! ```no_run
//! use redmark_tests::server::{Server, TempDir, meta};
//! let data = TempDir::new("example");
//! let mut s = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
//! let mut c = s.tcp_client();
//! let r = c.request(&serde_json::json!({"jsonrpc":"2.0","id":1,"method":"server/discover",
//!     "params":{"_meta": meta(serde_json::json!({}))}}));
//! assert!(r["result"].is_object());
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The longest any helper waits for the server (start-up, one reply); generous for slow CI
/// machines, never a speed check.
pub const WAIT: Duration = Duration::from_secs(60);

/// The protocol version the tests speak.
pub const VERSION: &str = "2026-07-28";

/// A fixed sealing key for tests that need one across restarts (not secret).
pub const TEST_KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// The `redmark` binary, built once per test process with `cargo build -p redmark` (so
/// `cargo test --workspace` needs nothing else). `REDMARK_BIN` overrides the path.
pub fn redmark_bin() -> PathBuf {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BIN.get_or_init(build)
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn build() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("REDMARK_BIN") {
        return Ok(PathBuf::from(p));
    }
    cargo_build(&["--bin", "redmark", "--features", "test-hooks"], "redmark")
}

/// The example server `name` of the shell (`shell/examples/NAME.rs`), built with
/// `cargo build -p redmark --example NAME`.
pub fn example_bin(name: &str) -> PathBuf {
    cargo_build(&["--example", name], name).unwrap_or_else(|e| panic!("{e}"))
}

/// `cargo build -q -p redmark ARGS…`; the executable of target `name` as cargo reports it.
fn cargo_build(args: &[&str], name: &str) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("tests/ has no parent")?
        .to_path_buf();
    let out = Command::new(cargo)
        .current_dir(&root)
        .args(["build", "-q", "-p", "redmark", "--message-format", "json"])
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo build -p redmark failed: {}", out.status));
    }
    // The executable path as cargo reports it (honours CARGO_TARGET_DIR, --target-dir, …).
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["target"]["name"] == name)
        .filter_map(|v| v["executable"].as_str().map(PathBuf::from))
        .next_back()
        .ok_or_else(|| format!("cargo did not report the {name} executable"))
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new empty directory whose name starts with `tag`.
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("redmark-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create temp dir");
        // Private whatever the umask: a data folder others may write to is refused.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let private = std::fs::Permissions::from_mode(0o700);
            std::fs::set_permissions(&p, private).expect("chmod temp dir");
        }
        TempDir(p)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running `redmark serve`.
pub struct Server {
    child: Child,
    /// Bound TCP addresses, in `--tcp` order.
    pub tcp: Vec<SocketAddr>,
    /// Bound HTTP addresses, in `--http` order.
    pub http: Vec<SocketAddr>,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    /// Starts `redmark serve --data DATA ARGS…` with `REDMARK_KEY` = [`TEST_KEY`] and waits
    /// until every `--tcp`/`--http` listener has printed its `redmark: listening` line.
    /// Stdin and stdout are piped (see [`Server::stdio`]).
    pub fn start(args: &[&str], data: &Path) -> Server {
        Self::start_with(args, data, &[("REDMARK_KEY", TEST_KEY)])
    }

    /// Like [`Server::start`] with extra environment (`REDMARK_KEY` is not set for you).
    pub fn start_with(args: &[&str], data: &Path, env: &[(&str, &str)]) -> Server {
        let mut cmd = Command::new(redmark_bin());
        cmd.arg("serve");
        Self::start_program(cmd, args, data, env)
    }

    /// Like [`Server::start_with`] for another server program built on the shell (`cmd`
    /// takes `redmark serve`'s options: `--data DATA ARGS…` are added).
    pub fn start_program(
        mut cmd: Command,
        args: &[&str],
        data: &Path,
        env: &[(&str, &str)],
    ) -> Server {
        cmd.arg("--data").arg(data).args(args);
        cmd.env_remove("REDMARK_KEY").env_remove("REDMARK_OLD_KEYS");
        cmd.envs(env.iter().copied());
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn redmark");
        let expected = args
            .iter()
            .filter(|a| **a == "--tcp" || **a == "--http")
            .count();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let err = child.stderr.take().expect("stderr");
        let log = Arc::clone(&stderr);
        thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("redmark: listening ") {
                    let _ = tx.send(rest.to_string());
                }
                let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
                l.push_str(&line);
                l.push('\n');
            }
        });
        let mut s = Server {
            child,
            tcp: Vec::new(),
            http: Vec::new(),
            stderr,
        };
        let deadline = Instant::now() + WAIT;
        while s.tcp.len() + s.http.len() < expected {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(l) => {
                    let (kind, addr) = l.split_once(' ').expect("listening line");
                    let addr: SocketAddr = addr.parse().expect("listening address");
                    match kind {
                        "tcp" => s.tcp.push(addr),
                        "http" => s.http.push(addr),
                        k => panic!("unknown listener kind {k}"),
                    }
                }
                Err(_) => panic!("redmark did not start listening; stderr:\n{}", s.stderr()),
            }
        }
        s
    }

    /// Everything the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Waits (bounded) until stderr contains `needle`.
    pub fn wait_stderr(&self, needle: &str) -> bool {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if self.stderr().contains(needle) {
                return true;
            }
            thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A raw line client on the first TCP listener.
    pub fn tcp_client(&self) -> LineClient<TcpStream, TcpStream> {
        LineClient::tcp(*self.tcp.first().expect("no --tcp listener"))
    }

    /// A raw line client on the process's stdin/stdout (once; later calls panic).
    pub fn stdio(&mut self) -> LineClient<ChildStdout, ChildStdin> {
        let w = self.child.stdin.take().expect("stdin already taken");
        let r = self.child.stdout.take().expect("stdout already taken");
        LineClient::new(r, w)
    }

    /// The process's stdin and stdout themselves (once; later calls panic), e.g. to write and
    /// read from separate threads.
    pub fn take_stdio(&mut self) -> (ChildStdin, ChildStdout) {
        let w = self.child.stdin.take().expect("stdin already taken");
        let r = self.child.stdout.take().expect("stdout already taken");
        (w, r)
    }

    /// Sends `sig` (e.g. "TERM", "INT") with `kill(1)`.
    pub fn signal(&self, sig: &str) {
        let st = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.pid().to_string())
            .status()
            .expect("run kill");
        assert!(st.success(), "kill -{sig} failed");
    }

    /// SIGKILL, then reap.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits (bounded) for the process to exit; `None` if it did not.
    pub fn wait_exit(&mut self) -> Option<ExitStatus> {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Some(st);
            }
            thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// What one bounded run of a command printed and how it exited.
#[derive(Debug)]
pub struct Run {
    /// Exit code (-1 if killed by a signal).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` with stdin from /dev/null and stdout/stderr captured, waiting at most [`WAIT`]:
/// past that the process is killed and the test fails (never an unbounded `.output()`).
pub fn run_bounded(mut cmd: Command) -> Run {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let drain = |mut r: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} ran longer than {WAIT:?}");
        }
        thread::sleep(Duration::from_millis(10));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

/// `_meta` of a 2026-07-28 request with these client capabilities.
pub fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "redmark-tests", "version": "0"},
    })
}

/// A `server/discover` request with id `id`.
pub fn discover(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"server/discover","params":{"_meta": meta(json!({}))}})
}

/// A `tools/call` request (form-elicitation capable when `form` is true).
pub fn tool_call(id: u64, name: &str, args: Value, form: bool) -> Value {
    let caps = if form {
        json!({"elicitation": {"form": {}}})
    } else {
        json!({})
    };
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args,"_meta":meta(caps)}})
}

/// `request` turned into its MRTR retry: new id, `inputResponses` and the echoed state.
pub fn retry(request: &Value, id: u64, responses: Value, state: &str) -> Value {
    let mut r = request.clone();
    r["id"] = json!(id);
    r["params"]["inputResponses"] = responses;
    r["params"]["requestState"] = json!(state);
    r
}

/// Newline-delimited JSON-RPC over any byte stream, with bounded reads. A TCP client shuts its
/// socket down when dropped (the reading thread holds a clone of it).
pub struct LineClient<R: Read, W: Write> {
    reader: Receiver<Option<Vec<u8>>>,
    writer: W,
    on_drop: Option<Box<dyn FnOnce() + Send>>,
    _r: std::marker::PhantomData<R>,
}

impl<R: Read, W: Write> Drop for LineClient<R, W> {
    fn drop(&mut self) {
        if let Some(f) = self.on_drop.take() {
            f();
        }
    }
}

impl LineClient<TcpStream, TcpStream> {
    /// Connects to `addr`.
    pub fn tcp(addr: SocketAddr) -> Self {
        let s = TcpStream::connect(addr).expect("connect");
        let r = s.try_clone().expect("clone socket");
        let closer = s.try_clone().expect("clone socket");
        let mut c = LineClient::new(r, s);
        c.on_drop = Some(Box::new(move || {
            let _ = closer.shutdown(std::net::Shutdown::Both);
        }));
        c
    }
}

impl<R: Read + Send + 'static, W: Write> LineClient<R, W> {
    /// Reads lines from `r` on a thread; writes to `w`.
    pub fn new(r: R, w: W) -> Self {
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut br = BufReader::new(r);
            loop {
                let mut line = Vec::new();
                match br.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(None);
                        return;
                    }
                    Ok(_) => {
                        if line.last() == Some(&b'\n') {
                            line.pop();
                        }
                        if tx.send(Some(line)).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        LineClient {
            reader: rx,
            writer: w,
            on_drop: None,
            _r: std::marker::PhantomData,
        }
    }

    /// The writing half (e.g. to `shutdown` a TCP stream while the reader still runs).
    pub fn writer(&mut self) -> &mut W {
        &mut self.writer
    }

    /// Writes raw bytes (no newline added).
    pub fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(bytes)?;
        self.writer.flush()
    }

    /// Writes `msg` as one line.
    pub fn send(&mut self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).expect("serialize");
        line.push(b'\n');
        self.send_raw(&line).expect("write line");
    }

    /// The next line, or `None` at end of stream; panics after [`WAIT`].
    pub fn recv_line(&mut self) -> Option<Vec<u8>> {
        self.reader.recv_timeout(WAIT).expect("no reply in time")
    }

    /// The next line within `wait`: `Ok(Some)` a line, `Ok(None)` end of stream, `Err` nothing
    /// arrived in time.
    pub fn try_recv_line(
        &mut self,
        wait: Duration,
    ) -> Result<Option<Vec<u8>>, mpsc::RecvTimeoutError> {
        self.reader.recv_timeout(wait)
    }

    /// The next line as JSON; panics at end of stream.
    pub fn recv(&mut self) -> Value {
        let line = self.recv_line().expect("stream ended");
        serde_json::from_slice(&line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&line)))
    }

    /// Sends a request and returns the next message.
    pub fn request(&mut self, msg: &Value) -> Value {
        self.send(msg);
        self.recv()
    }
}

/// An HTTP response as read off the wire.
#[derive(Debug)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// Headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The first header named `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (panics if it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

/// One raw HTTP/1.1 exchange (`Connection: close`). `headers` are sent as given, after a
/// `Host: 127.0.0.1:PORT` unless they contain their own `Host`.
pub fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> HttpResponse {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(WAIT)).expect("timeout");
    let mut req = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    s.write_all(req.as_bytes()).expect("write head");
    // A server may answer (413) before reading a large body; ignore a reset while sending it.
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    parse_response(&raw)
}

fn parse_response(raw: &[u8]) -> HttpResponse {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("no HTTP head in response");
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    HttpResponse {
        status,
        headers,
        body,
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(i) = b.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&b[..i]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&b[i + 2..i + 2 + size]);
        b = &b[i + 2 + size + 2..];
    }
    out
}

/// POSTs `body` to `/mcp` with exactly these MCP headers (`None`: absent), plus `extra`.
pub fn post_mcp_headers(
    addr: SocketAddr,
    body: &[u8],
    version: Option<&str>,
    method: Option<&str>,
    name: Option<&str>,
    extra: &[(&str, &str)],
) -> HttpResponse {
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    if let Some(v) = version {
        h.push(("MCP-Protocol-Version", v));
    }
    if let Some(m) = method {
        h.push(("Mcp-Method", m));
    }
    if let Some(n) = name {
        h.push(("Mcp-Name", n));
    }
    h.extend_from_slice(extra);
    http(addr, "POST", "/mcp", &h, body)
}

/// POSTs one JSON-RPC message to `/mcp` with the MCP headers derived from it (version,
/// method, and name for `tools/call`), plus `extra` headers.
pub fn post_mcp(addr: SocketAddr, msg: &Value, extra: &[(&str, &str)]) -> HttpResponse {
    let version = msg["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        .as_str()
        .unwrap_or(VERSION);
    let method = msg["method"].as_str().unwrap_or("");
    let name = msg["params"]["name"]
        .as_str()
        .or_else(|| msg["params"]["uri"].as_str());
    post_mcp_headers(
        addr,
        &serde_json::to_vec(msg).expect("serialize"),
        Some(version),
        Some(method),
        name,
        extra,
    )
}
