//! Tests of the sans-IO dual-era session (`session.rs`).

use super::*;
use crate::legacy::QUESTION_WAIT;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"tasks":{}},"clientInfo":{"name":"t","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book_room","arguments":{"hour":9}}}"#;
const ASK: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"room":{"method":"elicitation/create","params":{"mode":"form","message":"Which?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"S1"}}"#;
const DONE: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[],"isError":false}}"#;

fn json(line: &[u8]) -> Value {
    serde_json::from_slice(line).unwrap()
}

/// The only action, which must be a `Send`: its line as JSON.
fn sent(actions: &[Action]) -> Value {
    match actions {
        [Action::Send { line, .. }] => json(line),
        other => panic!("expected one Send, got {other:?}"),
    }
}

/// The only action, which must be a `Core`: `(ticket, line as JSON)`.
fn to_core(actions: &[Action]) -> (u64, Value) {
    match actions {
        [Action::Core { ticket, line, .. }] => (*ticket, json(line)),
        other => panic!("expected one Core, got {other:?}"),
    }
}

/// A legacy session with one bridged call whose question `rm-0` is on the wire.
fn asking(now: Instant) -> Session {
    let mut s = Session::default();
    s.client_line(INIT.as_bytes(), now);
    s.client_line(INITIALIZED.as_bytes(), now);
    let (t, _) = to_core(&s.client_line(CALL.as_bytes(), now));
    let q = sent(&s.core_answer(t, ASK.as_bytes(), now));
    assert_eq!(q["method"], "elicitation/create");
    assert_eq!(q["id"], "rm-0");
    s
}

#[test]
fn initialize_says_resources_when_the_app_serves_them() {
    let now = Instant::now();
    let r = sent(&Session::serving(true).client_line(INIT.as_bytes(), now));
    assert_eq!(
        r["result"]["capabilities"],
        json!({"tools":{}, "resources":{}})
    );
    let r = sent(&Session::default().client_line(INIT.as_bytes(), now));
    assert_eq!(r["result"]["capabilities"], json!({"tools":{}}));
}

