//! Operators and the trail: an operator cancels anyone's booking and reads its trail (made,
//! extended, ended, cancelled: by whom, when, how, where, and whether on an answer); a plain
//! user can do neither.

mod common;

use common::Client;
use redmark_core::{Access, Via};
use serde_json::{json, Value};

const OPERATOR: Access = Access {
    operator: true,
    via: Via::Http,
    instance: 4242,
};

fn call(c: &mut Client, tool: &str, args: Value) -> Value {
    let r = c.call(tool, args, json!({}), None, None);
    assert!(r["result"].is_object(), "{r}");
    r["result"].clone()
}

fn text(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap()
}

/// Alice books the atrium over stdio; her id.
fn alices_booking(c: &mut Client) -> String {
    c.access = Access {
        via: Via::Stdio,
        ..Access::USER
    };
    let args = json!({"day": "2026-09-24", "start": "9:00", "minutes": 60, "room_id": "atrium"});
    let r = call(c, "book_room", args);
    r["structuredContent"]["booking"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("booked: {r}"))
        .to_owned()
}

#[test]
fn a_plain_user_cannot_cancel_anothers_booking_nor_read_its_trail() {
    let mut c = Client::default();
    let id = alices_booking(&mut c);
    c.principal = b"bob".to_vec();
    c.access = Access::USER;
    let r = call(&mut c, "cancel_booking", json!({"booking_id": id}));
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(text(&r), "There is no booking 'bk_1' of yours to cancel.");
    let r = call(&mut c, "booking_trail", json!({"booking_id": id}));
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        text(&r),
        "A booking's trail is for the floor's operators only."
    );
    // Alice, the holder, is no operator either.
    c.principal = b"alice".to_vec();
    let r = call(&mut c, "booking_trail", json!({"booking_id": id}));
    assert_eq!(r["isError"], true, "{r}");
}

#[test]
fn an_operator_cancels_anothers_booking_and_the_trail_says_who_when_and_how() {
    let mut c = Client::default();
    let id = alices_booking(&mut c);
    let r = call(
        &mut c,
        "extend_booking",
        json!({"booking_id": id, "minutes": 30}),
    );
    assert_eq!(r["isError"], false, "{r}");

    c.principal = b"olga".to_vec();
    c.access = OPERATOR;
    c.now += 60;
    let r = call(&mut c, "cancel_booking", json!({"booking_id": id}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).contains("cancelled"), "{r}");

    // The room is free again: anyone books it.
    c.principal = b"bob".to_vec();
    c.access = Access::USER;
    let args = json!({"day": "2026-09-24", "start": "9:00", "minutes": 60, "room_id": "atrium"});
    assert_eq!(call(&mut c, "book_room", args)["isError"], false);

    c.principal = b"olga".to_vec();
    c.access = OPERATOR;
    let r = call(&mut c, "booking_trail", json!({"booking_id": id}));
    assert_eq!(r["isError"], false, "{r}");
    let alice = hex(b"alice");
    let olga = hex(b"olga");
    assert_eq!(
        text(&r),
        format!(
            "bk_1: made by {alice} at 2026-09-21T14:13:00+00:00 over stdio; extended by \
             {alice} at 2026-09-21T14:13:00+00:00 over stdio; cancelled by an operator {olga} \
             at 2026-09-21T14:14:00+00:00 over http on instance 4242."
        )
    );
}

/// The holder hash of `principal`, as the trail writes it.
fn hex(principal: &[u8]) -> String {
    redmark_core::booking::holder(principal)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn the_trail_tells_an_early_end_and_a_cancel_confirmed_in_a_form() {
    let mut c = Client::default();
    let id = alices_booking(&mut c);
    // 2026-09-24T09:20:00Z: Alice's meeting is under way; she ends it early.
    c.now = 1_790_241_600;
    let r = call(&mut c, "end_booking", json!({"booking_id": id}));
    assert_eq!(r["isError"], false, "{r}");

    c.principal = b"olga".to_vec();
    c.access = OPERATOR;
    let done = c.confirmed("cancel_booking", json!({"booking_id": id}));
    assert_eq!(done["result"]["isError"], false, "{done}");

    let r = call(&mut c, "booking_trail", json!({"booking_id": id}));
    let (alice, olga) = (hex(b"alice"), hex(b"olga"));
    let t = text(&r);
    assert!(t.starts_with(&format!("bk_1: made by {alice} at ")), "{t}");
    assert!(t.contains(&format!("; ended early by {alice} at ")), "{t}");
    assert!(
        t.contains(&format!(
            "; cancelled by an operator {olga} after answering a question at "
        )),
        "{t}"
    );
}
