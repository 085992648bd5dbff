//! The serde path (`core/examples/report_fault.rs`, `#[args(serde)]`) through the engine: the
//! derive's schema and checks, serde-json-core's read (escapes decoded into an owned string,
//! a serde default), and what it refuses; every response checked against the wire types.

mod common;
#[path = "../examples/report_fault.rs"]
mod report_fault;

use common::{form_caps, meta, validate};
use redmark_core::engine::Config;
use redmark_core::limits::OUT;
use redmark_core::prelude::*;
use redmark_core::seal::{Key, KeyRing};
use redmark_core::{Context, Engine};
use report_fault::{Caretaker, Fault, Report};
use serde_json::Value;

fn engine() -> Engine<Caretaker> {
    let key = Key::new(1, &[7; 32]).unwrap();
    Engine::new(Caretaker::default(), KeyRing::new(key), Config::default())
}

/// `tools/call report_fault` with `arguments` written out as raw JSON.
fn call(engine: &mut Engine<Caretaker>, arguments: &str) -> Value {
    let meta = meta(form_caps()).to_string();
    let msg = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"report_fault","arguments":{arguments},"_meta":{meta}}}}}"#
    );
    let cx = Context {
        now: 1_000,
        principal: b"caretaker",
        entropy: [1; 8],
        access: redmark_core::Access::USER,
    };
    let mut out = vec![0u8; OUT];
    let h = engine.handle(msg.as_bytes(), &cx, &mut out);
    let v: Value = serde_json::from_slice(&out[..h.len]).unwrap();
    validate(Some("tools/call"), &v);
    v
}

fn text(v: &Value) -> (&str, bool) {
    let r = &v["result"];
    (
        r["content"][0]["text"].as_str().unwrap(),
        r["isError"] == true,
    )
}

/// The same arguments read by the derive: the serde struct's schema and checks are these.
#[derive(Args)]
#[allow(dead_code)]
struct Twin<'a> {
    /// The room, as its sign spells it
    #[arg(max_len = 24)]
    room: &'a str,
    /// What is broken
    fault: Fault,
    /// Anything the caretaker should know
    #[arg(max_len = 80)]
    note: Option<&'a str>,
    /// How many people it stops from working
    #[arg(min = 1, max = 50)]
    people: Option<u8>,
}

#[test]
fn the_schema_and_checks_are_the_derives() {
    assert_eq!(Report::SCHEMA, Twin::SCHEMA);
    assert_eq!(format!("{:?}", Report::ARGS), format!("{:?}", Twin::ARGS));
    assert!(Report::SCHEMA.contains(r#""room":{"type":"string","maxLength":24,"#));
    // The room's 24 bytes are the scratch serde-json-core decodes escapes into.
    assert_eq!(Report::SCRATCH, 24);
}

#[test]
fn serde_reads_escapes_into_the_owned_string_and_fills_its_default() {
    let mut e = engine();
    let v = call(&mut e, r#"{"room":"Room \"Ada\"","fault":"heating"}"#);
    assert_eq!(
        text(&v),
        ("Reported in Room \"Ada\": heating (1; no note).", false)
    );
    let (room, fault, people) = e.app().last.clone().unwrap();
    assert_eq!(
        (room.as_str(), fault, people),
        ("Room \"Ada\"", Fault::Heating, 1)
    );

    let v = call(
        &mut e,
        r#"{"room":"Lovelace","fault":"other","note":"door sticks","people":12}"#,
    );
    assert_eq!(
        text(&v),
        ("Reported in Lovelace: other (12; door sticks).", false)
    );
}

#[test]
fn the_derives_checks_refuse_before_serde_reads() {
    let mut e = engine();
    let refused = [
        (
            r#"{"room":"Lovelace","fault":"heating","people":60}"#,
            "Invalid argument 'people': 60 is more than the maximum, 50.",
        ),
        (
            r#"{"room":"Lovelace","fault":"lava"}"#,
            "Invalid argument 'fault'",
        ),
        (
            r#"{"room":"Lovelace","falt":"heating"}"#,
            "Unknown argument 'falt'; did you mean 'fault'?",
        ),
        (
            r#"{"room":"a room whose name is far too long","fault":"other"}"#,
            "Invalid argument 'room'",
        ),
    ];
    for (args, message) in refused {
        let v = call(&mut e, args);
        let (t, is_error) = text(&v);
        assert!(is_error && t.starts_with(message), "{args}: {t}");
    }
    assert!(e.app().last.is_none(), "the tool never ran");
}

#[test]
fn what_serde_cannot_read_is_refused_as_the_derive_refuses_it() {
    let mut e = engine();
    // A duplicated argument (the derive's read refuses it too), and 24 characters that are
    // more than the room's 24 bytes.
    for args in [
        r#"{"room":"Lovelace","fault":"heating","fault":"other"}"#,
        r#"{"room":"Salle à manger château A","fault":"other"}"#,
    ] {
        let v = call(&mut e, args);
        assert_eq!(
            text(&v),
            ("Invalid arguments: see the tool's inputSchema.", true),
            "{args}"
        );
    }
    assert!(e.app().last.is_none(), "the tool never ran");
}

/// A field serde reads under another name: the schema and the checks use that name.
#[derive(Args, serde::Deserialize)]
#[args(serde)]
struct Renamed {
    /// What kind of fault
    #[serde(rename = "type")]
    #[arg(min = 1, max = 3)]
    kind: u8,
}

#[test]
fn a_serde_rename_is_the_arguments_name() {
    assert_eq!(
        Renamed::SCHEMA,
        r#"{"type":"object","properties":{"type":{"type":"integer","minimum":1,"maximum":3,"description":"What kind of fault"}},"required":["type"],"additionalProperties":false}"#
    );
    let read = |json: &'static str| {
        let sent = redmark_core::wire::json::parse(json.as_bytes()).unwrap();
        Renamed::check_and_read(Some(sent), &mut redmark_core::typed::Scratch::new(&mut []))
            .map(|r| r.kind)
            .ok()
    };
    assert_eq!(read(r#"{"type":2}"#), Some(2));
    assert_eq!(read(r#"{"kind":2}"#), None);
}
