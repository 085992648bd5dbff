//! `redmark call` and `redmark tools`, non-interactive, against our server in-process and over
//! stdio, TCP and Streamable HTTP (scripted servers that misbehave: client_scripted_servers.rs).
//!
//! In-process calls without `--data` use the default data folder under the `XDG_DATA_HOME`
//! that [`redmark`] points at a fresh directory per run; never the real user's.

mod client_support;

use client_support::*;
use serde_json::Value;

const BIG_ROOM: [&str; 4] = [
    "book_room",
    "day=2099-09-17",
    "hour=9",
    "room_hint=the big room",
];

fn with(pre: &[&str], post: &[&str]) -> Vec<String> {
    cat(&[pre, post])
}

#[test]
fn in_process_books_after_the_answer() {
    let out = redmark(&with(
        &["call", "--answer", "room.room_id=studio-b"],
        &BIG_ROOM,
    ));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Booked Studio B"), "{out:?}");
}

#[test]
fn json_prints_the_final_result() {
    let out = redmark(&with(
        &["call", "--json", "--answer", "room.room_id=atrium"],
        &BIG_ROOM,
    ));
    assert_eq!(out.code, 0, "{out:?}");
    let v: Value = serde_json::from_str(&out.stdout).expect("stdout is JSON");
    assert_eq!(v["resultType"], "complete");
    assert_eq!(v["structuredContent"]["booking"]["room_id"], "atrium");
}

#[test]
fn trace_shows_the_red_mark_round_trip() {
    let out = redmark(&with(
        &["call", "--trace", "--answer", "room.room_id=studio-b"],
        &BIG_ROOM,
    ));
    assert_eq!(out.code, 0, "{out:?}");
    let t = Trace::parse(&out.stderr);
    assert_eq!(t.sent.len(), 2, "{}", out.stderr);
    assert_eq!(t.received.len(), 2);
    let (r1, r2) = (&t.sent[0].1, &t.sent[1].1);
    assert_eq!(r1["id"], 1);
    assert_eq!(r2["id"], 2, "the retry has a new id");
    assert_eq!(
        r1["params"]["arguments"], r2["params"]["arguments"],
        "same arguments"
    );
    let meta = &r1["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        serde_json::json!({"elicitation": {"form": {}}})
    );
    assert!(meta["io.modelcontextprotocol/clientInfo"]["name"].is_string());
    assert!(r1["params"].get("requestState").is_none());
    let asked = &t.received[0].1["result"];
    assert_eq!(asked["resultType"], "input_required");
    assert_eq!(
        raw_member(&t.received[0].0, "requestState"),
        raw_member(&t.sent[1].0, "requestState"),
        "requestState echoed byte for byte"
    );
    assert_eq!(r2["params"]["inputResponses"]["room"]["action"], "accept");
    assert_eq!(
        r2["params"]["inputResponses"]["room"]["content"]["room_id"],
        "studio-b"
    );
    assert_eq!(t.received[1].1["result"]["resultType"], "complete");
}

#[test]
fn without_a_terminal_an_unanswered_question_names_the_flag() {
    let out = redmark(&with(&["call"], &BIG_ROOM));
    assert_eq!(out.code, 7, "{out:?}");
    assert!(out.stderr.contains("'room'"), "{out:?}");
    assert!(
        out.stderr.contains("--answer room.room_id=VALUE"),
        "{out:?}"
    );
    assert!(out.stderr.contains("--decline room"), "{out:?}");
    assert!(out.stderr.contains("atrium, studio-b"), "{out:?}");
}

#[test]
fn decline_and_cancel_have_their_own_exit_status() {
    let out = redmark(&with(&["call", "--decline", "room"], &BIG_ROOM));
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.stdout.contains("Not booked"), "{out:?}");
    let out = redmark(&with(&["call", "--cancel", "room", "--trace"], &BIG_ROOM));
    assert_eq!(out.code, 4, "{out:?}");
    let t = Trace::parse(&out.stderr);
    assert_eq!(
        t.sent[1].1["params"]["inputResponses"]["room"],
        serde_json::json!({"action": "cancel"})
    );
}

#[test]
fn tool_errors_protocol_errors_and_usage_are_told_apart() {
    let out = redmark(&with(&["call"], &["book_room", "day=someday", "hour=9"]));
    assert_eq!(out.code, 1, "isError result: {out:?}");
    let out = redmark(&with(&["call"], &["no_such_tool"]));
    assert_eq!(out.code, 5, "JSON-RPC error: {out:?}");
    assert!(out.stderr.contains("-32602"), "{out:?}");
    let out = redmark(&with(
        &["call", "--answer", "room.room_id=ballroom"],
        &BIG_ROOM,
    ));
    assert_eq!(out.code, 2, "invalid answer: {out:?}");
    assert!(out.stderr.contains("atrium, studio-b"), "{out:?}");
    let out = redmark(&with(&["call"], &["book_room", "novalue"]));
    assert_eq!(out.code, 2, "{out:?}");
    // A port that was just free: bound, then released (nothing listens there now).
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .to_string();
    let out = redmark(&with(&["call", "--tcp", &closed], &["list_rooms"]));
    assert_eq!(out.code, 6, "transport error: {out:?}");
}

