//! The form's tests: the schema it emits, the checks of an answer and the red mark.

use super::*;
use crate::wire::json::parse;

const ROOMS: &[Choice<'static>] = &[
    Choice {
        value: "atrium",
        title: &"The Atrium (24 seats)",
    },
    Choice {
        value: "studio-b",
        title: &"Studio B (12 seats)",
    },
];
const FIELDS: &[Field<'static>] = &[
    Field {
        name: "room_id",
        title: "Room",
        description: None,
        required: true,
        kind: FieldKind::Choice {
            options: ROOMS,
            default: None,
        },
    },
    Field {
        name: "attendees",
        title: "Attendees",
        description: Some("How many people"),
        required: false,
        kind: FieldKind::Integer {
            min: Some(1),
            max: Some(24),
            default: None,
        },
    },
    Field {
        name: "email",
        title: "Email",
        description: None,
        required: false,
        kind: FieldKind::Text {
            min_len: Some(3),
            max_len: Some(64),
            format: Some(TextFormat::Email),
            default: None,
        },
    },
];

fn form() -> Form<'static> {
    Form {
        message: &"Which room?",
        fields: FIELDS,
        mark: None,
    }
}

#[test]
fn emits_flat_schema() {
    let mut buf = [0u8; 1024];
    let mut w = Writer::new(&mut buf);
    form().write_params(&mut w);
    let n = w.finish().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&buf[..n]).unwrap();
    assert_eq!(v["mode"], "form");
    assert_eq!(
        v["requestedSchema"]["properties"]["room_id"]["oneOf"][1]["const"],
        "studio-b"
    );
    assert_eq!(
        v["requestedSchema"]["required"],
        serde_json::json!(["room_id"])
    );
}

#[test]
fn validates_content_and_says_why() {
    let check = |s: &'static str| {
        let v = parse(s.as_bytes()).unwrap();
        form()
            .validate(v)
            .map_err(|e| (e.field.name, e.reason, mark(&e)))
    };
    use Reason::*;
    assert!(check(r#"{"room_id":"studio-b","extra":[1]}"#).is_ok());
    assert!(check(r#"{"room_id":"atrium","email":"a@b.example"}"#).is_ok());
    let cases = [
        (
            r#"{"room_id":"moon"}"#,
            "room_id",
            NotOffered,
            "Room: 'moon' is not one of the options offered.",
        ),
        (r#"{}"#, "room_id", Missing, "Room: a value is required."),
        (
            r#"{"room_id":"atrium","attendees":25}"#,
            "attendees",
            AboveMaximum,
            "Attendees: 25 is more than the maximum, 24.",
        ),
        (
            r#"{"room_id":"atrium","attendees":0}"#,
            "attendees",
            BelowMinimum,
            "Attendees: 0 is less than the minimum, 1.",
        ),
        (
            r#"{"room_id":"atrium","attendees":"3"}"#,
            "attendees",
            WrongType,
            "Attendees: '3' is not a whole number.",
        ),
        (
            r#"{"room_id":"atrium","email":"a@b"}"#,
            "email",
            BadFormat,
            "Email: 'a@b' is not an email address.",
        ),
        (
            r#"{"room_id":"atrium","email":true}"#,
            "email",
            WrongType,
            "Email: true is not an email address.",
        ),
        (
            r#"{"room_id":"atrium","email":"ab"}"#,
            "email",
            TooShort,
            "Email: 'ab' is shorter than 3 characters.",
        ),
    ];
    for (content, field, reason, text) in cases {
        assert_eq!(
            check(content),
            Err((field, reason, text.to_string())),
            "{content}"
        );
    }
    let long = format!(
        r#"{{"room_id":"atrium","email":"{}@b.example"}}"#,
        "a".repeat(80)
    );
    let long: &'static str = Box::leak(long.into_boxed_str());
    let (_, reason, text) = check(long).unwrap_err();
    assert_eq!(reason, TooLong);
    assert!(
        text.contains(&format!("'{}…' is longer than 64", "a".repeat(64))),
        "{text}"
    );
}

fn mark(e: &Invalid<'_, '_>) -> String {
    format!("{e}")
}

#[test]
fn a_re_ask_carries_the_red_mark() {
    let content = parse(br#"{"room_id":"attendees","attendees":99}"#).unwrap();
    let bad = form().validate(content).unwrap_err();
    let marked = Form {
        mark: Some(bad),
        ..form()
    };
    let mut buf = [0u8; 1024];
    let mut w = Writer::new(&mut buf);
    marked.write_params(&mut w);
    let n = w.finish().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&buf[..n]).unwrap();
    assert_eq!(
        v["message"],
        "Room: 'attendees' is not one of the options offered. Which room?"
    );
    let props = &v["requestedSchema"]["properties"];
    assert_eq!(
        props["room_id"]["description"],
        "last answer: 'attendees' is not one of the options offered"
    );
    assert_eq!(props["attendees"]["description"], "How many people");
}
