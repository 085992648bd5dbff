//! `redmark call` and `redmark tools`, non-interactive, against our server in-process and over
//! stdio, TCP and Streamable HTTP, and against small scripted servers that misbehave.
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
    // Zero rounds would ask nothing and then fail: a usage error, before anything is sent.
    let out = scripted(script, &["--max-rounds", "0", "--trace"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--max-rounds"), "{out:?}");
    assert!(!out.stderr.contains("→ "), "nothing is sent: {out:?}");
}

#[test]
fn a_silent_server_times_out() {
    let out = scripted("exec sleep 30", &["--timeout", "1"]);
    assert_eq!(out.code, 6, "{out:?}");
    assert!(out.stderr.contains("no response within"), "{out:?}");
}

/// A stdio server from a shell script file (so JSON can sit in single quotes).
fn script_server(dir: &TempDir, body: &str) -> String {
    let path = dir.path().join("server.sh");
    std::fs::write(&path, body).unwrap();
    format!("sh {}", path.display())
}

#[test]
fn several_rounds_send_only_the_latest_answers_and_state() {
    let dir = TempDir::new("rounds");
    let q = |key: &str, field: &str, schema: &str| {
        format!(
            r#"{{"{key}":{{"method":"elicitation/create","params":{{"message":"{key}?","requestedSchema":{{"type":"object","properties":{{"{field}":{schema}}},"required":["{field}"]}}}}}}}}"#
        )
    };
    let r1 = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"resultType":"input_required","inputRequests":{},"requestState":"s1"}}}}"#,
        q("q1", "x", r#"{"type":"string","enum":["a","b"]}"#)
    );
    let r2 = format!(
        r#"{{"jsonrpc":"2.0","id":2,"result":{{"resultType":"input_required","inputRequests":{},"requestState":"s2"}}}}"#,
        q("q2", "y", r#"{"type":"boolean"}"#)
    );
    let done = |id: u32, t: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete","content":[{{"type":"text","text":"{t}"}}]}}}}"#
        )
    };
    let script = format!(
        r#"read -r l; printf '%s\n' '{r1}'
read -r l
case "$l" in
  *'"inputResponses":{{"q1":{{"action":"accept","content":{{"x":"a"}}}}}},"requestState":"s1"'*) printf '%s\n' '{r2}';;
  *) printf '%s\n' '{bad2}'; exit;;
esac
read -r l
case "$l" in
  *'"inputResponses":{{"q2":{{"action":"accept","content":{{"y":true}}}}}},"requestState":"s2"'*) printf '%s\n' '{ok}';;
  *) printf '%s\n' '{bad3}';;
esac
"#,
        bad2 = done(2, "bad round 2"),
        ok = done(3, "three rounds"),
        bad3 = done(3, "bad round 3"),
    );
    let server = script_server(&dir, &script);
    let out = redmark(&cat(&[&[
        "call",
        "--stdio",
        &server,
        "--answer",
        "q1.x=a",
        "--answer",
        "q2.y=true",
        "t",
    ]]));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.trim(), "three rounds", "{out:?}");
}

/// What one POST carried: lower-cased header names with values, and the body.
type Seen = (Vec<(String, String)>, String);

/// A one-shot HTTP server: answers each connection with the next canned response and hands
/// back what each request carried (lower-cased header names, body).
fn http_server(
    canned: Vec<(u16, &'static str, String)>,
) -> (String, std::sync::mpsc::Receiver<Seen>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for (status, ctype, body) in canned {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            stream
                .set_read_timeout(Some(std::time::Duration::from_secs(10)))
                .unwrap();
            let mut r = BufReader::new(stream.try_clone().unwrap());
            let mut headers = Vec::new();
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            loop {
                line.clear();
                r.read_line(&mut line).unwrap();
                let l = line.trim_end();
                if l.is_empty() {
                    break;
                }
                if let Some((k, v)) = l.split_once(':') {
                    headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
                }
            }
            let len: usize = headers
                .iter()
                .find(|(k, _)| k == "content-length")
                .map_or(0, |(_, v)| v.parse().unwrap());
            let mut req = vec![0; len];
            r.read_exact(&mut req).unwrap();
            tx.send((headers, String::from_utf8(req).unwrap())).unwrap();
            let mut w = stream;
            let head = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            w.write_all(head.as_bytes()).unwrap();
            w.write_all(body.as_bytes()).unwrap();
        }
    });
    (url, rx)
}