#[test]
fn in_process_bookings_last_from_one_call_to_the_next() {
    let data = TempDir::new("call-data");
    let d = data.path().to_str().unwrap();
    let book = |room: &str| {
        redmark(&with(
            &[
                "call",
                "--data",
                d,
                "--answer",
                &format!("room.room_id={room}"),
            ],
            &BIG_ROOM,
        ))
    };
    let out = book("studio-b");
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("booking bk_1"), "{out:?}");
    assert!(data.path().join("bookings.redb").exists());
    assert!(data.path().join("sealing-keys").exists());
    // The next command sees it: only the atrium is free then, so "the big room" is booked there
    // without a question (the answer given is not needed), as bk_2.
    let out = book("studio-b");
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Booked The Atrium"), "{out:?}");
    assert!(out.stdout.contains("booking bk_2"), "{out:?}");
    // And a later command can cancel it.
    let out = redmark(&cat(&[&[
        "call",
        "--data",
        d,
        "--answer",
        "confirm.confirm=true",
        "cancel_booking",
        "booking_id=bk_1",
    ]]));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("bk_1") && out.stdout.contains("cancelled"),
        "{out:?}"
    );
    let out = book("studio-b");
    assert_eq!(out.code, 0, "the cancelled slot is free again: {out:?}");
}

#[test]
fn the_default_data_folder_is_the_one_serve_uses() {
    let xdg = TempDir::new("xdg-shared");
    let out = redmark_in(
        &with(&["call", "--answer", "room.room_id=studio-b"], &BIG_ROOM),
        xdg.path(),
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(xdg.path().join("redmark/bookings.redb").exists(), "{out:?}");
    // `redmark serve` with no --data (same XDG_DATA_HOME, inherited) has that booking.
    let serve = format!("{} serve", bin().display());
    let out = redmark_in(
        &with(
            &[
                "call",
                "--stdio",
                &serve,
                "--answer",
                "room.room_id=studio-b",
            ],
            &BIG_ROOM,
        ),
        xdg.path(),
    );
    // Studio B is taken there now: the atrium, the only big room free, is booked instead.
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Booked The Atrium"), "{out:?}");
}

#[test]
fn scratch_keeps_nothing() {
    let xdg = TempDir::new("xdg-scratch");
    for _ in 0..2 {
        let out = redmark_in(
            &with(
                &["call", "--scratch", "--answer", "room.room_id=studio-b"],
                &BIG_ROOM,
            ),
            xdg.path(),
        );
        assert_eq!(out.code, 0, "{out:?}");
        assert!(out.stdout.contains("booking bk_1"), "{out:?}");
    }
    assert!(
        !xdg.path().join("redmark").exists(),
        "--scratch wrote a data folder"
    );
    let out = redmark(&cat(&[&["call", "--scratch", "--data", "x", "list_rooms"]]));
    assert_eq!(out.code, 2, "{out:?}");
}

/// A data folder a server holds is reached through that server (issue 34; the booking side is
/// in serve_shared_folder.rs, a folder held by a process that serves no socket in the shell's
/// unit tests).
#[test]
fn a_data_folder_held_by_serve_is_reached_through_it() {
    let data = TempDir::new("call-busy");
    let _serve = redmark_tests::server::Server::start(&["--tcp", "127.0.0.1:0"], data.path());
    let d = data.path().to_str().unwrap();
    let out = redmark(&cat(&[&["call", "--data", d, "list_rooms"]]));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Studio B"), "{out:?}");
}

#[test]
fn accept_without_defaults_names_the_field() {
    let out = redmark(&with(&["call", "--accept", "room"], &BIG_ROOM));
    assert_eq!(out.code, 7, "{out:?}");
    assert!(
        out.stderr
            .contains("--accept room sends the form's defaults"),
        "{out:?}"
    );
    assert!(out.stderr.contains("'room_id'"), "{out:?}");
    assert!(out.stderr.contains("no default"), "{out:?}");
    assert!(
        out.stderr.contains("--answer room.room_id=VALUE"),
        "{out:?}"
    );
    assert!(!out.stderr.contains("no terminal"), "{out:?}");
}

#[test]
fn unused_answers_are_reported_with_the_questions_asked() {
    // A misspelled key: the question goes unanswered, and the warning says why.
    let out = redmark(&with(
        &["call", "--answer", "rooom.room_id=studio-b"],
        &BIG_ROOM,
    ));
    assert_eq!(out.code, 7, "{out:?}");
    assert!(
        out.stderr
            .contains("--answer rooom.room_id=studio-b was not used"),
        "{out:?}"
    );
    assert!(out.stderr.contains("the server asked 'room'"), "{out:?}");
    // Answered anyway, plus flags for questions never asked: warned, still complete.
    let out = redmark(&with(
        &[
            "call",
            "--answer",
            "room.room_id=studio-b",
            "--decline",
            "confirm",
            "--answer",
            "extra.x=1",
        ],
        &BIG_ROOM,
    ));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("--decline confirm was not used"),
        "{out:?}"
    );
    assert!(
        out.stderr.contains("--answer extra.x=1 was not used"),
        "{out:?}"
    );
    assert!(!out.stderr.contains("room.room_id"), "{out:?}");
    // Nothing asked at all.
    let out = redmark(&cat(&[&[
        "call",
        "--scratch",
        "--accept",
        "room",
        "list_rooms",
    ]]));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("--accept room was not used")
            && out.stderr.contains("asked no question"),
        "{out:?}"
    );
}

