//! `redmark serve --http 127.0.0.1:0 --fixtures` end to end, over raw HTTP/1.1: the paths the
//! official conformance suite (scripts/conformance.sh) depends on, checked without Node so
//! `cargo test --workspace` covers them.

use redmark_tests::server::{meta, post_mcp, HttpResponse, Server, TempDir};
use serde_json::{json, Value};

fn caps() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}})
}

fn call(id: u64, name: &str, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": {}, "_meta": meta(caps())});
    for (k, v) in extra.as_object().expect("object") {
        params[k] = v.clone();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// The JSON-RPC messages of a response: one for `application/json`, each `data:` event for
/// `text/event-stream`.
fn messages(r: &HttpResponse) -> Vec<Value> {
    let ct = r.header("content-type").unwrap_or_default();
    if ct.starts_with("application/json") {
        return vec![r.json()];
    }
    assert!(ct.starts_with("text/event-stream"), "content-type {ct}");
    String::from_utf8_lossy(&r.body)
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).expect("event data is JSON"))
        .collect()
}

fn fixtures() -> (TempDir, Server) {
    let data = TempDir::new("conformance-fixtures");
    let server = Server::start(&["--http", "127.0.0.1:0", "--fixtures"], data.path());
    (data, server)
}

#[test]
fn progress_arrives_on_the_post_sse_stream_before_the_result() {
    let (_data, s) = fixtures();
    let mut msg = call(1, "test_tool_with_progress", json!({}));
    msg["params"]["_meta"]["progressToken"] = json!("progress-test-1");
    let r = post_mcp(s.http[0], &msg, &[]);
    assert_eq!(r.status, 200);
    let m = messages(&r);
    assert_eq!(m.len(), 4, "{m:?}");
    let progress: Vec<_> = m[..3]
        .iter()
        .map(|n| n["params"]["progress"].as_u64())
        .collect();
    assert_eq!(progress, [Some(0), Some(50), Some(100)]);
    assert!(m[..3]
        .iter()
        .all(|n| n["method"] == "notifications/progress"
            && n["params"]["progressToken"] == "progress-test-1"));
    assert_eq!(
        (m[3]["id"].as_u64(), m[3]["result"]["resultType"].as_str()),
        (Some(1), Some("complete"))
    );
    // Without a token: one plain JSON response.
    let r = post_mcp(
        s.http[0],
        &call(2, "test_tool_with_progress", json!({})),
        &[],
    );
    assert_eq!(messages(&r).len(), 1);
    assert!(r
        .header("content-type")
        .unwrap_or_default()
        .starts_with("application/json"));
}

#[test]
fn elicitation_round_trip_and_tampered_state_over_http() {
    let (_data, s) = fixtures();
    let name = "test_input_required_result_elicitation";
    let r1 = post_mcp(s.http[0], &call(1, name, json!({})), &[]).json();
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    assert_eq!(
        r1["result"]["inputRequests"]["user_name"]["method"],
        "elicitation/create"
    );
    let state = r1["result"]["requestState"]
        .as_str()
        .expect("requestState")
        .to_owned();
    let answer = json!({"user_name": {"action": "accept", "content": {"name": "Alice"}}});
    let r2 = post_mcp(
        s.http[0],
        &call(
            2,
            name,
            json!({"inputResponses": answer, "requestState": state}),
        ),
        &[],
    );
    assert_eq!(r2.json()["result"]["content"][0]["text"], "Hello, Alice!");

    let name = "test_input_required_result_tampered_state";
    let r1 = post_mcp(s.http[0], &call(3, name, json!({})), &[]).json();
    let tampered = format!(
        "{}-TAMPERED",
        r1["result"]["requestState"].as_str().expect("state")
    );
    let answer = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    let r = post_mcp(
        s.http[0],
        &call(
            4,
            name,
            json!({"inputResponses": answer, "requestState": tampered}),
        ),
        &[],
    );
    assert_eq!(
        (r.status, r.json()["error"]["code"].as_i64()),
        (400, Some(-32602))
    );
}

#[test]
fn missing_capability_and_missing_resource_are_400() {
    let (_data, s) = fixtures();
    let mut msg = call(1, "test_missing_capability", json!({}));
    msg["params"]["_meta"] = meta(json!({}));
    let r = post_mcp(s.http[0], &msg, &[]);
    let body = r.json();
    assert_eq!(
        (r.status, body["error"]["code"].as_i64()),
        (400, Some(-32021)),
        "{body}"
    );
    assert_eq!(
        body["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );

    let uri = "test://nonexistent-resource-for-conformance-testing";
    let msg = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": uri, "_meta": meta(json!({}))}});
    let r = post_mcp(s.http[0], &msg, &[]);
    let body = r.json();
    assert_eq!(
        (r.status, body["error"]["code"].as_i64()),
        (400, Some(-32602)),
        "{body}"
    );
    assert_eq!(body["error"]["data"]["uri"], uri);
}

#[test]
fn prompts_resources_and_completion_are_served_and_advertised() {
    let (_data, s) = fixtures();
    let rpc = |id: u64, method: &str, mut params: Value| {
        params["_meta"] = meta(caps());
        post_mcp(
            s.http[0],
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            &[],
        )
        .json()
    };
    let d = rpc(1, "server/discover", json!({}));
    for k in ["tools", "prompts", "resources", "completions"] {
        assert!(d["result"]["capabilities"][k].is_object(), "{d}");
    }
    let p = rpc(
        2,
        "prompts/get",
        json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}),
    );
    assert_eq!(
        p["result"]["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='a', arg2='b'"
    );
    let r = rpc(
        3,
        "resources/read",
        json!({"uri": "test://template/123/data"}),
    );
    assert!(
        r["result"]["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("123")),
        "{r}"
    );
    assert!(r["result"]["ttlMs"].is_u64() && r["result"]["cacheScope"].is_string());
    let c = rpc(
        4,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": "pa"}}),
    );
    assert_eq!(
        c["result"]["completion"]["values"],
        json!(["paris", "park", "party"])
    );
    // A matching Mcp-Param-Region header is always accepted.
    let msg = call(
        5,
        "test_custom_header",
        json!({"arguments": {"region": "Hello"}}),
    );
    let r = post_mcp(
        s.http[0],
        &msg,
        &[("Mcp-Param-Region", "=?base64?SGVsbG8=?=")],
    );
    assert_eq!(r.json()["result"]["content"][0]["text"], "Region: Hello");
}

#[test]
fn foreign_host_is_refused() {
    let (_data, s) = fixtures();
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta(json!({}))}});
    let r = post_mcp(
        s.http[0],
        &msg,
        &[
            ("Host", "evil.example.com"),
            ("Origin", "http://evil.example.com"),
        ],
    );
    assert_eq!(r.status, 403);
    let local = format!("localhost:{}", s.http[0].port());
    let r = post_mcp(s.http[0], &msg, &[("Host", local.as_str())]);
    assert_eq!(r.status, 200);
}
