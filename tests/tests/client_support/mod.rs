//! Private helpers of the client tests: build and run the `redmark` binary with bounded waits,
//! start `redmark serve` on ephemeral loopback ports, read `--trace` output.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Longest any one `redmark` run may take before the test kills it and fails.
pub const RUN_LIMIT: Duration = Duration::from_secs(60);

/// The `redmark` binary, built once per test process (the test crate cannot depend on a bin).
pub fn bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-q", "-p", "redmark", "--bin", "redmark"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build");
        assert!(status.success(), "cargo build -p redmark failed");
        // target/debug/deps/<test> -> target/debug/redmark
        let exe = std::env::current_exe().unwrap();
        let dir = exe.parent().unwrap().parent().unwrap();
        let bin = dir.join("redmark");
        assert!(bin.exists(), "no binary at {}", bin.display());
        bin
    })
}

/// Joins argument lists.
pub fn cat(parts: &[&[&str]]) -> Vec<String> {
    parts
        .iter()
        .flat_map(|p| p.iter())
        .map(|s| s.to_string())
        .collect()
}

/// What one run printed and how it exited.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `redmark ARGS` with no terminal (stdin is /dev/null), killing it after [`RUN_LIMIT`].
pub fn redmark(args: &[String]) -> Run {
    let mut child = Command::new(bin())
        .args(args)
        .env("REDMARK_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn redmark");
    let out = drain(child.stdout.take().unwrap());
    let err = drain(child.stderr.take().unwrap());
    let deadline = Instant::now() + RUN_LIMIT;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("redmark {args:?} ran longer than {RUN_LIMIT:?}");
        }
        thread::sleep(Duration::from_millis(10));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn drain(mut r: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        s
    })
}

/// The wire messages of a `--trace` run: (raw text, parsed) in order.
pub struct Trace {
    pub sent: Vec<(String, Value)>,
    pub received: Vec<(String, Value)>,
}

impl Trace {
    pub fn parse(stderr: &str) -> Trace {
        let mut t = Trace {
            sent: Vec::new(),
            received: Vec::new(),
        };
        for line in stderr.lines() {
            if let Some(m) = line.strip_prefix("→ ") {
                t.sent.push((
                    m.to_owned(),
                    serde_json::from_str(m).expect("traced request is JSON"),
                ));
            } else if let Some(m) = line.strip_prefix("← ") {
                t.received.push((
                    m.to_owned(),
                    serde_json::from_str(m).expect("traced message is JSON"),
                ));
            }
        }
        t
    }
}

/// The raw bytes of the string member `"name":"…"` in a message's text.
pub fn raw_member(text: &str, name: &str) -> String {
    let key = format!("\"{name}\":\"");
    let start = text
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {text}"))
        + key.len();
    let mut end = start;
    let b = text.as_bytes();
    while b[end] != b'"' {
        end += if b[end] == b'\\' { 2 } else { 1 };
    }
    text[start..end].to_owned()
}

/// A directory removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p =
            std::env::temp_dir().join(format!("redmark-client-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `redmark serve` on ephemeral loopback ports, killed when dropped.
pub struct Server {
    child: Child,
    addrs: Vec<(String, String)>,
    _data: TempDir,
}

impl Server {
    /// Starts `redmark serve ARGS --data <temp>` and waits (bounded) for every listener's
    /// `redmark: listening <kind> <addr>` line.
    pub fn start(args: &[&str]) -> Server {
        let data = TempDir::new("serve");
        let want = args
            .iter()
            .filter(|a| **a == "--tcp" || **a == "--http")
            .count();
        let mut child = Command::new(bin())
            .arg("serve")
            .args(args)
            .arg("--data")
            .arg(data.path())
            .env("REDMARK_LOG", "info")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn redmark serve");
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    // Keep draining so the server never blocks on a full pipe.
                    continue;
                }
            }
        });
        let mut server = Server {
            child,
            addrs: Vec::new(),
            _data: data,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while server.addrs.len() < want {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("redmark serve {args:?} did not start listening"));
            if let Some(rest) = line.split("listening ").nth(1) {
                let mut it = rest.split_whitespace();
                if let (Some(kind), Some(addr)) = (it.next(), it.next()) {
                    server.addrs.push((kind.to_owned(), addr.to_owned()));
                }
            }
        }
        server
    }

    /// The address the `kind` (`tcp` or `http`) listener bound.
    pub fn addr(&self, kind: &str) -> &str {
        &self
            .addrs
            .iter()
            .find(|(k, _)| k == kind)
            .unwrap_or_else(|| panic!("no {kind} listener"))
            .1
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
