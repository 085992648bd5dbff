//! `redmark call` against small scripted servers that misbehave: one-line shell scripts over
//! `--stdio`, a stdio server that asks over several rounds, and one-shot HTTP servers with
//! canned responses (event streams, error bodies, endless lines, requests of their own).

mod client_support;

use client_support::*;
use serde_json::Value;

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
