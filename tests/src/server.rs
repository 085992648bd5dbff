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
//!
//! This file builds and starts the server and runs commands; the JSON-RPC messages a test
//! sends are in `server/messages.rs`, the line client in `server/line_client.rs`, raw HTTP in
//! `server/http.rs` (all re-exported here).

use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

mod http;
mod line_client;
mod messages;

pub use http::{http, post_mcp, post_mcp_headers, HttpResponse};
pub use line_client::LineClient;
pub use messages::{discover, meta, retry, tool_call};

use serde_json::Value;

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
pub fn run_bounded(cmd: Command) -> Run {
    run_bounded_for(cmd, WAIT)
}

/// [`run_bounded`], waiting at most `wait` (a build, say).
pub fn run_bounded_for(mut cmd: Command, wait: Duration) -> Run {
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
    let deadline = Instant::now() + wait;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} ran longer than {wait:?}");
        }
        thread::sleep(Duration::from_millis(10));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}
