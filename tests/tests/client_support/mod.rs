//! Private helpers of the client tests: build and run the `redmark` binary with bounded waits,
//! start `redmark serve` on ephemeral loopback ports, read `--trace` output.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

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

pub use redmark_tests::server::Run;

/// Runs `redmark ARGS` with no terminal (stdin is /dev/null), killing it after [`redmark_tests::server::WAIT`]
/// (the shared [`redmark_tests::server::run_bounded`]).
///
/// `XDG_DATA_HOME` points at a fresh directory for this run only, so a `redmark call` without
/// `--data` (the in-process server on the default data folder) never touches the real user's
/// data folder, nor another test's.
pub fn redmark(args: &[String]) -> Run {
    let home = TempDir::new("xdg");
    redmark_in(args, home.path())
}

/// [`redmark`] with `XDG_DATA_HOME` = `xdg` (the default data folder is `xdg/redmark`).
pub fn redmark_in(args: &[String], xdg: &Path) -> Run {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env("REDMARK_LOG", "warn")
        .env("XDG_DATA_HOME", xdg)
        .env_remove("REDMARK_KEY")
        .env_remove("REDMARK_OLD_KEYS");
    redmark_tests::server::run_bounded(cmd)
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
