//! Dual-era serving over TCP with a hand-written 2025-11-25 client: `initialize`, then the seed
//! exchange with the question pushed as `elicitation/create` on the same connection; while it
//! waits, pings and 2026-07-28 requests are still answered and stray responses are ignored.

use std::time::Duration;

use redmark_tests::server::{meta, tool_call, Server, TempDir};
use serde_json::{json, Value};

fn initialize(caps: Value) -> Value {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",
        "capabilities":caps,"clientInfo":{"name":"hand","version":"1"}}})
}

fn book(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"book_room",
        "arguments":{"day":"2099-09-17","hour":9,"room_hint":"the big room"}}})
}

#[test]
fn legacy_client_over_tcp_books_through_a_pushed_question() {
    let data = TempDir::new("legacy-tcp");
    let s = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
    let mut c = s.tcp_client();
    let init = c.request(&initialize(json!({"elicitation":{}})));
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    assert!(init["result"]["serverInfo"]["name"].is_string());
    c.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let q = c.request(&book(1));
    assert_eq!(q["method"], "elicitation/create", "{q}");
    let qid = q["id"].clone();
    // While the question waits: a stray response is ignored, a ping and a 2026-07-28 request
    // are answered.
    c.send(&json!({"jsonrpc":"2.0","id":"rm-999","result":{"action":"accept","content":{"room_id":"atrium"}}}));
    let pong = c.request(&json!({"jsonrpc":"2.0","id":7,"method":"ping"}));
    assert_eq!(pong, json!({"jsonrpc":"2.0","id":7,"result":{}}));
    let modern = c.request(&tool_call(8, "list_rooms", json!({}), false));
    assert_eq!(modern["result"]["resultType"], "complete", "{modern}");
    c.send(&json!({"jsonrpc":"2.0","id":qid,"result":{"action":"accept","content":{"room_id":"studio-b"}}}));
    let done = c.recv();
    assert_eq!(done["id"], 1, "{done}");
    assert!(done["result"].get("resultType").is_none(), "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["booking"]["room_id"], "studio-b",
        "{done}"
    );
    // Answering the same question again does nothing: no second booking, no line.
    c.send(&json!({"jsonrpc":"2.0","id":qid,"result":{"action":"accept","content":{"room_id":"studio-b"}}}));
    assert!(c.try_recv_line(Duration::from_millis(300)).is_err());
    // tools/list in 2025-11-25 shape.
    let list = c.request(&json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
    assert!(list["result"]["tools"].is_array(), "{list}");
    assert!(list["result"].get("ttlMs").is_none() && list["result"].get("resultType").is_none());
}

#[test]
fn legacy_client_without_elicitation_is_told_room_id_and_modern_clients_are_unchanged() {
    let data = TempDir::new("legacy-tcp-noel");
    let s = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
    let mut modern = s.tcp_client();
    // A connection that never initialized keeps 2026-07-28 rules.
    let r = modern.request(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = modern.request(
        &json!({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"_meta":meta(json!({}))}}),
    );
    assert_eq!(
        r["error"]["code"], -32601,
        "initialize with 2026 _meta stays unknown: {r}"
    );
    let mut c = s.tcp_client();
    c.request(&initialize(json!({})));
    c.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let r = c.request(&book(1));
    assert_eq!(r["id"], 1, "{r}");
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("with room_id set to their pick"), "{text}");
    let again = c.request(&initialize(json!({})));
    assert_eq!(again["error"]["code"], -32600, "{again}");
}

/// A client that never answers: after the wait (shortened here through
/// `REDMARK_TEST_QUESTION_WAIT_MS`) the question is cancelled, the call ends with a tool error,
/// nothing is booked, and a late answer does nothing.
#[test]
fn an_unanswered_question_frees_the_call() {
    let data = TempDir::new("legacy-tcp-wait");
    let env = [("REDMARK_TEST_QUESTION_WAIT_MS", "300")];
    let s = Server::start_with(&["--tcp", "127.0.0.1:0"], data.path(), &env);
    let mut c = s.tcp_client();
    c.request(&initialize(json!({"elicitation":{}})));
    c.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let q = c.request(&book(1));
    assert_eq!(q["method"], "elicitation/create", "{q}");
    let cancel = c.recv();
    assert_eq!(cancel["method"], "notifications/cancelled", "{cancel}");
    assert_eq!(cancel["params"]["requestId"], q["id"]);
    let end = c.recv();
    assert_eq!(end["id"], 1, "{end}");
    assert_eq!(end["result"]["isError"], true, "{end}");
    c.send(&json!({"jsonrpc":"2.0","id":q["id"],"result":{"action":"accept","content":{"room_id":"studio-b"}}}));
    let rooms = c.request(
        &json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
        "name":"list_rooms","arguments":{"day":"2099-09-17","hour":9}}}),
    );
    assert_eq!(rooms["id"], 2, "the late answer got no line: {rooms}");
    let free = &rooms["result"]["structuredContent"]["rooms"];
    assert!(
        free.as_array()
            .is_some_and(|r| r.iter().all(|r| r["free"] == true)),
        "{rooms}"
    );
}
