//! The full `book_room` MRTR flow — accept, decline, cancel, tamper, missing capability — with a
//! real MCP client (the `rmcp` crate, speaking 2026-07-28: `server/discover`, no `initialize`,
//! `_meta` on every request) against the real `redmark serve` binary on stdio, TCP and HTTP.

use std::collections::BTreeMap;
use std::process::Stdio;

use redmark_tests::server::{redmark_bin, Server, TempDir, TEST_KEY};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    Implementation, InputRequiredResult, ProtocolVersion,
};
use rmcp::service::{serve_client_with_lifecycle, ClientLifecycleMode, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ErrorData, ServiceError};
use serde_json::{json, Value};

type Client = RunningService<RoleClient, ClientConfig>;

fn config(form: bool) -> ClientConfig {
    let caps = if form {
        json!({"elicitation": {"form": {}}})
    } else {
        json!({})
    };
    let caps: ClientCapabilities = serde_json::from_value(caps).expect("capabilities");
    ClientConfig::new(caps, Implementation::new("redmark-tests", "0"))
}

fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

async fn stdio_client(data: &TempDir, form: bool) -> Client {
    let mut cmd = tokio::process::Command::new(redmark_bin());
    cmd.arg("serve")
        .arg("--data")
        .arg(data.path())
        .env("REDMARK_KEY", TEST_KEY);
    let (proc, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn redmark");
    serve_client_with_lifecycle(config(form), proc, modern())
        .await
        .expect("discover over stdio")
}

async fn tcp_client(server: &Server, form: bool) -> Client {
    let sock = tokio::net::TcpStream::connect(server.tcp[0])
        .await
        .expect("connect");
    serve_client_with_lifecycle(config(form), sock, modern())
        .await
        .expect("discover over tcp")
}

async fn http_client(server: &Server, form: bool, token: Option<&str>) -> Client {
    let mut cfg =
        StreamableHttpClientTransportConfig::with_uri(format!("http://{}/mcp", server.http[0]));
    if let Some(t) = token {
        cfg = cfg.auth_header(t);
    }
    let transport = StreamableHttpClientTransport::from_config(cfg);
    serve_client_with_lifecycle(config(form), transport, modern())
        .await
        .expect("discover over http")
}

fn book(day: &str, hour: u8, hint: &str) -> CallToolRequestParams {
    let mut p = CallToolRequestParams::new("book_room");
    p.arguments = json!({"day": day, "hour": hour, "room_hint": hint})
        .as_object()
        .cloned();
    p
}

fn answer(
    params: &CallToolRequestParams,
    key: &str,
    response: Value,
    state: &str,
) -> CallToolRequestParams {
    let mut p = params.clone();
    p.input_responses = Some(BTreeMap::from([(key.to_string(), response)]));
    p.request_state = Some(state.to_string());
    p
}

async fn ask(c: &Client, p: &CallToolRequestParams) -> InputRequiredResult {
    match c.call_tool_once(p.clone()).await.expect("tools/call") {
        CallToolResponse::InputRequired(ir) => ir,
        other => panic!("expected input_required, got {other:?}"),
    }
}

async fn complete(c: &Client, p: &CallToolRequestParams) -> CallToolResult {
    match c.call_tool_once(p.clone()).await.expect("tools/call") {
        CallToolResponse::Complete(r) => r,
        other => panic!("expected a complete result, got {other:?}"),
    }
}

fn text(r: &CallToolResult) -> String {
    let v = serde_json::to_value(r).expect("serialize result");
    v["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn rpc_error(e: ServiceError) -> ErrorData {
    match e {
        ServiceError::McpError(e) => e,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// The booking id (`bk_N`) a result names.
fn booking_id(t: &str) -> String {
    let i = t
        .find("bk_")
        .unwrap_or_else(|| panic!("no booking id in {t:?}"));
    t[i..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// Accept, replay, decline, cancel, tamper, and cancel_booking's confirmation.
async fn flow(c: &Client) {
    let day = "2099-12-14";
    // Ask: "the big room" fits The Atrium and Studio B.
    let p = book(day, 9, "the big room");
    let ir = ask(c, &p).await;
    let state = ir.request_state.clone().expect("requestState");
    let reqs = serde_json::to_value(&ir.input_requests).expect("inputRequests");
    assert_eq!(reqs["room"]["method"], "elicitation/create", "{reqs}");
    let schema = &reqs["room"]["params"]["requestedSchema"]["properties"]["room_id"]["oneOf"];
    let offered: Vec<&str> = schema
        .as_array()
        .expect("oneOf")
        .iter()
        .filter_map(|o| o["const"].as_str())
        .collect();
    assert_eq!(offered, ["atrium", "studio-b"]);

    // Accept Studio B: booked.
    let pick = json!({"action": "accept", "content": {"room_id": "studio-b"}});
    let done = complete(c, &answer(&p, "room", pick.clone(), &state)).await;
    let t = text(&done);
    assert_ne!(done.is_error, Some(true), "{t}");
    assert!(t.contains("Studio B"), "{t}");
    let id = booking_id(&t);

    // The same answer again (a client retrying after a lost response): the same booking.
    let again = text(&complete(c, &answer(&p, "room", pick.clone(), &state)).await);
    assert_eq!(booking_id(&again), id, "{again}");

    // Tampered state: one character changed → invalid params, nothing booked.
    let mut bad = state.clone().into_bytes();
    let last = bad.len() - 3;
    bad[last] = if bad[last] == b'A' { b'B' } else { b'A' };
    let bad = String::from_utf8(bad).expect("ascii");
    let e = rpc_error(
        c.call_tool_once(answer(
            &book(day, 11, "the big room"),
            "room",
            pick.clone(),
            &bad,
        ))
        .await
        .unwrap_err(),
    );
    assert_eq!(e.code.0, -32602, "{e:?}");
    // The state is bound to its arguments too: replaying it onto another hour fails the same way.
    let e = rpc_error(
        c.call_tool_once(answer(&book(day, 11, "the big room"), "room", pick, &state))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code.0, -32602, "{e:?}");

    // Decline and cancel: nothing booked.
    for (hour, action) in [(10u8, "decline"), (12, "cancel")] {
        let p = book(day, hour, "the big room");
        let s = ask(c, &p).await.request_state.expect("requestState");
        let r = complete(c, &answer(&p, "room", json!({"action": action}), &s)).await;
        let t = text(&r);
        assert!(!t.contains("bk_"), "{action}: {t}");
        let mut list = CallToolRequestParams::new("list_rooms");
        list.arguments = json!({"day": day, "hour": hour}).as_object().cloned();
        let free = serde_json::to_value(complete(c, &list).await).expect("list");
        assert!(
            !free.to_string().contains("bk_"),
            "{action} left a booking: {free}"
        );
    }

    // cancel_booking asks to confirm, then cancels.
    let mut cancel = CallToolRequestParams::new("cancel_booking");
    cancel.arguments = json!({"booking_id": id}).as_object().cloned();
    let s = ask(c, &cancel).await.request_state.expect("requestState");
    let r = complete(
        c,
        &answer(
            &cancel,
            "confirm",
            json!({"action":"accept","content":{"confirm":true}}),
            &s,
        ),
    )
    .await;
    // The confirming call cancels it ("is cancelled"; only a replay says "was already").
    assert!(text(&r).contains("is cancelled"), "{}", text(&r));
    // The slot is free again: a fresh booking of Studio B at 9 succeeds with a new id.
    let mut exact = CallToolRequestParams::new("book_room");
    exact.arguments = json!({"day": day, "hour": 9, "room_id": "studio-b"})
        .as_object()
        .cloned();
    let t = text(&complete(c, &exact).await);
    assert_ne!(booking_id(&t), id, "{t}");
}

/// Without the elicitation capability the ambiguous call is answered with the candidates and
/// `room_id` to call again with (a tool error the model reads), and an unambiguous one books.
async fn missing_capability(c: &Client) {
    let r = complete(c, &book("2099-12-15", 9, "the big room")).await;
    let v = serde_json::to_value(&r).expect("serialize result");
    assert_eq!(v["isError"], true, "{v}");
    let t = text(&r);
    for said in ["- \"studio-b\": Studio B", "with room_id set to their pick"] {
        assert!(t.contains(said), "{said:?} not in {t}");
    }
    let t = text(&complete(c, &book("2099-12-15", 9, "the nook")).await);
    assert!(t.contains("bk_"), "{t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_book_room_mrtr() {
    let data = TempDir::new("mrtr-stdio");
    let c = stdio_client(&data, true).await;
    flow(&c).await;
    c.cancel().await.expect("close");
    let c = stdio_client(&data, false).await;
    missing_capability(&c).await;
    c.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_book_room_mrtr() {
    let data = TempDir::new("mrtr-tcp");
    let server = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
    let c = tcp_client(&server, true).await;
    flow(&c).await;
    let bare = tcp_client(&server, false).await;
    missing_capability(&bare).await;
    // A state minted on one connection is good on another (the protocol is stateless; the
    // principal is the local user on both).
    let p = book("2099-12-16", 9, "the big room");
    let s = ask(&c, &p).await.request_state.expect("requestState");
    let other = tcp_client(&server, true).await;
    let t = text(
        &complete(
            &other,
            &answer(
                &p,
                "room",
                json!({"action":"accept","content":{"room_id":"atrium"}}),
                &s,
            ),
        )
        .await,
    );
    assert!(t.contains("The Atrium") && t.contains("bk_"), "{t}");
    for c in [c, bare, other] {
        c.cancel().await.expect("close");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_book_room_mrtr() {
    let data = TempDir::new("mrtr-http");
    let server = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let c = http_client(&server, true, None).await;
    flow(&c).await;
    let bare = http_client(&server, false, None).await;
    missing_capability(&bare).await;
    for c in [c, bare] {
        c.cancel().await.expect("close");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_state_of_one_principal_fails_for_another() {
    let data = TempDir::new("mrtr-principals");
    let tokens = data.path().join("tokens.toml");
    std::fs::write(
        &tokens,
        "alice = \"alice-token-0123456789\"\nbob = \"bob-token-0123456789\"\n",
    )
    .expect("write tokens");
    let tokens = tokens.to_str().expect("utf-8 path");
    let server = Server::start(&["--http", "127.0.0.1:0", "--tokens", tokens], data.path());
    let alice = http_client(&server, true, Some("alice-token-0123456789")).await;
    let bob = http_client(&server, true, Some("bob-token-0123456789")).await;

    let p = book("2099-12-17", 9, "the big room");
    let s = ask(&alice, &p).await.request_state.expect("requestState");
    let pick = json!({"action":"accept","content":{"room_id":"studio-b"}});
    // Bob replays Alice's state with the same arguments and answer: refused.
    let e = rpc_error(
        bob.call_tool_once(answer(&p, "room", pick.clone(), &s))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code.0, -32602, "{e:?}");
    // Alice's own retry books.
    let t = text(&complete(&alice, &answer(&p, "room", pick, &s)).await);
    let id = booking_id(&t);
    // Bob cannot cancel Alice's booking (not even be asked to confirm).
    let mut cancel = CallToolRequestParams::new("cancel_booking");
    cancel.arguments = json!({"booking_id": id}).as_object().cloned();
    let r = complete(&bob, &cancel).await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    // Alice is asked; Bob cannot use Alice's confirmation state either.
    let s = ask(&alice, &cancel)
        .await
        .request_state
        .expect("requestState");
    let yes = json!({"action":"accept","content":{"confirm":true}});
    let e = rpc_error(
        bob.call_tool_once(answer(&cancel, "confirm", yes, &s))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code.0, -32602, "{e:?}");
    for c in [alice, bob] {
        c.cancel().await.expect("close");
    }
}