#[test]
fn a_url_without_a_scheme_is_a_usage_error() {
    let out = redmark(&cat(&[&[
        "call",
        "--url",
        "127.0.0.1:8080/mcp",
        "list_rooms",
    ]]));
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("did you mean http://127.0.0.1:8080/mcp?"),
        "{out:?}"
    );
    let out = redmark(&cat(&[&["tools", "--url", "ftp://example.com/mcp"]]));
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("only http:// and https://"), "{out:?}");
}

#[test]
fn help_says_what_no_transport_means_and_lists_exit_statuses() {
    let out = redmark(&cat(&[&["tools", "--help"]]));
    assert_eq!(out.code, 0, "{out:?}");
    for s in ["Exit status", "5  protocol error", "6  transport error"] {
        assert!(out.stdout.contains(s), "tools --help lacks {s:?}: {out:?}");
    }
    let out = redmark(&cat(&[&["call", "--help"]]));
    assert_eq!(out.code, 0, "{out:?}");
    for s in [
        "Without them, call",
        "data folder",
        "--scratch",
        "--data <DIR>",
    ] {
        assert!(out.stdout.contains(s), "call --help lacks {s:?}: {out:?}");
    }
}

#[test]
fn tools_lists_schemas() {
    let out = redmark(&["tools".to_string(), "--json".to_string()]);
    assert_eq!(out.code, 0, "{out:?}");
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    let names: Vec<_> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "book_room",
            "cancel_booking",
            "extend_booking",
            "end_booking",
            "check_in",
            "booking_trail",
            "list_rooms",
            "day_schedule",
            "list_bookings"
        ]
    );
    assert_eq!(v[0]["inputSchema"]["type"], "object");
    let out = redmark(&["tools".to_string()]);
    assert!(
        out.stdout.contains("book_room — Book a room") && out.stdout.contains("room_hint"),
        "{out:?}"
    );
}

fn book_over(server: &[&str]) {
    let out = redmark(&cat(&[
        &["call", "--trace", "--answer", "room.room_id=studio-b"],
        server,
        &BIG_ROOM,
    ]));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Booked Studio B"), "{out:?}");
    assert_eq!(Trace::parse(&out.stderr).sent.len(), 2, "{out:?}");
    // The same time again: Studio B is taken now, so the only big room free is booked.
    let out = redmark(&cat(&[
        &["call", "--answer", "room.room_id=studio-b"],
        server,
        &BIG_ROOM,
    ]));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Booked The Atrium"), "{out:?}");
    // And once more: both are taken, and what fits instead is offered (declined here).
    let out = redmark(&cat(&[
        &["call", "--decline", "instead"],
        server,
        &BIG_ROOM,
    ]));
    assert_eq!(out.code, 3, "declined: {out:?}");
    let out = redmark(&cat(&[&["tools", "--json"], server]));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("\"book_room\""), "{out:?}");
}

#[test]
fn over_stdio() {
    let data = TempDir::new("stdio");
    let cmd = format!("{} serve --data {}", bin().display(), data.path().display());
    book_over(&["--stdio", &cmd]);
}

#[test]
fn over_tcp() {
    let s = Server::start(&["--tcp", "127.0.0.1:0"]);
    let addr = s.addr("tcp");
    book_over(&["--tcp", &addr]);
}

#[test]
fn over_http() {
    let s = Server::start(&["--http", "127.0.0.1:0"]);
    let url = format!("http://{}/mcp", s.addr("http"));
    book_over(&["--url", &url]);
}