#[test]
fn http_sends_the_protocol_headers_and_reads_event_streams() {
    let asked = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"room":{"method":"elicitation/create","params":{"mode":"form","message":"Which?","requestedSchema":{"type":"object","properties":{"room_id":{"type":"string","enum":["atrium","studio-b"]}},"required":["room_id"]}}}},"requestState":"st"}}"#;
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;
    let sse = format!("event: message\ndata: {progress}\n\n: a comment\ndata: {asked}\n\n");
    let done = r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"booked over http"}]}}"#;
    let (url, seen) = http_server(vec![
        (200, "text/event-stream", sse),
        (200, "application/json", done.to_owned()),
    ]);
    let out = redmark(&cat(&[&[
        "call",
        "--trace",
        "--url",
        &url,
        "--answer",
        "room.room_id=atrium",
        "réserver",
        "x=1",
    ]]));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.trim(), "booked over http", "{out:?}");
    assert!(
        out.stderr.contains("notifications/progress"),
        "the notification is traced: {out:?}"
    );
    let seen: Vec<_> = seen.try_iter().collect();
    assert_eq!(seen.len(), 2, "two POSTs");
    for (n, (headers, body)) in seen.into_iter().enumerate() {
        let h = |k: &str| {
            headers
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        assert_eq!(h("mcp-protocol-version"), "2026-07-28", "request {n}");
        assert_eq!(h("mcp-method"), "tools/call");
        assert_eq!(
            h("mcp-name"),
            "=?base64?csOpc2VydmVy?=",
            "non-ASCII names are base64-encoded"
        );
        assert!(
            h("accept").contains("application/json") && h("accept").contains("text/event-stream")
        );
        assert!(h("content-type").starts_with("application/json"));
        assert!(headers.iter().all(|(k, _)| k != "mcp-session-id"));
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["id"], n as u64 + 1);
    }
}

#[test]
fn http_error_bodies_are_read_and_explained() {
    let err = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"needs sampling","data":{"requiredCapabilities":{"sampling":{}}}}}"#;
    let (url, _seen) = http_server(vec![(400, "application/json", err.to_owned())]);
    let out = redmark(&cat(&[&["call", "--url", &url, "t"]]));
    assert_eq!(out.code, 5, "{out:?}");
    assert!(
        out.stderr.contains("-32021") && out.stderr.contains("sampling"),
        "{out:?}"
    );
    let (url, _seen) = http_server(vec![(404, "text/html", "<h1>nope</h1>".to_owned())]);
    let out = redmark(&cat(&[&["call", "--url", &url, "t"]]));
    assert_eq!(
        out.code, 6,
        "a non-MCP answer is a transport failure: {out:?}"
    );
    assert!(out.stderr.contains("HTTP 404"), "{out:?}");
    // An error naming another request is not this call's answer.
    let other = r#"{"jsonrpc":"2.0","id":999,"error":{"code":-32021,"message":"someone else's"}}"#;
    let (url, _seen) = http_server(vec![(400, "application/json", other.to_owned())]);
    let out = redmark(&cat(&[&["call", "--url", &url, "t"]]));
    assert_eq!(out.code, 6, "{out:?}");
    assert!(!out.stderr.contains("-32021 "), "{out:?}");
    assert!(
        out.stderr.contains("without a JSON-RPC response"),
        "{out:?}"
    );
    // An error without an id (the server could not read the request) is.
    let idless = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#;
    let (url, _seen) = http_server(vec![(400, "application/json", idless.to_owned())]);
    let out = redmark(&cat(&[&["call", "--url", &url, "t"]]));
    assert_eq!(out.code, 5, "{out:?}");
    assert!(out.stderr.contains("-32700"), "{out:?}");
}

#[test]
fn an_endless_line_fails_with_line_too_long() {
    // 17 MiB without a newline: more than the client's 16 MiB limit for one message.
    let script = r#"read -r l; head -c 17825792 /dev/zero | tr "\0" a; sleep 5"#;
    let out = scripted(script, &["--timeout", "50"]);
    assert_eq!(out.code, 6, "{out:?}");
    assert!(out.stderr.contains("line too long"), "{out:?}");
    let big = "a".repeat(17 * 1024 * 1024);
    let (url, _seen) = http_server(vec![(200, "application/json", big)]);
    let out = redmark(&cat(&[&["call", "--url", &url, "t"]]));
    assert_eq!(out.code, 6, "{out:?}");
    assert!(out.stderr.contains("line too long"), "{out:?}");
}

#[test]
fn a_server_initiated_request_is_a_protocol_error() {
    // A pre-2026 server pushes elicitation/create as its own request and waits: refused at once.
    let dir = TempDir::new("push");
    let push = r#"{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"Which?","requestedSchema":{"type":"object","properties":{}}}}"#;
    let server = script_server(
        &dir,
        &format!("read -r l; printf '%s\\n' '{push}'; sleep 30\n"),
    );
    let out = redmark(&cat(&[&[
        "call",
        "--timeout",
        "20",
        "--stdio",
        &server,
        "t",
    ]]));
    assert_eq!(out.code, 5, "{out:?}");
    assert!(
        out.stderr.contains("JSON-RPC request (elicitation/create)"),
        "{out:?}"
    );
}
