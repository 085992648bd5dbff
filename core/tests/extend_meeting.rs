//! The `extend_meeting` example (a tool that is not ours) driven through the engine: the
//! ask, the accept (at most once), the decline, and what it refuses; every response checked
//! against the official wire types.

mod common;
#[path = "../examples/extend_meeting.rs"]
mod extend_meeting;

use common::{form_caps, meta, validate, VERSION};
use extend_meeting::{Panel, PanelTool};
use redmark_core::booking::TimeOfDay;
use redmark_core::engine::Config;
use redmark_core::limits::OUT;
use redmark_core::seal::{Key, KeyRing};
use redmark_core::typed::Tools;
use redmark_core::{Context, Engine, HttpHeaders};
use serde_json::{json, Value};

/// 10:00.
const TEN: TimeOfDay = TimeOfDay(600);

fn panel(next_starts: Option<TimeOfDay>) -> Engine<Panel> {
    let app = Panel {
        room: "room-4",
        title: "Design review",
        ends: TEN,
        next_starts,
    };
    let key = Key::new(1, &[7; 32]).unwrap();
    Engine::new(app, KeyRing::new(key), Config::default())
}

fn cx(n: u8) -> Context<'static> {
    Context {
        now: 1_000,
        principal: b"panel-user",
        entropy: [n; 8],
        access: redmark_core::Access::USER,
    }
}

/// `tools/call extend_meeting` with these arguments and, on a retry, the answer and state.
fn message(args: Value, caps: Value, answer: Option<(Value, &str)>) -> String {
    let mut params = json!({"name": "extend_meeting", "arguments": args, "_meta": meta(caps)});
    if let Some((responses, state)) = answer {
        params["inputResponses"] = responses;
        params["requestState"] = json!(state);
    }
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string()
}

fn call(engine: &mut Engine<Panel>, args: Value, answer: Option<(Value, &str)>) -> Value {
    let mut out = vec![0u8; OUT];
    let h = engine.handle(
        message(args, form_caps(), answer).as_bytes(),
        &cx(1),
        &mut out,
    );
    let v: Value = serde_json::from_slice(&out[..h.len]).unwrap();
    validate(Some("tools/call"), &v);
    v
}

fn text(v: &Value) -> &str {
    v["result"]["content"][0]["text"].as_str().unwrap()
}

fn confirm(yes: bool) -> Value {
    json!({"confirm": {"action": "accept", "content": {"confirm": yes}}})
}

/// Asks to extend by 30 minutes; returns the sealed state.
fn ask(engine: &mut Engine<Panel>) -> String {
    let v = call(engine, json!({"room": "room-4", "minutes": 30}), None);
    let r = &v["result"];
    assert_eq!(r["resultType"], "input_required", "{v}");
    let params = &r["inputRequests"]["confirm"]["params"];
    assert_eq!(params["message"], "Extend 'Design review' until 10:30?");
    assert_eq!(
        params["requestedSchema"]["properties"]["confirm"]["type"],
        "boolean"
    );
    assert_eq!(engine.app().ends, TEN, "nothing changes while asking");
    r["requestState"].as_str().unwrap().to_owned()
}

#[test]
fn it_asks_then_extends_once_on_accept() {
    let mut engine = panel(Some(TimeOfDay(660)));
    let state = ask(&mut engine);
    let args = json!({"room": "room-4", "minutes": 30});
    let v = call(&mut engine, args.clone(), Some((confirm(true), &state)));
    assert_eq!(v["result"]["isError"], false, "{v}");
    assert_eq!(text(&v), "Extended 'Design review' until 10:30.");
    assert_eq!(engine.app().ends, TimeOfDay(630));
    // The same retry again: the same answer, extended once.
    let again = call(&mut engine, args, Some((confirm(true), &state)));
    assert_eq!(text(&again), text(&v));
    assert_eq!(engine.app().ends, TimeOfDay(630));
}

