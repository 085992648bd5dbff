//! `redmark call` against a 2025-11-25 server built on the official Python SDK 1.x
//! (`tests/peers/legacy_server.py`, FastMCP over stdio): the 2026-07-28 call is not understood,
//! `server/discover` gets no DiscoverResult, so the client falls back to `initialize` and
//! answers the `elicitation/create` the server pushes, from `--answer FIELD=VALUE` (no key:
//! a pushed question has none) or `--decline q1` / `--cancel q1`. Over stdio and over
//! Streamable HTTP (a 2025-11-25 session with `Mcp-Session-Id`; questions on the POST's stream).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redmark_tests::peers::{dir, script};
use redmark_tests::server::{redmark_bin, run_bounded, Run, WAIT};

/// `redmark call --stdio <python legacy_server.py> FLAGS book_room …`.
fn call(flags: &[&str]) -> Run {
    let server = format!(
        "{} {}",
        dir().join("venv/bin/python").display(),
        script("legacy_server.py").display()
    );
    let mut cmd = Command::new(redmark_bin());
    cmd.args(["call", "--trace", "--stdio", &server])
        .args(flags)
        .args([
            "book_room",
            "day=2099-09-17",
            "hour=9",
            "room_hint=the big room",
        ]);
    run_bounded(cmd)
}

#[test]
#[cfg_attr(
    not(legacy_peers),
    ignore = "needs the legacy SDK peers (scripts/legacy-peers.sh installs them)"
)]
fn falls_back_to_initialize_and_answers_a_pushed_question() {
    let out = call(&["--answer", "room_id=studio-b"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Booked studio-b"), "{out:?}");
    assert!(out.stderr.contains(r#""method":"initialize""#), "{out:?}");
    assert!(
        out.stderr.contains(r#""method":"elicitation/create""#),
        "{out:?}"
    );
    assert!(!out.stderr.contains("was not used"), "{out:?}");
}

#[test]
#[cfg_attr(
    not(legacy_peers),
    ignore = "needs the legacy SDK peers (scripts/legacy-peers.sh installs them)"
)]
fn declining_or_cancelling_a_pushed_question() {
    let out = call(&["--decline", "q1"]);
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.stdout.contains("Nothing booked (decline)"), "{out:?}");
    let out = call(&["--cancel", "q1"]);
    assert_eq!(out.code, 4, "{out:?}");
    assert!(out.stdout.contains("Nothing booked (cancel)"), "{out:?}");
    // Without a terminal or a flag, the pushed question names the flag that would answer it.
    let out = call(&[]);
    assert_eq!(out.code, 7, "{out:?}");
    assert!(out.stderr.contains("--answer q1.room_id=VALUE"), "{out:?}");
}

/// The Python server over Streamable HTTP on a free loopback port, killed on drop.
struct HttpPeer {
    child: Child,
    url: String,
}

impl HttpPeer {
    fn start() -> HttpPeer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut child = Command::new(dir().join("venv/bin/python"))
            .arg(script("legacy_server.py"))
            .args(["http", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the Python server");
        let deadline = Instant::now() + WAIT;
        while !answers_http(port) {
            if let Ok(Some(st)) = child.try_wait() {
                panic!("the Python server exited ({st}): is port {port} taken?");
            }
            assert!(
                Instant::now() < deadline,
                "the Python server did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpPeer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

/// Whether the Python server (uvicorn) answers HTTP on `port`. A bare connect is not enough:
/// while nothing listens, a connect to a port in the ephemeral range can meet itself (TCP
/// simultaneous open, when the kernel picks that same port as the source), and a process left
/// from an earlier test may hold the port (then Python cannot bind it and exits).
fn answers_http(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut head = Vec::new();
    s.write_all(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_ok()
        && s.take(4096).read_to_end(&mut head).is_ok()
        && head.starts_with(b"HTTP/")
        && String::from_utf8_lossy(&head)
            .to_ascii_lowercase()
            .contains("server: uvicorn")
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[cfg_attr(
    not(legacy_peers),
    ignore = "needs the legacy SDK peers (scripts/legacy-peers.sh installs them)"
)]
fn falls_back_to_a_session_over_streamable_http() {
    let peer = HttpPeer::start();
    let run = |flags: &[&str]| {
        let mut cmd = Command::new(redmark_bin());
        cmd.args(["call", "--trace", "--url", &peer.url])
            .args(flags)
            .args([
                "book_room",
                "day=2099-09-17",
                "hour=9",
                "room_hint=the big room",
            ]);
        run_bounded(cmd)
    };
    let out = run(&["--answer", "room_id=studio-b"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Booked studio-b"), "{out:?}");
    assert!(out.stderr.contains("2025-11-25 session"), "{out:?}");
    let out = run(&["--decline", "q1"]);
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.stdout.contains("Nothing booked (decline)"), "{out:?}");
}
