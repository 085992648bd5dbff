//! "Find me a room": a room taken for some of the time asked is not a bare refusal — what fits
//! instead (other rooms free then, the nearest free starts in that room) is offered as a form,
//! or named in words to a client that cannot be asked; a hint offers only the rooms free then.

mod common;

use common::{accept, form_caps, Client};
use serde_json::{json, Value};

fn at(start: &str, room: &str) -> Value {
    json!({"day": "2026-09-24", "start": start, "room_id": room})
}

/// Books `args` with no questions; the result.
fn book(c: &mut Client, args: Value) -> Value {
    c.call("book_room", args, json!({}), None, None)["result"].clone()
}

#[test]
fn a_taken_room_offers_other_rooms_and_starts_and_books_the_pick() {
    let mut c = Client::default();
    book(&mut c, at("9", "studio-b"));
    book(&mut c, at("9", "nook"));
    let asked = c.call("book_room", at("9", "studio-b"), form_caps(), None, None);
    let q = &asked["result"]["inputRequests"]["instead"]["params"];
    assert!(
        q["message"].as_str().unwrap().starts_with(
            "Studio B is already booked for some of Thursday 2026-09-24 at 09:00–10:00 (UTC)."
        ),
        "{asked}"
    );
    let options = q["requestedSchema"]["properties"]["choice"]["oneOf"].clone();
    let values: Vec<&str> = options
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["const"].as_str().unwrap())
        .collect();
    // The atrium is free then; Studio B is free an hour later or earlier.
    assert_eq!(
        values,
        ["atrium", "@10:00", "@08:00", "@10:15"],
        "{options}"
    );
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    for (pick, room, start) in [
        ("@10:00", "studio-b", "10:00"),
        ("atrium", "atrium", "09:00"),
    ] {
        let mut c2 = Client::default();
        book(&mut c2, at("9", "studio-b"));
        book(&mut c2, at("9", "nook"));
        let asked = c2.call("book_room", at("9", "studio-b"), form_caps(), None, None);
        let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
        let answer = Some(accept("instead", json!({"choice": pick})));
        let r = c2.call(
            "book_room",
            at("9", "studio-b"),
            form_caps(),
            answer,
            Some(&state),
        );
        let b = &r["result"]["structuredContent"]["booking"];
        assert_eq!(b["room_id"], room, "{r}");
        assert_eq!(b["start"], format!("2026-09-24T{start}:00+00:00"), "{r}");
    }
    // Declining books nothing.
    let declined = Some(json!({"instead": {"action": "decline"}}));
    let r = c.call(
        "book_room",
        at("9", "studio-b"),
        form_caps(),
        declined,
        Some(&state),
    );
    assert_eq!(r["result"]["structuredContent"]["booked"], false, "{r}");
}

#[test]
fn a_client_that_cannot_be_asked_is_told_what_fits_instead() {
    let mut c = Client::default();
    book(&mut c, at("9", "studio-b"));
    let r = book(&mut c, at("9", "studio-b"));
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        r["structuredContent"]["free_rooms"],
        json!(["atrium", "nook"])
    );
    assert_eq!(
        r["structuredContent"]["free_starts"],
        json!(["10:00", "08:00", "10:15"])
    );
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.ends_with(
            "Free then: atrium, nook. Studio B is free from 10:00, 08:00, 10:15 (give it as start)."
        ),
        "{text}"
    );
}

#[test]
fn a_hint_offers_only_the_rooms_free_then() {
    let mut c = Client::default();
    book(&mut c, at("9", "atrium"));
    // "The big room" is the atrium or studio B; only studio B is free: booked, not asked.
    let hint = json!({"day": "2026-09-24", "start": "9:30", "room_hint": "the big room"});
    let r = c.call("book_room", hint.clone(), form_caps(), None, None);
    assert_eq!(
        r["result"]["structuredContent"]["booking"]["room_id"], "studio-b",
        "{r}"
    );
    // Both taken now: the first is the one whose clash is shown, with what fits instead.
    let r = c.call("book_room", hint, form_caps(), None, None);
    let message = r["result"]["inputRequests"]["instead"]["params"]["message"].as_str();
    assert!(
        message.is_some_and(|m| m.starts_with("The Atrium is already booked")),
        "{r}"
    );
}

#[test]
fn a_room_picked_in_the_form_and_taken_meanwhile_is_not_swapped_for_another() {
    let mut c = Client::default();
    // "The big room": the atrium and Studio B are both free, so the form asks which.
    let hint = json!({"day": "2026-09-24", "start": "9:00", "room_hint": "the big room"});
    let asked = c.call("book_room", hint.clone(), form_caps(), None, None);
    let state = asked["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("asked which room: {asked}"))
        .to_owned();
    // Someone else takes the atrium before the answer comes back.
    c.principal = b"bob".to_vec();
    book(&mut c, at("9", "atrium"));
    c.principal = b"alice".to_vec();
    let answer = Some(accept("room", json!({"room_id": "atrium"})));
    let r = c.call("book_room", hint, form_caps(), answer, Some(&state));
    // Not booked in Studio B behind the user's back: the atrium's clash is shown, with what
    // fits instead (Studio B among it).
    assert_ne!(
        r["result"]["structuredContent"]["booking"]["room_id"], "studio-b",
        "the user picked the atrium: {r}"
    );
    let message = r["result"]["inputRequests"]["instead"]["params"]["message"].as_str();
    assert!(
        message.is_some_and(|m| m.starts_with("The Atrium is already booked")),
        "{r}"
    );
}
