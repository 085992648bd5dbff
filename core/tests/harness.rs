//! The check every other test runs on the engine's answers can fail: real answers pass it,
//! and the same answers with a member unknown or misspelt, of the wrong type, or missing are
//! rejected, at the top and deep inside.

mod common;

use common::{check, form_caps, Client, INFO};
use redmark_core::booking::{BookingApp, Floor, MemStore, Minute, Resolved, Zone, DEFAULT_FLOOR};
use redmark_core::engine::Config;
use redmark_core::seal::{Key, KeyRing};
use redmark_core::Engine;
use serde_json::{json, Value};

/// A zone whose clocks show every time twice, an hour apart: every booking asks which, a
/// question no argument stands in for, so a client that cannot be asked gets `-32021`.
struct Repeats;

impl Zone for Repeats {
    fn name(&self) -> &str {
        "Test/Repeats"
    }
    fn offset(&self, _: Minute) -> i32 {
        0
    }
    fn resolve(&self, wall: Minute) -> Resolved {
        Resolved::Twice(wall, wall + 60)
    }
}

/// A client of a floor in [`Repeats`].
fn repeating() -> Client {
    static REPEATS: Repeats = Repeats;
    let floor = Floor {
        zone: &REPEATS,
        ..DEFAULT_FLOOR
    };
    let keys = KeyRing::new(Key::new(1, &[0x42; 32]).unwrap());
    Client {
        engine: Engine::new(
            BookingApp::new(floor, MemStore::new(), INFO),
            keys,
            Config::default(),
        ),
        ..Client::default()
    }
}

fn caps(elicitation: bool) -> Value {
    if elicitation {
        form_caps()
    } else {
        json!({})
    }
}

/// Real answers of every kind the harness checks, each with the method it answers.
fn answers() -> Vec<(&'static str, &'static str, Value)> {
    let mut c = Client::default();
    let meta = common::meta(json!({}));
    let big = json!({"day": "2026-09-24", "hour": 9, "room_hint": "the big room"});
    let exact = json!({"day": "2026-09-24", "hour": 9, "room_id": "nook"});
    let mut old = meta.clone();
    old["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let (_, unsupported) = c.raw(
        json!({"jsonrpc": "2.0", "id": 99, "method": "server/discover", "params": {"_meta": old}})
            .to_string()
            .as_bytes(),
    );
    vec![
        (
            "discover",
            "server/discover",
            c.request("server/discover", json!({"_meta": meta})),
        ),
        (
            "tools",
            "tools/list",
            c.request("tools/list", json!({"_meta": meta})),
        ),
        (
            "booked",
            "tools/call",
            c.call("book_room", exact.clone(), caps(false), None, None),
        ),
        (
            "asks",
            "tools/call",
            c.call("book_room", big.clone(), caps(true), None, None),
        ),
        (
            "missing capability",
            "tools/call",
            repeating().call("book_room", exact, caps(false), None, None),
        ),
        (
            "stand-in",
            "tools/call",
            c.call("book_room", big, caps(false), None, None),
        ),
        (
            "unknown tool",
            "tools/call",
            c.call("no_such_tool", json!({}), caps(false), None, None),
        ),
        (
            "unsupported version",
            "server/discover",
            serde_json::from_str(&unsupported).unwrap(),
        ),
    ]
}

fn answer(name: &str) -> (&'static str, Value) {
    let (_, method, v) = answers().into_iter().find(|(n, ..)| *n == name).unwrap();
    (method, v)
}

/// `edit` applied to answer `name` must be rejected.
fn rejected(name: &str, why: &str, edit: impl FnOnce(&mut Value)) {
    let (method, mut v) = answer(name);
    assert_eq!(
        check(Some(method), &v),
        Ok(()),
        "{name} as the engine wrote it"
    );
    edit(&mut v);
    let verdict = check(Some(method), &v);
    assert!(verdict.is_err(), "{name}, {why}: accepted\n{v:#}");
    eprintln!("{name}, {why}: {}", verdict.unwrap_err());
}

fn remove(v: &mut Value, key: &str) {
    assert!(v.as_object_mut().unwrap().remove(key).is_some(), "{key}");
}

#[test]
fn real_answers_pass() {
    for (name, method, v) in answers() {
        assert_eq!(check(Some(method), &v), Ok(()), "{name}: {v:#}");
    }
    let (_, asks) = answer("asks");
    assert_eq!(asks["result"]["resultType"], "input_required");
    let (_, booked) = answer("booked");
    assert_eq!(booked["result"]["resultType"], "complete");
    let (_, no_caps) = answer("missing capability");
    assert_eq!(no_caps["error"]["code"], -32021);
    let (_, stand_in) = answer("stand-in");
    assert_eq!(stand_in["result"]["isError"], true);
    let (_, old) = answer("unsupported version");
    assert_eq!(old["error"]["code"], -32022);
}

