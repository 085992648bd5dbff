//! The 2025-11-25 SDK clients `scripts/legacy-peers.sh` installs (pinned) under
//! `target/legacy-peers/`, and the host scripts in `tests/peers/` that drive them.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::server::run_bounded;

/// The folder the peers were installed into (known only when `cfg(legacy_peers)` is set).
pub fn dir() -> PathBuf {
    PathBuf::from(option_env!("REDMARK_LEGACY_PEERS_DIR").unwrap_or("target/legacy-peers"))
}

/// A host script in `tests/peers/`.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("peers")
        .join(name)
}

/// Runs `cmd` (bounded), asserts it exited 0 and returns the JSON object it printed last.
pub fn run_json(cmd: Command) -> Value {
    let desc = format!("{cmd:?}");
    let run = run_bounded(cmd);
    assert_eq!(
        run.code, 0,
        "{desc} failed:\n{}\n{}",
        run.stdout, run.stderr
    );
    let last = run.stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| {
        panic!(
            "{desc} printed no JSON ({e}):\n{}\n{}",
            run.stdout, run.stderr
        )
    })
}

/// Runs the host script `tests/peers/<name>` with the Python of `py` and `args` (bounded),
/// asserting it exited 0; the JSON object it printed last.
pub fn run_python<S: AsRef<std::ffi::OsStr>>(py: &Path, name: &str, args: &[S]) -> Value {
    let mut cmd = Command::new(py);
    cmd.arg(script(name)).args(args);
    run_json(cmd)
}

/// `book_room` with `args` at `url` through the Python SDK 2.3 client
/// (`tests/peers/time_zone_client.py`), answering each question with the next of `answers`.
pub fn sdk_book(py: &Path, url: &str, args: &Value, answers: &[&str]) -> Value {
    let args = args.to_string();
    let all: Vec<&str> = [url, args.as_str()]
        .into_iter()
        .chain(answers.iter().copied())
        .collect();
    run_python(py, "time_zone_client.py", &all)
}

/// The Python SDK 1.x host (`tests/peers/legacy_client.py`) for `transport` (`["stdio", cmd,
/// args…]` or `["http", url]`), answering `answer` (accept, decline, cancel, none) on `day`.
pub fn python_client(transport: &[&str], answer: &str, day: &str) -> Value {
    let mut cmd = Command::new(dir().join("venv/bin/python"));
    cmd.arg(script("legacy_client.py"))
        .args(transport)
        .args([answer, day]);
    run_json(cmd)
}

/// Whether `rooms` (a `list_rooms` result) says `room` is free.
pub fn is_free(rooms: &Value, room: &str) -> bool {
    rooms["structuredContent"]["rooms"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["id"] == room)
        .unwrap_or_else(|| panic!("{room} not listed in {rooms}"))["free"]
        == true
}

/// The TypeScript SDK 1.x host (`tests/peers/legacy_client.cjs`) to `server` (a stdio command
/// and its arguments, or one `http://…/mcp` URL), answering `answer` (accept, decline, cancel, none) on `day`.
pub fn typescript_client(server: &[&str], answer: &str, day: &str) -> Value {
    let mut cmd = Command::new("node");
    cmd.arg(script("legacy_client.cjs"))
        .arg(dir().join("node"))
        .args([answer, day])
        .args(server);
    run_json(cmd)
}

/// Accepting Studio B books it; the host negotiated 2025-11-25 and was asked exactly once.
pub fn assert_booked_studio_b(out: &Value) {
    assert_eq!(out["version"], "2025-11-25", "{out}");
    assert_eq!(out["server"], "redmark");
    let asked = out["asked"].as_array().expect("asked");
    assert_eq!(asked.len(), 1, "{out}");
    assert!(asked[0]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("the big room"));
    assert_eq!(out["book"]["isError"], false, "{out}");
    assert_eq!(
        out["book"]["structuredContent"]["booking"]["room_id"], "studio-b",
        "{out}"
    );
    assert!(out["book"].get("resultType").is_none(), "{out}");
    assert!(!is_free(&out["rooms"], "studio-b"), "{out}");
    assert!(is_free(&out["rooms"], "atrium"), "{out}");
}

/// Declining or cancelling books nothing.
pub fn assert_nothing_booked(out: &Value) {
    assert_eq!(out["asked"].as_array().map(Vec::len), Some(1), "{out}");
    assert!(
        out["book"]["structuredContent"]["booking"].is_null(),
        "{out}"
    );
    assert!(is_free(&out["rooms"], "studio-b"), "{out}");
    assert!(is_free(&out["rooms"], "atrium"), "{out}");
}

/// The interpreter of the venv `target/<venv>/venv` that `script` installs `what` into, or
/// `None` (said) when it is not there and `required` (an environment variable,
/// `REDMARK_REQUIRE_…`) is not `1`.
pub fn venv_python(venv: &str, what: &str, script: &str, required: &str) -> Option<PathBuf> {
    let py = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target")
        .join(venv)
        .join("venv/bin/python");
    if py.exists() {
        return Some(py);
    }
    assert!(
        std::env::var_os(required).is_none_or(|v| v != "1"),
        "{} is missing: {script} installs {what} there",
        py.display()
    );
    eprintln!("no {what} at {} ({script} installs it)", py.display());
    None
}

/// The official Python SDK 2.3's interpreter (`target/sdk-peers/venv`, installed by
/// scripts/sdk-peer.sh), as [`venv_python`] finds it.
pub fn python_sdk_2_3(required: &str) -> Option<PathBuf> {
    venv_python(
        "sdk-peers",
        "the Python SDK 2.3",
        "scripts/sdk-peer.sh",
        required,
    )
}

/// The `icalendar` venv's interpreter (scripts/ical-peer.sh), as [`venv_python`] finds it.
pub fn ical_python() -> Option<PathBuf> {
    venv_python(
        "ical-peer",
        "icalendar",
        "scripts/ical-peer.sh",
        "REDMARK_REQUIRE_ICAL",
    )
}
