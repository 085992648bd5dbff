//! `redmark call` against a 2025-11-25 server built on the official Python SDK 1.x
//! (`tests/peers/legacy_server.py`, FastMCP over stdio): the 2026-07-28 call is not understood,
//! `server/discover` gets no DiscoverResult, so the client falls back to `initialize` and
//! answers the `elicitation/create` the server pushes, from `--answer FIELD=VALUE` (no key:
//! a pushed question has none) or `--decline q1` / `--cancel q1`.

use std::process::Command;

use redmark_tests::peers::{dir, script};
use redmark_tests::server::{redmark_bin, run_bounded, Run};

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
