//! Private helpers of the client tests: build and run the `redmark` binary with bounded waits,
//! start `redmark serve` on ephemeral loopback ports, read `--trace` output.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Longest any one `redmark` run may take before the test kills it and fails.
pub const RUN_LIMIT: Duration = Duration::from_secs(60);

/// The `redmark` binary, built once per test process by the shared helper
/// ([`redmark_tests::server::redmark_bin`]: `cargo build -p redmark`, or `REDMARK_BIN`).
pub fn bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(redmark_tests::server::redmark_bin)
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

pub use redmark_tests::server::TempDir;

/// `redmark serve` on ephemeral loopback ports with its own data directory, killed when dropped
/// (the shared [`redmark_tests::server::Server`]).
pub struct Server {
    inner: redmark_tests::server::Server,
    _data: TempDir,
}

impl Server {
    /// Starts `redmark serve ARGS` and waits (bounded) until every listener is bound.
    pub fn start(args: &[&str]) -> Server {
        let data = TempDir::new("client-serve");
        let inner = redmark_tests::server::Server::start(args, data.path());
        Server { inner, _data: data }
    }

    /// The address the first `kind` (`tcp` or `http`) listener bound.
    pub fn addr(&self, kind: &str) -> String {
        let list = if kind == "tcp" {
            &self.inner.tcp
        } else {
            &self.inner.http
        };
        list.first()
            .unwrap_or_else(|| panic!("no {kind} listener"))
            .to_string()
    }
}