#[test]
fn decline_and_no_leave_the_meeting_alone() {
    let mut engine = panel(None);
    let state = ask(&mut engine);
    let args = json!({"room": "room-4", "minutes": 30});
    let declined = json!({"confirm": {"action": "decline"}});
    for answer in [declined, confirm(false)] {
        let v = call(&mut engine, args.clone(), Some((answer, &state)));
        assert_eq!(
            text(&v),
            "Not extended: 'Design review' still ends at 10:00."
        );
        assert_eq!(engine.app().ends, TEN);
    }
}

#[test]
fn a_meeting_changed_while_asking_is_not_extended() {
    let mut engine = panel(None);
    let state = ask(&mut engine);
    engine.app_mut().ends = TimeOfDay(615); // someone extended it at the panel
    let args = json!({"room": "room-4", "minutes": 30});
    let v = call(&mut engine, args, Some((confirm(true), &state)));
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert!(text(&v).contains("it now ends at 10:15"), "{v}");
    assert_eq!(engine.app().ends, TimeOfDay(615));
}

#[test]
fn an_answer_without_the_state_or_for_other_arguments_does_not_count() {
    let mut engine = panel(None);
    let state = ask(&mut engine);
    // No state: the answer does not count, so the question is asked again.
    let mut out = vec![0u8; OUT];
    let msg = message(json!({"room": "room-4", "minutes": 30}), form_caps(), None)
        .replace(r#""arguments""#, r#""inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"arguments""#);
    let h = engine.handle(msg.as_bytes(), &cx(2), &mut out);
    let v: Value = serde_json::from_slice(&out[..h.len]).unwrap();
    assert_eq!(v["result"]["resultType"], "input_required", "{v}");
    // The state is bound to the arguments: 60 minutes was never confirmed.
    let v = call(
        &mut engine,
        json!({"room": "room-4", "minutes": 60}),
        Some((confirm(true), &state)),
    );
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert_eq!(engine.app().ends, TEN);
}

#[test]
fn it_refuses_what_it_cannot_do() {
    let mut engine = panel(Some(TimeOfDay(620)));
    let v = call(&mut engine, json!({"room": "room-4", "minutes": 30}), None);
    assert_eq!(
        text(&v),
        "'Design review' can run until 10:20 at most, not 10:30."
    );
    let v = call(&mut engine, json!({"room": "room-9", "minutes": 10}), None);
    assert_eq!(text(&v), "This is the panel of 'room-4', not of 'room-9'.");
    let v = call(&mut engine, json!({"room": "room-4", "minutes": 500}), None);
    assert_eq!(v["result"]["isError"], true, "{v}");
    // A client that cannot be asked: -32021, nothing extended.
    let mut out = vec![0u8; OUT];
    let msg = message(json!({"room": "room-4", "minutes": 10}), json!({}), None);
    let h = engine.handle(msg.as_bytes(), &cx(3), &mut out);
    let v: Value = serde_json::from_slice(&out[..h.len]).unwrap();
    assert_eq!(v["error"]["code"], -32021, "{v}");
    assert_eq!(engine.app().ends, TEN);
}

#[test]
fn over_http_the_room_travels_as_mcp_param_room() {
    assert!(PanelTool::TOOLS
        .iter()
        .all(|t| t.info.param_headers_match_schema()));
    let mut engine = panel(None);
    let msg = message(json!({"room": "room-4", "minutes": 10}), form_caps(), None);
    let mut send = |room: &str| {
        let params = [("Room", room)];
        let headers = HttpHeaders {
            version: Some(VERSION),
            method: Some("tools/call"),
            name: Some("extend_meeting"),
            params: &params,
        };
        let mut out = vec![0u8; OUT];
        let h = engine.handle_http(msg.as_bytes(), &cx(4), &headers, &mut out);
        let v: Value = serde_json::from_slice(&out[..h.len]).unwrap();
        (h.status, v)
    };
    let (status, v) = send("room-4");
    assert_eq!(
        (status, &v["result"]["resultType"]),
        (200, &json!("input_required"))
    );
    let (status, v) = send("room-9");
    assert_eq!((status, &v["error"]["code"]), (400, &json!(-32020)));
}
