//! A meeting's life after it is booked: `extend_booking` into free time and not into taken
//! time (saying what is free instead), `end_booking` giving the rest back, and what both refuse.

mod common;

use common::Client;
use serde_json::{json, Value};

/// Books `room` on `day` from `start` for `minutes` as the client's principal; its id.
fn book(c: &mut Client, day: &str, start: &str, minutes: u16, room: &str) -> String {
    let args = json!({"day": day, "start": start, "minutes": minutes, "room_id": room});
    let r = c.call("book_room", args, json!({}), None, None);
    r["result"]["structuredContent"]["booking"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("booked: {r}"))
        .to_owned()
}

fn call(c: &mut Client, tool: &str, args: Value) -> Value {
    let r = c.call(tool, args, json!({}), None, None);
    assert!(r["result"].is_object(), "{r}");
    r["result"].clone()
}

fn text(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap()
}

#[test]
fn a_meeting_runs_on_into_free_time_and_not_into_taken_time() {
    let mut c = Client::default();
    let mine = book(&mut c, "2026-09-24", "9:00", 60, "atrium");
    c.principal = b"bob".to_vec();
    book(&mut c, "2026-09-24", "10:30", 60, "atrium");
    c.principal = b"alice".to_vec();

    let r = call(
        &mut c,
        "extend_booking",
        json!({"booking_id": mine, "minutes": 60}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        text(&r),
        "Not extended: The Atrium is booked from 10:30. bk_1 may run until then (extend by up \
         to 30 minutes). Free for the added time: studio-b, nook."
    );
    assert_eq!(r["structuredContent"]["free_minutes"], 30);
    assert_eq!(
        r["structuredContent"]["free_rooms"],
        json!(["studio-b", "nook"])
    );
    assert_eq!(
        r["structuredContent"]["booking"]["end"],
        "2026-09-24T10:00:00+00:00"
    );

    let r = call(
        &mut c,
        "extend_booking",
        json!({"booking_id": mine, "minutes": 30}),
    );
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        text(&r),
        "bk_1 (The Atrium on Thursday 2026-09-24 at 09:00–10:30 (UTC)) is extended: it now \
         ends at 10:30."
    );
    assert_eq!(
        r["structuredContent"]["booking"]["end"],
        "2026-09-24T10:30:00+00:00"
    );
    assert_eq!(r["structuredContent"]["booking"]["minutes"], 90);

    // Right up against the next one: no time left in the room.
    let r = call(
        &mut c,
        "extend_booking",
        json!({"booking_id": mine, "minutes": 15}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        text(&r).starts_with("Not extended: The Atrium is booked from 10:30. Free"),
        "{r}"
    );
    // The time it took is the booking's: nobody else may book it.
    c.principal = b"carol".to_vec();
    let r = c.call(
        "book_room",
        json!({"day": "2026-09-24", "start": "10:00", "minutes": 15, "room_id": "atrium"}),
        json!({}),
        None,
        None,
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
}

#[test]
fn an_extension_keeps_to_the_grid_the_longest_booking_and_its_holder() {
    let mut c = Client::default();
    let mine = book(&mut c, "2026-09-24", "9:00", 60, "nook");
    let r = call(
        &mut c,
        "extend_booking",
        json!({"booking_id": mine, "minutes": 10}),
    );
    assert_eq!(
        text(&r),
        "This floor books in steps of 15 minutes: give minutes as a multiple of 15."
    );
    let r = call(
        &mut c,
        "extend_booking",
        json!({"booking_id": mine, "minutes": 480}),
    );
    assert_eq!(
        text(&r),
        "A booking lasts at most 480 minutes on this floor: bk_1 may grow by 420 more at most."
    );
    c.principal = b"bob".to_vec();
    let r = call(
        &mut c,
        "extend_booking",
        json!({"booking_id": mine, "minutes": 15}),
    );
    assert_eq!(text(&r), "There is no booking 'bk_1' of yours to extend.");
    let r = call(&mut c, "end_booking", json!({"booking_id": mine}));
    assert_eq!(text(&r), "There is no booking 'bk_1' of yours to end.");
}

#[test]
fn a_meeting_that_ends_early_gives_the_rest_back_at_the_next_step() {
    // The clients' clock: Monday 2026-09-21 14:13:20 UTC.
    let mut c = Client::default();
    c.now -= 30 * 60;
    let mine = book(&mut c, "2026-09-21", "14:00", 60, "studio-b");
    c.now += 30 * 60;
    let r = call(&mut c, "end_booking", json!({"booking_id": mine}));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        text(&r),
        "bk_1 (Studio B on Monday 2026-09-21 at 14:00–14:15 (UTC)) ends at 14:15: the room is \
         free from then."
    );
    assert_eq!(r["structuredContent"]["changed"], true);
    // Asked again: nothing more to give back, and not an error.
    let r = call(&mut c, "end_booking", json!({"booking_id": mine}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(
        text(&r).ends_with("ends at 14:15 anyway: there is nothing to give back."),
        "{r}"
    );
    // The rest is free for anyone.
    c.principal = b"bob".to_vec();
    book(&mut c, "2026-09-21", "14:15", 45, "studio-b");
    // Once over, it cannot run on.
    c.principal = b"alice".to_vec();
    c.now += 10 * 60;
    let r = call(
        &mut c,
        "extend_booking",
        json!({"booking_id": mine, "minutes": 15}),
    );
    assert_eq!(
        text(&r),
        "bk_1 ended at 14:15: book the room again instead."
    );
}

#[test]
fn what_has_not_started_or_is_cancelled_is_not_ended() {
    let mut c = Client::default();
    let later = book(&mut c, "2026-09-24", "9:00", 60, "atrium");
    let r = call(&mut c, "end_booking", json!({"booking_id": later}));
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        text(&r),
        "bk_1 has not started yet (it starts at 09:00): to give it back, cancel it with \
         cancel_booking."
    );
    let done = c.confirmed("cancel_booking", json!({"booking_id": later}));
    assert_eq!(done["result"]["isError"], false, "{done}");
    let r = call(
        &mut c,
        "extend_booking",
        json!({"booking_id": later, "minutes": 15}),
    );
    assert_eq!(text(&r), "bk_1 is cancelled: there is nothing to extend.");
}