#[test]
fn initialize_negotiates_and_translates() {
    let now = Instant::now();
    let mut s = Session::default();
    let r = sent(&s.client_line(INIT.as_bytes(), now));
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(r["result"]["capabilities"], json!({"tools":{}}));
    let old = INIT.replace("2025-11-25", "2024-01-01");
    let r = sent(&Session::default().client_line(old.as_bytes(), now));
    assert_eq!(
        r["result"]["protocolVersion"], "2025-11-25",
        "counter-offer"
    );
    let again = sent(&s.client_line(INIT.as_bytes(), now));
    assert_eq!(again["error"]["code"], -32600);
    let ping = sent(&s.client_line(br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#, now));
    assert_eq!(ping, json!({"jsonrpc":"2.0","id":5,"result":{}}));
    let (t, req) =
        to_core(&s.client_line(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, now));
    assert_eq!(req["params"]["_meta"][KEY_VERSION], CORE_VERSION);
    assert_eq!(
        req["params"]["_meta"][KEY_CAPS],
        json!({"elicitation":{}}),
        "tasks dropped"
    );
    let back = sent(&s.core_answer(
        t,
        br#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[],"ttlMs":5}}"#,
        now,
    ));
    assert_eq!(back, json!({"jsonrpc":"2.0","id":2,"result":{"tools":[]}}));
}

#[test]
fn modern_requests_and_fresh_sessions_go_to_the_core_unchanged() {
    let now = Instant::now();
    let modern = br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let mut fresh = Session::default();
    for line in [&modern[..], CALL.as_bytes(), b"not json"] {
        let (t, _) = match &fresh.client_line(line, now)[..] {
            [Action::Core {
                ticket, line: l, ..
            }] if l == line => (*ticket, ()),
            other => panic!("{other:?}"),
        };
        let raw = br#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete"}}"#;
        assert_eq!(
            sent(&fresh.core_answer(t, raw, now))["result"]["resultType"],
            "complete"
        );
    }
    let mut s = asking(now);
    assert!(
        matches!(&s.client_line(modern, now)[..], [Action::Core { line, .. }] if line == modern)
    );
}

#[test]
fn answers_are_retried_with_the_sealed_state() {
    let now = Instant::now();
    let mut s = asking(now);
    let ans =
        br#"{"jsonrpc":"2.0","id":"rm-0","result":{"action":"accept","content":{"room_id":"b"}}}"#;
    let (t, retry) = to_core(&s.client_line(ans, now));
    assert_eq!(retry["id"], 1);
    assert_eq!(retry["params"]["requestState"], "S1");
    assert_eq!(
        retry["params"]["inputResponses"]["room"]["content"]["room_id"],
        "b"
    );
    assert_eq!(retry["params"]["arguments"], json!({"hour":9}));
    let done = sent(&s.core_answer(t, DONE.as_bytes(), now));
    assert_eq!(
        done,
        json!({"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}})
    );
    assert!(s.calls.is_empty());
    // The same answer again is a stray response now.
    assert!(s.client_line(ans, now).is_empty());
}

#[test]
fn stray_responses_are_ignored_and_errors_mean_cancel() {
    let now = Instant::now();
    let mut s = asking(now);
    for stray in [
        &br#"{"jsonrpc":"2.0","id":"rm-9","result":{"action":"accept"}}"#[..],
        br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        br#"{"jsonrpc":"2.0","id":0,"error":{"code":1,"message":"x"}}"#,
    ] {
        assert!(s.client_line(stray, now).is_empty());
    }
    let err = br#"{"jsonrpc":"2.0","id":"rm-0","error":{"code":-32600,"message":"no"}}"#;
    let (_, retry) = to_core(&s.client_line(err, now));
    assert_eq!(
        retry["params"]["inputResponses"]["room"],
        json!({"action":"cancel"})
    );
}

#[test]
fn an_unanswered_question_frees_its_call() {
    let now = Instant::now();
    let mut s = asking(now);
    assert_eq!(s.next_deadline(), Some(now + QUESTION_WAIT));
    assert!(s
        .tick(now + QUESTION_WAIT - Duration::from_secs(1))
        .is_empty());
    let out = s.tick(now + QUESTION_WAIT);
    let lines: Vec<Value> = out
        .iter()
        .map(|a| match a {
            Action::Send { line, .. } => json(line),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(lines[0]["method"], "notifications/cancelled");
    assert_eq!(lines[0]["params"]["requestId"], "rm-0");
    assert_eq!(lines[1]["id"], 1);
    assert_eq!(lines[1]["result"]["isError"], true);
    assert!(s.calls.is_empty() && s.next_deadline().is_none());
    let late = br#"{"jsonrpc":"2.0","id":"rm-0","result":{"action":"accept"}}"#;
    assert!(
        s.client_line(late, now).is_empty(),
        "a late answer does nothing"
    );
}

#[test]
fn questions_wait_for_initialized_but_not_forever() {
    let now = Instant::now();
    let mut s = Session::default();
    s.client_line(INIT.as_bytes(), now);
    let (t, _) = to_core(&s.client_line(CALL.as_bytes(), now));
    assert!(s.core_answer(t, ASK.as_bytes(), now).is_empty(), "held");
    let q = sent(&s.client_line(INITIALIZED.as_bytes(), now));
    assert_eq!(q["method"], "elicitation/create");
    let mut s = Session::default();
    s.client_line(INIT.as_bytes(), now);
    let (t, _) = to_core(&s.client_line(CALL.as_bytes(), now));
    s.core_answer(t, ASK.as_bytes(), now);
    let end = sent(&s.tick(now + QUESTION_WAIT));
    assert_eq!(end["result"]["isError"], true, "{end}");
}

/// A second request with the id of a call in flight is refused; the first call keeps its
/// question and gets its own answer.
#[test]
fn a_duplicate_id_in_flight_is_refused() {
    let now = Instant::now();
    let mut s = asking(now);
    let again = sent(&s.client_line(CALL.as_bytes(), now));
    assert_eq!(again["id"], 1);
    assert_eq!(again["error"]["code"], -32600, "{again}");
    assert_eq!(s.calls.len(), 1);
    let ping = sent(&s.client_line(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, now));
    assert_eq!(ping["error"]["code"], -32600, "{ping}");
    let ans = br#"{"jsonrpc":"2.0","id":"rm-0","result":{"action":"accept","content":{}}}"#;
    let (t, _) = to_core(&s.client_line(ans, now));
    assert_eq!(sent(&s.core_answer(t, DONE.as_bytes(), now))["id"], 1);
    // Once answered, the id may be used again.
    to_core(&s.client_line(CALL.as_bytes(), now));
}

/// A core that answers a request with nothing does not leave it (or its call) open.
#[test]
fn an_empty_core_answer_ends_the_request() {
    let now = Instant::now();
    let mut s = Session::default();
    s.client_line(INIT.as_bytes(), now);
    s.client_line(INITIALIZED.as_bytes(), now);
    let (t, _) = to_core(&s.client_line(CALL.as_bytes(), now));
    let end = sent(&s.core_answer(t, b"", now));
    assert_eq!(
        (end["id"].clone(), end["error"]["code"].clone()),
        (json!(1), json!(-32603))
    );
    assert_eq!(s.calls_in_flight(), 0);
    let (t, _) = to_core(&s.client_line(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, now));
    assert_eq!(sent(&s.core_answer(t, b"", now))["id"], 2);
}

#[test]
fn url_questions_get_an_elicitation_id() {
    let now = Instant::now();
    let mut s = Session::default();
    s.client_line(INIT.as_bytes(), now);
    s.client_line(INITIALIZED.as_bytes(), now);
    let (t, _) = to_core(&s.client_line(CALL.as_bytes(), now));
    let url = ASK.replace(
        r#""mode":"form""#,
        r#""mode":"url","url":"https://x.example/""#,
    );
    let q = sent(&s.core_answer(t, url.as_bytes(), now));
    assert_eq!(q["params"]["elicitationId"], q["id"], "{q}");
}

#[test]
fn a_cancelled_call_sends_nothing_more() {
    let now = Instant::now();
    let mut s = asking(now);
    let cancel =
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    let c = sent(&s.client_line(cancel, now));
    assert_eq!(c["params"]["requestId"], "rm-0");
    assert!(s.calls.is_empty());
    // Cancelled while at the core: its answer is dropped.
    let (t, _) = to_core(&s.client_line(CALL.as_bytes(), now));
    s.client_line(cancel, now);
    assert!(s.core_answer(t, ASK.as_bytes(), now).is_empty());
}

#[test]
fn calls_and_rounds_are_bounded() {
    let now = Instant::now();
    let mut s = Session::default();
    s.client_line(INIT.as_bytes(), now);
    s.client_line(INITIALIZED.as_bytes(), now);
    let call = |n: usize| CALL.replace(r#""id":1"#, &format!(r#""id":{}"#, 100 + n));
    for n in 0..MAX_CALLS_PER_SESSION {
        to_core(&s.client_line(call(n).as_bytes(), now));
    }
    let over = sent(&s.client_line(call(MAX_CALLS_PER_SESSION).as_bytes(), now));
    assert_eq!(over["error"]["code"], -32600);
    assert_eq!(
        over["error"]["message"],
        "Too many tool calls waiting for answers"
    );
    let mut s = asking(now);
    let ans = |n: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"rm-{n}","result":{{"action":"accept","content":{{}}}}}}"#
        )
    };
    for n in 0..MAX_ROUNDS - 1 {
        let (t, _) = to_core(&s.client_line(ans(n).as_bytes(), now));
        sent(&s.core_answer(t, ASK.as_bytes(), now));
    }
    let (t, _) = to_core(&s.client_line(ans(MAX_ROUNDS - 1).as_bytes(), now));
    let end = sent(&s.core_answer(t, ASK.as_bytes(), now));
    assert_eq!(end["result"]["isError"], true, "{end}");
}

#[test]
fn a_legacy_session_is_told_it_has_no_subscriptions() {
    let now = Instant::now();
    let mut s = Session::serving(true);
    s.client_line(INIT.as_bytes(), now);
    s.client_line(INITIALIZED.as_bytes(), now);
    for method in ["resources/subscribe", "subscriptions/listen"] {
        let msg = json!({"jsonrpc":"2.0","id":3,"method":method,"params":{"uri":"redmark://rooms/atrium/2099-12-21"}});
        let r = sent(&s.client_line(msg.to_string().as_bytes(), now));
        assert_eq!(r["error"]["code"], -32601, "{r}");
        let m = r["error"]["message"].as_str().unwrap();
        assert!(m.contains("2026-07-28 (subscriptions/listen)"), "{m}");
    }
}