#[test]
fn unknown_or_misspelt_members_are_rejected() {
    rejected("discover", "unknown member on the envelope", |v| {
        v["extra"] = json!(1)
    });
    rejected("discover", "ttlMs misspelt", |v| {
        let r = &mut v["result"];
        r["ttlMS"] = r["ttlMs"].take();
        remove(r, "ttlMs");
    });
    rejected("discover", "unknown capability", |v| {
        v["result"]["capabilities"]["tool"] = json!({})
    });
    rejected("tools", "a tool's title misspelt", |v| {
        v["result"]["tools"][0]["titel"] = json!("Book")
    });
    rejected("booked", "structuredContent misspelt", |v| {
        let r = &mut v["result"];
        r["structuredcontent"] = r["structuredContent"].take();
        remove(r, "structuredContent");
    });
    rejected("booked", "unknown member in a content block", |v| {
        v["result"]["content"][0]["txet"] = json!("hi")
    });
    rejected("asks", "inputRequests misspelt", |v| {
        let r = &mut v["result"];
        r["inputRequest"] = r["inputRequests"].take();
        remove(r, "inputRequests");
    });
    rejected("asks", "unknown member in the elicitation params", |v| {
        v["result"]["inputRequests"]["room"]["params"]["messages"] = json!("x")
    });
    rejected("asks", "oneOf misspelt in a form field", |v| {
        let field = &mut v["result"]["inputRequests"]["room"]["params"]["requestedSchema"]
            ["properties"]["room_id"];
        field["oneof"] = field["oneOf"].take();
        remove(field, "oneOf");
    });
    rejected("asks", "unknown member in a form field's choice", |v| {
        v["result"]["inputRequests"]["room"]["params"]["requestedSchema"]["properties"]["room_id"]
            ["oneOf"][0]["label"] = json!("x")
    });
    rejected("missing capability", "unknown member in the error", |v| {
        v["error"]["detail"] = json!("x")
    });
    rejected("unknown tool", "unknown member in the error", |v| {
        v["error"]["reason"] = json!("x")
    });
}

#[test]
fn wrong_types_are_rejected() {
    rejected("discover", "ttlMs as a string", |v| {
        v["result"]["ttlMs"] = json!("300000")
    });
    rejected("discover", "cacheScope not one of its values", |v| {
        v["result"]["cacheScope"] = json!("shared")
    });
    rejected("discover", "jsonrpc 1.0", |v| v["jsonrpc"] = json!("1.0"));
    rejected("discover", "id null", |v| v["id"] = Value::Null);
    rejected("discover", "resultType unknown", |v| {
        v["result"]["resultType"] = json!("done")
    });
    rejected("tools", "inputSchema not an object schema", |v| {
        v["result"]["tools"][0]["inputSchema"]["type"] = json!("array")
    });
    rejected("booked", "isError as a string", |v| {
        v["result"]["isError"] = json!("no")
    });
    rejected("booked", "content block of an unknown type", |v| {
        v["result"]["content"][0]["type"] = json!("txt")
    });
    rejected("asks", "requestState as a number", |v| {
        v["result"]["requestState"] = json!(7)
    });
    rejected("asks", "elicitation mode unknown", |v| {
        v["result"]["inputRequests"]["room"]["params"]["mode"] = json!("dialog")
    });
    rejected("asks", "a form field of an unknown type", |v| {
        v["result"]["inputRequests"]["room"]["params"]["requestedSchema"]["properties"]["room_id"]
            ["type"] = json!("room")
    });
    rejected("missing capability", "code as a string", |v| {
        v["error"]["code"] = json!("-32021")
    });
    rejected("unknown tool", "message as a number", |v| {
        v["error"]["message"] = json!(1)
    });
}

#[test]
fn missing_members_are_rejected() {
    rejected("discover", "no supportedVersions", |v| {
        remove(&mut v["result"], "supportedVersions")
    });
    rejected("discover", "no resultType", |v| {
        remove(&mut v["result"], "resultType")
    });
    rejected("tools", "a tool without inputSchema", |v| {
        remove(&mut v["result"]["tools"][0], "inputSchema")
    });
    rejected("booked", "no content", |v| {
        remove(&mut v["result"], "content")
    });
    rejected("booked", "no resultType", |v| {
        remove(&mut v["result"], "resultType")
    });
    rejected("asks", "neither inputRequests nor requestState", |v| {
        remove(&mut v["result"], "inputRequests");
        remove(&mut v["result"], "requestState");
    });
    rejected("asks", "an elicitation without its message", |v| {
        remove(
            &mut v["result"]["inputRequests"]["room"]["params"],
            "message",
        )
    });
    rejected("asks", "a form field's choice without its const", |v| {
        remove(
            &mut v["result"]["inputRequests"]["room"]["params"]["requestedSchema"]["properties"]
                ["room_id"]["oneOf"][0],
            "const",
        )
    });
    rejected("missing capability", "no requiredCapabilities", |v| {
        remove(&mut v["error"]["data"], "requiredCapabilities")
    });
    rejected("unsupported version", "no data", |v| {
        remove(&mut v["error"], "data")
    });
    rejected("unknown tool", "no message", |v| {
        remove(&mut v["error"], "message")
    });
    rejected("unknown tool", "no jsonrpc", |v| remove(v, "jsonrpc"));
}

#[test]
fn numbers_are_compared_by_value_only_where_the_type_is_a_float() {
    let note = |progress: Value| {
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "t", "progress": progress, "total": 3}})
    };
    for ok in [json!(1), json!(1.5), json!(0)] {
        assert_eq!(
            common::check_def("ProgressNotification", &note(ok.clone())),
            Ok(()),
            "{ok}"
        );
    }
    assert!(common::check_def("ProgressNotification", &note(json!("1"))).is_err());
    // An integer member stays an integer: 9.0 is no `hour`-like integer, nor is 2.0 an id.
    let (_, mut v) = answer("discover");
    v["id"] = json!(2.0);
    assert!(check(Some("server/discover"), &v).is_err());
}
