//! The seed lesson's exchange, message by message, and every way a retry can go wrong.

mod common;

use base64ct::{Base64UrlUnpadded as B64, Encoding as _};
use common::{accept, form_caps, Client};
use redmark_core::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
use redmark_core::engine::Config;
use redmark_core::seal::{Key, KeyRing};
use redmark_core::Engine;
use serde_json::{json, Value};

fn big_room() -> Value {
    json!({"day": "2026-09-24", "hour": 9, "room_hint": "the big room"})
}

fn state_of(resp: &Value) -> String {
    assert_eq!(resp["result"]["resultType"], "input_required", "{resp}");
    resp["result"]["requestState"]
        .as_str()
        .expect("requestState is a top-level string")
        .to_owned()
}

/// The nonce a state carries (bytes 6..14 of the token: ver, kid, expires, nonce, …).
fn nonce(state: &str) -> Vec<u8> {
    decode(state)[6..14].to_vec()
}

/// A token's bytes.
fn decode(state: &str) -> Vec<u8> {
    let mut buf = [0u8; 256];
    B64::decode(state, &mut buf).unwrap().to_vec()
}

fn ask_big_room(c: &mut Client) -> String {
    state_of(&c.call("book_room", big_room(), form_caps(), None, None))
}

fn bookings(c: &Client) -> usize {
    c.engine.app().store().bookings().len()
}

fn assert_rejected(resp: &Value) {
    assert_eq!(resp["error"]["code"], -32602, "{resp}");
    assert_eq!(
        resp["error"]["message"], "Invalid requestState",
        "one message for every failure"
    );
}

