//! `redmark call` and `redmark tools`, non-interactive, against our server in-process and over
//! stdio, TCP and Streamable HTTP, and against small scripted servers that misbehave.

mod client_support;

use client_support::*;
use serde_json::Value;

const BIG_ROOM: [&str; 4] = [
    "book_room",
    "day=2026-09-17",
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
    let out = redmark(&with(&["call", "--tcp", "127.0.0.1:1"], &["list_rooms"]));
    assert_eq!(out.code, 6, "transport error: {out:?}");
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
    assert_eq!(names, ["book_room", "cancel_booking", "list_rooms"]);
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
    // The same slot again: the room is taken now, a tool error.
    let out = redmark(&cat(&[
        &["call", "--answer", "room.room_id=studio-b"],
        server,
        &BIG_ROOM,
    ]));
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stdout.contains("already booked"), "{out:?}");
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
    book_over(&["--tcp", s.addr("tcp")]);
}

#[test]
fn over_http() {
    let s = Server::start(&["--http", "127.0.0.1:0"]);
    let url = format!("http://{}/mcp", s.addr("http"));
    book_over(&["--url", &url]);
}

// --- scripted servers: one line in, one line out, over --stdio ---------------------------------

fn scripted(script: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "call".to_string(),
        "--stdio".to_string(),
        format!("sh -c '{script}'"),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("t".into());
    redmark(&args)
}

#[test]
fn undeclared_sampling_request_is_a_protocol_error() {
    let out = scripted(
        r#"read -r l; printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"input_required\",\"inputRequests\":{\"s\":{\"method\":\"sampling/createMessage\",\"params\":{}}}}}""#,
        &[],
    );
    assert_eq!(out.code, 5, "{out:?}");
    assert!(out.stderr.contains("sampling/createMessage"), "{out:?}");
}

#[test]
fn request_state_with_escapes_is_echoed_unchanged() {
    // Round 1 sends the state a\u002fb (escaped); round 2 checks the raw bytes came back.
    let script = r#"read -r l; printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"input_required\",\"requestState\":\"a\\u002fb\"}}"; read -r l; case "$l" in *\"requestState\":\"a\\u002fb\"*) t=echoed;; *) t=mangled;; esac; printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"resultType\":\"complete\",\"content\":[{\"type\":\"text\",\"text\":\"$t\"}]}}""#;
    let out = scripted(script, &["--trace"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.trim(), "echoed", "{out:?}");
}

#[test]
fn rounds_are_bounded() {
    let script = r#"i=0; while read -r l; do i=$((i+1)); printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":$i,\"result\":{\"resultType\":\"input_required\",\"requestState\":\"s$i\"}}"; done"#;
    let out = scripted(script, &["--max-rounds", "3"]);
    assert_eq!(out.code, 5, "{out:?}");
    assert!(out.stderr.contains("after 3 rounds"), "{out:?}");
}

#[test]
fn a_silent_server_times_out() {
    let out = scripted("exec sleep 30", &["--timeout", "1"]);
    assert_eq!(out.code, 6, "{out:?}");
    assert!(out.stderr.contains("no response within"), "{out:?}");
}
