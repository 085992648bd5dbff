//! 2025-11-25 sessions over Streamable HTTP, by hand: `initialize` opens a session
//! (`Mcp-Session-Id`), requests in it are answered in 2025-11-25 shapes with HTTP 200, an
//! unknown session gets 404, a 2025-11-25 request without a session 400, `DELETE` ends a
//! session, `GET` on one gets 405. (The pushed question on the POST's SSE stream is shown with
//! the Python SDK in `legacy_python.rs`.)

use std::net::SocketAddr;

use redmark_tests::server::{http, meta, post_mcp, HttpResponse, Server, TempDir};
use serde_json::{json, Value};

/// POSTs `msg` the way a 2025-11-25 client does (no Mcp-Method; version and session if given).
fn post(addr: SocketAddr, msg: &Value, session: Option<&str>) -> HttpResponse {
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    if let Some(s) = session {
        h.push(("Mcp-Session-Id", s));
        h.push(("MCP-Protocol-Version", "2025-11-25"));
    }
    http(
        addr,
        "POST",
        "/mcp",
        &h,
        &serde_json::to_vec(msg).expect("json"),
    )
}

fn initialize(caps: Value) -> Value {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",
        "capabilities":caps,"clientInfo":{"name":"hand","version":"1"}}})
}

#[test]
fn legacy_http_sessions() {
    let data = TempDir::new("legacy-http");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let addr = s.http[0];
    let init = post(addr, &initialize(json!({})), None);
    assert_eq!(init.status, 200);
    assert_eq!(init.json()["result"]["protocolVersion"], "2025-11-25");
    let sid = init
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    assert_eq!(sid.len(), 32, "{sid}");
    let note = post(
        addr,
        &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        Some(&sid),
    );
    assert_eq!(note.status, 202);
    let list = post(
        addr,
        &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
        Some(&sid),
    );
    assert_eq!(list.status, 200);
    let list = list.json();
    assert!(
        list["result"]["tools"].is_array() && list["result"].get("resultType").is_none(),
        "{list}"
    );
    let ping = post(
        addr,
        &json!({"jsonrpc":"2.0","id":2,"method":"ping"}),
        Some(&sid),
    )
    .json();
    assert_eq!(ping["result"], json!({}));
    // No elicitation declared: the candidates and room_id, a tool error the model reads.
    let call = json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"book_room",
        "arguments":{"day":"2099-09-17","hour":9,"room_hint":"the big room"}}});
    let r = post(addr, &call, Some(&sid));
    assert_eq!(r.status, 200);
    let result = &r.json()["result"];
    assert_eq!(result["isError"], true, "{:?}", r.json());
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("with room_id set to their pick"), "{text}");
    assert!(
        result.get("resultType").is_none(),
        "2025-11-25 shape: {result}"
    );
    // A stray response is accepted and ignored.
    let stray = json!({"jsonrpc":"2.0","id":"rm-5","result":{"action":"accept"}});
    assert_eq!(post(addr, &stray, Some(&sid)).status, 202);
    let get = http(
        addr,
        "GET",
        "/mcp",
        &[("Mcp-Session-Id", &sid), ("Accept", "text/event-stream")],
        b"",
    );
    assert_eq!(get.status, 405);
    assert_eq!(
        post(addr, &call, Some("0123456789abcdef0123456789abcdef")).status,
        404
    );
    assert_eq!(post(addr, &call, Some("")).status, 404);
    let h = [
        ("Content-Type", "application/json"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let no_session = http(
        addr,
        "POST",
        "/mcp",
        &h,
        &serde_json::to_vec(&call).expect("json"),
    );
    assert_eq!(no_session.status, 400);
    let del = http(addr, "DELETE", "/mcp", &[("Mcp-Session-Id", &sid)], b"");
    assert_eq!(del.status, 200);
    assert_eq!(
        post(addr, &call, Some(&sid)).status,
        404,
        "a deleted session is gone"
    );
    let del = http(addr, "DELETE", "/mcp", &[("Mcp-Session-Id", &sid)], b"");
    assert_eq!(del.status, 404);
    // A 2026-07-28 request is served statelessly whatever session header it carries.
    let modern =
        json!({"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":meta(json!({}))}});
    let r = post_mcp(addr, &modern, &[("Mcp-Session-Id", "not-a-session")]);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["result"]["resultType"], "complete");
    // Without a session header, DELETE and GET keep the 2026-07-28 answer.
    assert_eq!(http(addr, "DELETE", "/mcp", &[], b"").status, 405);
}

/// The pushed question rides the `tools/call` POST's SSE stream; unanswered (the wait is
/// shortened through `REDMARK_TEST_QUESTION_WAIT_MS`), the stream carries its cancellation and
/// the call's tool error, then ends.
#[test]
fn legacy_http_question_on_the_post_stream_times_out() {
    let data = TempDir::new("legacy-http-wait");
    let env = [("REDMARK_TEST_QUESTION_WAIT_MS", "300")];
    let s = Server::start_with(&["--http", "127.0.0.1:0"], data.path(), &env);
    let addr = s.http[0];
    let init = post(addr, &initialize(json!({"elicitation":{}})), None);
    let sid = init.header("mcp-session-id").expect("session").to_owned();
    post(
        addr,
        &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        Some(&sid),
    );
    let call = json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"book_room",
        "arguments":{"day":"2099-09-17","hour":9,"room_hint":"the big room"}}});
    let r = post(addr, &call, Some(&sid));
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    let events: Vec<Value> = String::from_utf8_lossy(&r.body)
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).expect("json event"))
        .collect();
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[0]["method"], "elicitation/create");
    assert_eq!(events[1]["method"], "notifications/cancelled");
    assert_eq!(events[2]["id"], 3);
    assert_eq!(events[2]["result"]["isError"], true);
}