#[test]
fn the_seed_exchange() {
    let mut c = Client::default();
    // Round 1: the server cannot tell which room, so it asks — a successful result.
    let r1 = c.call(
        "book_room",
        big_room(),
        json!({"elicitation": {}}),
        None,
        None,
    );
    let result = &r1["result"];
    assert_eq!(result["resultType"], "input_required");
    let req = &result["inputRequests"]["room"];
    assert_eq!(req["method"], "elicitation/create");
    assert_eq!(req["params"]["mode"], "form");
    let prop = &req["params"]["requestedSchema"]["properties"]["room_id"];
    let options: Vec<_> = prop["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["const"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["atrium", "studio-b"]);
    assert!(prop["oneOf"][0]["title"]
        .as_str()
        .unwrap()
        .contains("24 seats"));
    assert!(
        result["inputRequests"].get("requestState").is_none(),
        "requestState is a sibling, not nested"
    );
    let state = state_of(&r1);
    assert!(state.len() <= 96, "token is {} chars", state.len());
    assert_eq!(bookings(&c), 0, "nothing irreversible before the answer");

    // Round 2: new id, same arguments, the answer and the echoed state.
    let r2 = c.call(
        "book_room",
        big_room(),
        form_caps(),
        Some(accept("room", json!({"room_id": "studio-b"}))),
        Some(&state),
    );
    assert_eq!(r2["result"]["resultType"], "complete");
    assert_eq!(r2["result"]["isError"], false);
    assert_eq!(
        r2["result"]["structuredContent"]["booking"]["room_id"],
        "studio-b"
    );
    assert!(r2["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("Studio B"));
    assert_eq!(bookings(&c), 1);
}

#[test]
fn asks_only_when_it_must() {
    let mut c = Client::default();
    for (args, room) in [
        (
            json!({"day": "2026-09-24", "hour": 9, "room_id": "studio-b"}),
            "studio-b",
        ),
        (
            json!({"day": "2026-09-24", "hour": 10, "room_hint": "the atrium"}),
            "atrium",
        ),
        // "the big room" for 20 people: only The Atrium fits, so there is nothing to ask.
        (
            json!({"day": "2026-09-24", "hour": 11, "room_hint": "the big room", "attendees": 20}),
            "atrium",
        ),
    ] {
        // No elicitation capability declared, and none needed.
        let r = c.call("book_room", args, json!({}), None, None);
        assert_eq!(
            r["result"]["structuredContent"]["booking"]["room_id"], room,
            "{r}"
        );
    }
}

#[test]
fn unknown_hint_offers_every_room_that_fits() {
    let mut c = Client::default();
    let args = json!({"day": "2026-09-24", "hour": 9, "room_hint": "the ballroom", "attendees": 5});
    let r = c.call("book_room", args, form_caps(), None, None);
    let schema = &r["result"]["inputRequests"]["room"]["params"];
    assert!(schema["message"]
        .as_str()
        .unwrap()
        .contains("No room is called"));
    assert_eq!(
        schema["requestedSchema"]["properties"]["room_id"]["oneOf"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn decline_and_cancel_book_nothing() {
    for (action, reason) in [("decline", "declined"), ("cancel", "cancelled")] {
        let mut c = Client::default();
        let state = ask_big_room(&mut c);
        let r = c.call(
            "book_room",
            big_room(),
            form_caps(),
            Some(json!({"room": {"action": action}})),
            Some(&state),
        );
        assert_eq!(r["result"]["resultType"], "complete");
        assert_eq!(
            r["result"]["structuredContent"],
            json!({"booked": false, "reason": reason})
        );
        assert_eq!(bookings(&c), 0);
    }
}

#[test]
fn missing_invalid_or_unbound_answers_are_asked_again() {
    let mut c = Client::default();
    let state = ask_big_room(&mut c);
    let again = [
        (
            Some(accept("wrong_key", json!({"room_id": "atrium"}))),
            Some(state.as_str()),
        ),
        (
            Some(accept("room", json!({"room_id": "nook"}))),
            Some(&state),
        ), // not offered
        (Some(accept("room", json!({"room_id": 7}))), Some(&state)),
        (Some(accept("room", json!({}))), Some(&state)),
        (Some(json!({"room": {"action": "maybe"}})), Some(&state)),
        (Some(json!({"room": {"action": "accept"}})), Some(&state)),
        // An answer without the state it was asked with does not count.
        (Some(accept("room", json!({"room_id": "atrium"}))), None),
    ];
    for (responses, st) in again {
        let r = c.call("book_room", big_room(), form_caps(), responses.clone(), st);
        let fresh = state_of(&r);
        // Asked again within one operation, the state keeps the operation's nonce; an
        // answer that came without a state starts a new operation.
        assert_eq!(
            nonce(&fresh) == nonce(&state),
            st.is_some(),
            "{responses:?}"
        );
        assert!(
            r["result"]["inputRequests"]["room"].is_object(),
            "{responses:?}"
        );
    }
    assert_eq!(bookings(&c), 0);
}

#[test]
fn unknown_keys_and_fields_are_ignored() {
    let mut c = Client::default();
    let state = ask_big_room(&mut c);
    let responses = json!({
        "room": {"action": "accept", "content": {"room_id": "atrium", "colour": "red"}, "_meta": {}},
        "unknown_extra_key": {"action": "accept", "content": {"x": 1}},
    });
    let r = c.call(
        "book_room",
        big_room(),
        form_caps(),
        Some(responses),
        Some(&state),
    );
    assert_eq!(
        r["result"]["structuredContent"]["booking"]["room_id"],
        "atrium"
    );
}

#[test]
fn malformed_input_responses_are_protocol_errors() {
    let mut c = Client::default();
    for bad in [
        json!(null),
        json!([]),
        json!("x"),
        json!({"room": 12345}),
        json!({"room": null}),
    ] {
        let r = c.call("book_room", big_room(), form_caps(), Some(bad), None);
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
}

/// A client that cannot be asked (no form elicitation) is told the candidate rooms, to ask its
/// user, and to call again with `room_id` and the other arguments as they were: an `isError`
/// result, nothing booked; the call with `room_id` books the room picked.
#[test]
fn a_client_that_cannot_be_asked_is_told_the_rooms_and_room_id() {
    let mut c = Client::default();
    for caps in [
        json!({}),
        json!({"elicitation": {"url": {}}}),
        json!({"sampling": {}}),
    ] {
        let r = c.call("book_room", big_room(), caps, None, None);
        let result = &r["result"];
        assert_eq!(result["resultType"], "complete", "{r}");
        assert_eq!(result["isError"], true, "{r}");
        assert!(result.get("structuredContent").is_none(), "{r}");
        let text = result["content"][0]["text"].as_str().unwrap();
        for said in [
            "'the big room' matches more than one room",
            "- \"atrium\": The Atrium (24 seats)",
            "- \"studio-b\": Studio B (12 seats)",
            "Ask the user which one they mean (do not choose for them)",
            "call book_room again with room_id set to their pick",
            "and the other arguments as before (day, hour, room_hint).",
        ] {
            assert!(text.contains(said), "{said:?} not in:\n{text}");
        }
    }
    // The other arguments are named, their values not echoed (the model has them).
    let mut titled = big_room();
    titled["title"] = json!("Quarterly planning");
    let r = c.call("book_room", titled, json!({}), None, None);
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.ends_with("as before (day, hour, room_hint, title)."),
        "{text}"
    );
    assert!(!text.contains("Quarterly"), "{text}");
    assert_eq!(bookings(&c), 0);
    let mut again = big_room();
    again["room_id"] = json!("studio-b");
    let r = c.call("book_room", again, json!({}), None, None);
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert!(r["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("Booked Studio B"));
    assert_eq!(bookings(&c), 1);
}

/// A client that cannot be asked cancels its own booking without the confirmation; one that
/// can is still asked.
#[test]
fn a_client_that_cannot_be_asked_cancels_without_confirming() {
    let mut c = Client::default();
    let mut args = big_room();
    args["room_id"] = json!("atrium");
    let r = c.call("book_room", args, json!({}), None, None);
    assert_eq!(r["result"]["isError"], false, "{r}");
    let id = json!({"booking_id": "bk_1"});
    let asked = c.call("cancel_booking", id.clone(), form_caps(), None, None);
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let r = c.call("cancel_booking", id, json!({}), None, None);
    assert_eq!(r["result"]["isError"], false, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.ends_with(") is cancelled."), "{text}");
}

#[test]
fn every_tamper_and_replay_class_is_rejected_alike() {
    let mut c = Client::default();
    let state = ask_big_room(&mut c);
    let answer = || Some(accept("room", json!({"room_id": "studio-b"})));
    let try_state = |c: &mut Client, args: Value, st: &str| {
        c.call("book_room", args, form_caps(), answer(), Some(st))
    };

    let tampered = format!("{state}-TAMPERED");
    let truncated = &state[..state.len() - 4];
    let oversize = "A".repeat(400);
    for bad in [
        tampered.as_str(),
        truncated,
        "not base64!",
        "",
        oversize.as_str(),
    ] {
        assert_rejected(&try_state(&mut c, big_room(), bad));
    }
    // Bound to other arguments.
    let other = json!({"day": "2026-09-24", "hour": 10, "room_hint": "the big room"});
    assert_rejected(&try_state(&mut c, other, &state));
    // Same arguments in another order and spelling are the same request.
    let reordered = json!({"room_hint": "the big room", "hour": 9, "day": "2026-09-24"});
    assert_eq!(
        try_state(&mut c, reordered, &state)["result"]["resultType"],
        "complete"
    );
    // Another principal.
    let mut c2 = Client {
        principal: b"bob".to_vec(),
        ..Client::default()
    };
    assert_rejected(&try_state(&mut c2, big_room(), &state));
    // Expired.
    let mut c3 = Client::default();
    let s3 = ask_big_room(&mut c3);
    c3.now += u64::from(Config::default().state_ttl_s) + 1;
    assert_rejected(&try_state(&mut c3, big_room(), &s3));
    // Another tool.
    let r = c.call(
        "cancel_booking",
        json!({"booking_id": "bk_1"}),
        form_caps(),
        answer(),
        Some(&state),
    );
    assert_rejected(&r);
    // Unknown key id (the server was re-keyed without keeping the old key).
    let mut c4 = Client::default();
    let s4 = ask_big_room(&mut c4);
    c4.engine = Engine::new(
        BookingApp::new(DEFAULT_FLOOR, MemStore::new(), common::INFO),
        KeyRing::new(Key::new(9, &[0x42; 32]).unwrap()),
        Config::default(),
    );
    assert_rejected(&try_state(&mut c4, big_room(), &s4));
}

#[test]
fn no_single_bit_flip_of_a_real_token_is_accepted() {
    let mut c = Client::default();
    let state = ask_big_room(&mut c);
    let raw = decode(&state);
    let mut accepted = 0;
    for bit in 0..raw.len() * 8 {
        let mut flipped = raw.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        let r = c.call(
            "book_room",
            big_room(),
            form_caps(),
            Some(accept("room", json!({"room_id": "atrium"}))),
            Some(B64::encode(&flipped, &mut [0u8; 256]).unwrap()),
        );
        if r.get("result").is_some() {
            accepted += 1;
        } else {
            assert_rejected(&r);
        }
    }
    assert_eq!(accepted, 0);
    assert_eq!(bookings(&c), 0);
}

#[test]
fn replaying_the_final_retry_books_once() {
    let mut c = Client::default();
    let state = ask_big_room(&mut c);
    let mut ids = std::collections::BTreeSet::new();
    for i in 0..100 {
        // Even with a different answer the same state can authorise only one booking.
        let room = if i % 2 == 0 { "studio-b" } else { "atrium" };
        let r = c.call(
            "book_room",
            big_room(),
            form_caps(),
            Some(accept("room", json!({"room_id": room}))),
            Some(&state),
        );
        assert_eq!(r["result"]["isError"], false, "{r}");
        let booking = &r["result"]["structuredContent"]["booking"];
        assert_eq!(
            booking["room_id"], "studio-b",
            "a replay reports what was booked: {r}"
        );
        assert_eq!(booking["room_name"], "Studio B");
        ids.insert(
            r["result"]["structuredContent"]["booking"]["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    assert_eq!(ids.len(), 1);
    assert_eq!(bookings(&c), 1);
}

#[test]
fn a_replay_once_the_hour_has_started_still_reports_the_booking() {
    // 2026-09-24T09:00:00Z, the hour `big_room()` books.
    const NINE: u64 = 1_790_240_400;
    let mut c = Client {
        now: NINE - 60,
        ..Client::default()
    };
    let state = ask_big_room(&mut c);
    let answer = || Some(accept("room", json!({"room_id": "studio-b"})));
    let first = c.call("book_room", big_room(), form_caps(), answer(), Some(&state));
    assert_eq!(
        first["result"]["structuredContent"]["booked"], true,
        "{first}"
    );
    // The answer was lost; the client retries the same final request after 09:00 (the state
    // is still within its lifetime): the booking it made, not "has already started".
    c.now = NINE + 60;
    let replay = c.call("book_room", big_room(), form_caps(), answer(), Some(&state));
    assert_eq!(replay["result"]["isError"], false, "{replay}");
    assert_eq!(
        replay["result"]["structuredContent"]["booking"],
        first["result"]["structuredContent"]["booking"]
    );
    assert_eq!(bookings(&c), 1);
    // A new operation for that hour is refused.
    let fresh = c.call("book_room", big_room(), form_caps(), None, None);
    assert_eq!(fresh["result"]["isError"], true, "{fresh}");
    assert!(text_of(&fresh).contains("has already started"), "{fresh}");
}

#[test]
fn text_arguments_are_bounded_in_characters_not_bytes() {
    let mut c = Client::default();
    // 22 characters, 66 bytes: within maxLength 64, so an ordinary question about the room.
    let hint = "大きい部屋".repeat(4) + "です";
    let args = json!({"day": "2026-09-24", "hour": 9, "room_hint": hint});
    let r = c.call("book_room", args, form_caps(), None, None);
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    // 65 characters is over maxLength, and says so.
    let args = json!({"day": "2026-09-24", "hour": 9, "room_hint": "é".repeat(65)});
    let r = c.call("book_room", args, form_caps(), None, None);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(text_of(&r).contains("room_hint"), "{r}");
    // A booking id is bounded by its schema too, not refused as unreadable.
    let r = c.call(
        "cancel_booking",
        json!({"booking_id": "bk_".repeat(6)}),
        form_caps(),
        None,
        None,
    );
    assert!(text_of(&r).contains("booking_id"), "{r}");
}

#[test]
fn a_taken_slot_says_what_is_free() {
    let mut c = Client::default();
    c.call(
        "book_room",
        json!({"day": "2026-09-24", "hour": 9, "room_id": "studio-b"}),
        json!({}),
        None,
        None,
    );
    let r = c.call(
        "book_room",
        json!({"day": "2026-09-24", "hour": 9, "room_id": "studio-b"}),
        json!({}),
        None,
        None,
    );
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        r["result"]["structuredContent"]["free_rooms"],
        json!(["atrium", "nook"])
    );
}

fn book(c: &mut Client, hour: u8) -> String {
    let r = c.call(
        "book_room",
        json!({"day": "2026-09-24", "hour": hour, "room_id": "nook"}),
        json!({}),
        None,
        None,
    );
    r["result"]["structuredContent"]["booking"]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn cancel_confirmation_is_bound_to_its_booking() {
    let mut c = Client::default();
    let (bk1, bk2) = (book(&mut c, 9), book(&mut c, 10));
    let r = c.call(
        "cancel_booking",
        json!({"booking_id": bk1}),
        form_caps(),
        None,
        None,
    );
    assert!(r["result"]["inputRequests"]["confirm"]["params"]["message"]
        .as_str()
        .unwrap()
        .contains(&bk1));
    // The form, as the hand-built one served it before `Confirm` derived it.
    assert_eq!(
        r["result"]["inputRequests"]["confirm"]["params"]["requestedSchema"],
        json!({
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "title": "Yes, cancel it", "default": true}},
            "required": ["confirm"]
        })
    );
    let state = state_of(&r);
    let yes = || Some(accept("confirm", json!({"confirm": true})));
    // Replayed onto the other booking: rejected, and bk_2 stays.
    assert_rejected(&c.call(
        "cancel_booking",
        json!({"booking_id": bk2}),
        form_caps(),
        yes(),
        Some(&state),
    ));
    let r = c.call(
        "cancel_booking",
        json!({"booking_id": bk1}),
        form_caps(),
        yes(),
        Some(&state),
    );
    assert_eq!(
        r["result"]["structuredContent"]["booking"]["status"],
        "cancelled"
    );
    let statuses: Vec<_> = c
        .engine
        .app()
        .store()
        .bookings()
        .iter()
        .map(|b| format!("{:?}", b.status))
        .collect();
    assert_eq!(statuses, ["Cancelled", "Active"]);
}

#[test]
fn cancel_declined_or_by_someone_else_keeps_the_booking() {
    let mut c = Client::default();
    let bk = book(&mut c, 9);
    let state = state_of(&c.call(
        "cancel_booking",
        json!({"booking_id": bk}),
        form_caps(),
        None,
        None,
    ));
    let r = c.call(
        "cancel_booking",
        json!({"booking_id": bk}),
        form_caps(),
        Some(json!({"confirm": {"action": "decline"}})),
        Some(&state),
    );
    assert!(r["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("Kept"));
    c.principal = b"mallory".to_vec();
    let r = c.call(
        "cancel_booking",
        json!({"booking_id": bk}),
        form_caps(),
        None,
        None,
    );
    assert_eq!(r["result"]["isError"], true);
    assert!(c
        .engine
        .app()
        .store()
        .bookings()
        .iter()
        .all(|b| format!("{:?}", b.status) == "Active"));
}

#[test]
fn rotated_keys_keep_forms_in_flight_valid() {
    let mut c = Client::default();
    let state = ask_big_room(&mut c);
    let mut ring = KeyRing::new(Key::new(2, &[0x77; 32]).unwrap());
    ring.retain(Key::new(1, &[0x42; 32]).unwrap()).unwrap();
    c.engine = Engine::new(
        BookingApp::new(DEFAULT_FLOOR, MemStore::new(), common::INFO),
        ring,
        Config::default(),
    );
    let r = c.call(
        "book_room",
        big_room(),
        form_caps(),
        Some(accept("room", json!({"room_id": "atrium"}))),
        Some(&state),
    );
    assert_eq!(r["result"]["structuredContent"]["booked"], true);
}

#[test]
fn one_operation_books_once_even_across_re_asks() {
    let mut c = Client::default();
    let s1 = ask_big_room(&mut c);
    // An answer that is not offered is asked again: a second state for the same operation.
    let bad = Some(accept("room", json!({"room_id": "nook"})));
    let s2 = state_of(&c.call("book_room", big_room(), form_caps(), bad, Some(&s1)));
    for (state, room) in [(&s1, "atrium"), (&s2, "studio-b")] {
        let answer = Some(accept("room", json!({"room_id": room})));
        let r = c.call("book_room", big_room(), form_caps(), answer, Some(state));
        assert_eq!(
            r["result"]["structuredContent"]["booking"]["id"], "bk_1",
            "{r}"
        );
    }
    assert_eq!(bookings(&c), 1);
}

#[test]
fn one_principals_nonce_never_replays_anothers_booking() {
    let mut c = Client::default();
    let args = json!({"day": "2026-09-24", "hour": 9, "room_id": "nook"});
    c.call("book_room", args, json!({}), None, None);
    // Same host entropy, another principal, another slot: a new booking, not alice's.
    c.principal = b"bob".to_vec();
    c.counter = 0;
    let args = json!({"day": "2026-09-24", "hour": 10, "room_id": "nook"});
    let r = c.call("book_room", args, json!({}), None, None);
    assert_eq!(
        r["result"]["structuredContent"]["booking"]["id"], "bk_2",
        "{r}"
    );
    assert_eq!(
        r["result"]["structuredContent"]["booking"]["start"],
        "2026-09-24T10:00:00+00:00"
    );
}

fn text_of(r: &Value) -> &str {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn a_bad_answer_is_asked_again_with_a_red_mark() {
    let long = "x".repeat(100);
    let cases = [
        (
            json!({"room_id": "moon"}),
            "'moon' is not one of the options offered",
        ),
        (json!({"room_id": 7}), "7 is not one of the options offered"),
        (json!({}), "a value is required"),
        (
            json!({"room_id": long}),
            &*format!("'{}…' is not one of", "x".repeat(64)),
        ),
    ];
    for (content, why) in cases {
        let mut c = Client::default();
        let first = c.call("book_room", big_room(), form_caps(), None, None);
        let state = state_of(&first);
        let r = c.call(
            "book_room",
            big_room(),
            form_caps(),
            Some(accept("room", content.clone())),
            Some(&state),
        );
        let fresh = state_of(&r);
        assert_eq!(nonce(&fresh), nonce(&state), "same operation: {content}");
        let params = &r["result"]["inputRequests"]["room"]["params"];
        let before = &first["result"]["inputRequests"]["room"]["params"];
        let message = params["message"].as_str().unwrap();
        let original = before["message"].as_str().unwrap();
        assert!(message.starts_with(&format!("Room: {why}")), "{message}");
        assert!(message.ends_with(&format!(". {original}")), "{message}");
        let field = &params["requestedSchema"]["properties"]["room_id"];
        assert!(
            field["description"].as_str().unwrap().contains(why),
            "{content}: {field}"
        );
        assert_eq!(
            field["oneOf"],
            before["requestedSchema"]["properties"]["room_id"]["oneOf"]
        );
        assert!(!text_of(&r).contains("Booked"));
        assert_eq!(bookings(&c), 0);
        // Answered properly on the marked form, the operation books.
        let ok = c.call(
            "book_room",
            big_room(),
            form_caps(),
            Some(accept("room", json!({"room_id": "atrium"}))),
            Some(&fresh),
        );
        assert_eq!(
            ok["result"]["structuredContent"]["booking"]["room_id"],
            "atrium"
        );
    }
}

#[test]
fn a_slot_that_has_started_is_not_booked_and_the_earliest_is_named() {
    let mut c = Client::default(); // 2026-09-21 14:13:20 UTC
    for (day, hour) in [("2020-01-01", 9), ("2026-09-21", 14), ("2026-09-20", 23)] {
        let args = json!({"day": day, "hour": hour, "room_id": "atrium"});
        let r = c.call("book_room", args, json!({}), None, None);
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert!(
            text_of(&r).contains("The earliest bookable start is day=2026-09-21 start=14:15"),
            "{r}"
        );
    }
    // Not even a question is asked about a past slot.
    let past = json!({"day": "2026-09-21", "hour": 9, "room_hint": "the big room"});
    let r = c.call("book_room", past, form_caps(), None, None);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(text_of(&r).contains("has already started"), "{r}");
    assert_eq!(bookings(&c), 0);
    let args = json!({"day": "2026-09-21", "hour": 15, "room_id": "atrium"});
    let r = c.call("book_room", args, json!({}), None, None);
    assert_eq!(r["result"]["structuredContent"]["booked"], true, "{r}");
    // A panel's clock counts seconds since boot: not set, so nothing is refused as past.
    let mut panel = Client {
        now: 5_000,
        ..Client::default()
    };
    let args = json!({"day": "2020-01-01", "hour": 9, "room_id": "atrium"});
    let r = panel.call("book_room", args, json!({}), None, None);
    assert_eq!(r["result"]["structuredContent"]["booked"], true, "{r}");
}

#[test]
fn list_rooms_shows_no_room_free_at_an_hour_that_has_started() {
    let mut c = Client::default();
    let r = c.call(
        "list_rooms",
        json!({"day": "2026-09-21", "hour": 14}),
        json!({}),
        None,
        None,
    );
    let rooms = r["result"]["structuredContent"]["rooms"]
        .as_array()
        .unwrap();
    assert!(rooms.iter().all(|r| r["free"] == false), "{r}");
    assert!(text_of(&r).contains("start=14:15"), "{r}");
    let r = c.call(
        "list_rooms",
        json!({"day": "2026-09-21", "hour": 15}),
        json!({}),
        None,
        None,
    );
    let rooms = r["result"]["structuredContent"]["rooms"]
        .as_array()
        .unwrap();
    assert!(rooms.iter().all(|r| r["free"] == true), "{r}");
}

#[test]
fn arguments_outside_the_schema_are_tool_errors_that_say_what_to_fix() {
    let mut c = Client::default();
    let cases = [
        (
            "book_room",
            json!({"day": "2026-09-24", "hour": 9, "room": "atrium"}),
            "Unknown argument 'room'; did you mean 'room_id'?",
        ),
        (
            "book_room",
            json!({"day": "2026-09-24", "hour": 24, "room_id": "atrium"}),
            "Invalid argument 'hour': 24 is more than the maximum, 23.",
        ),
        (
            "book_room",
            json!({"day": "2026-09-24", "hour": "9", "room_id": "atrium"}),
            "Invalid argument 'hour': '9' is not a whole number.",
        ),
        (
            "book_room",
            json!({"day": "24/09/2026", "hour": 9}),
            "'24/09/2026' is not a day: give day as YYYY-MM-DD, today, tomorrow or a weekday.",
        ),
        (
            "book_room",
            json!({"day": "2026-09-24", "hour": 9, "attendees": 0}),
            "Invalid argument 'attendees': 0 is less than the minimum, 1.",
        ),
        (
            "book_room",
            json!({"day": "2026-09-24", "hour": 9, "room_id": "r".repeat(25)}),
            "is longer than 24 characters",
        ),
        (
            "book_room",
            json!({"hour": 9}),
            "Missing required argument 'day'",
        ),
        (
            "cancel_booking",
            json!({"bookingid": "bk_1"}),
            "Unknown argument 'bookingid'; did you mean 'booking_id'?",
        ),
        (
            "list_rooms",
            json!({"day": "2026-09-24", "hours": 9}),
            "Unknown argument 'hours'; did you mean 'hour'?",
        ),
    ];
    for (tool, args, says) in cases {
        let r = c.call(tool, args.clone(), form_caps(), None, None);
        assert_eq!(r["result"]["isError"], true, "{args}: {r}");
        assert!(text_of(&r).contains(says), "{args}: {r}");
    }
    assert_eq!(bookings(&c), 0);
}

#[test]
fn tools_read_escaped_arguments_and_refuse_a_declared_one_sent_twice() {
    let mut c = Client::default();
    let meta = common::meta(json!({})).to_string();
    let mut line = |id: u32, args: &str| {
        let msg = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"book_room","arguments":{args},"_meta":{meta}}}}}"#
        );
        let (_, text) = c.raw(msg.as_bytes());
        serde_json::from_str::<Value>(&text).unwrap()
    };
    // Escapes in names and values are decoded: this books the nook.
    let r = line(
        1,
        r#"{"day":"2026-09-24","h\u006fur":9,"room_id":"n\u006fok"}"#,
    );
    assert_eq!(
        r["result"]["structuredContent"]["booking"]["room_id"], "nook",
        "{r}"
    );
    // A declared argument twice is refused as the tools always have (serde's duplicate field).
    let r = line(
        2,
        r#"{"day":"2026-09-24","hour":10,"hour":11,"room_id":"nook"}"#,
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(
        text_of(&r),
        "Invalid arguments: see the tool's inputSchema.",
        "{r}"
    );
    assert_eq!(bookings(&c), 1);
}

#[test]
fn a_replay_after_cancelling_reports_the_cancelled_booking_and_how_to_book_again() {
    let mut c = Client::default();
    let state = ask_big_room(&mut c);
    let answer = || Some(accept("room", json!({"room_id": "atrium"})));
    let r = c.call("book_room", big_room(), form_caps(), answer(), Some(&state));
    let id = r["result"]["structuredContent"]["booking"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let ask = c.call(
        "cancel_booking",
        json!({"booking_id": id}),
        form_caps(),
        None,
        None,
    );
    let yes = Some(accept("confirm", json!({"confirm": true})));
    c.call(
        "cancel_booking",
        json!({"booking_id": id}),
        form_caps(),
        yes,
        Some(&state_of(&ask)),
    );
    let r = c.call("book_room", big_room(), form_caps(), answer(), Some(&state));
    assert_eq!(
        r["result"]["structuredContent"]["booking"]["status"], "cancelled",
        "{r}"
    );
    assert!(text_of(&r).contains("make a new book_room call"), "{r}");
    assert_eq!(bookings(&c), 1);
}
