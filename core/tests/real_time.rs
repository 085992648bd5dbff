//! Bookings with minutes, a length and a title; days and times as people say them; a clash is
//! any overlap; the time a question showed is the time its answer books.

mod common;

use common::{accept, form_caps, Client, INFO};
use redmark_core::booking::{BookingApp, Floor, MemStore, TimeOfDay, DEFAULT_FLOOR};
use redmark_core::engine::Config;
use redmark_core::seal::{Key, KeyRing};
use redmark_core::Engine;
use serde_json::{json, Value};

/// Wednesday 2026-09-23 23:58:00 UTC: two minutes before Thursday.
const WEDNESDAY_LATE: u64 = 1_790_207_880;

fn book(c: &mut Client, args: Value) -> Value {
    c.call("book_room", args, json!({}), None, None)["result"].clone()
}

fn text(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn thursday_at_half_past_nine_for_45_minutes_with_a_title() {
    let mut c = Client::default(); // Monday 2026-09-21 14:13:20 UTC
    let args = json!({"day": "Thursday", "start": "9:30", "minutes": 45,
        "title": "Design review", "room_hint": "the big room"});
    let asked = c.call("book_room", args.clone(), form_caps(), None, None);
    let message = asked["result"]["inputRequests"]["room"]["params"]["message"]
        .as_str()
        .unwrap();
    assert!(
        message.ends_with("for Thursday 2026-09-24 at 09:30–10:15 (UTC)?"),
        "{message}"
    );
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    let answer = Some(accept("room", json!({"room_id": "atrium"})));
    let r = c.call("book_room", args, form_caps(), answer, Some(&state))["result"].clone();
    let b = &r["structuredContent"]["booking"];
    assert_eq!(b["start"], "2026-09-24T09:30:00+00:00", "{r}");
    assert_eq!(b["end"], "2026-09-24T10:15:00+00:00", "{r}");
    assert_eq!(
        (&b["minutes"], &b["title"]),
        (&json!(45), &json!("Design review"))
    );
    assert_eq!(
        text(&r),
        "Booked The Atrium (24 seats) on Thursday 2026-09-24 at 09:30–10:15 (UTC), \"Design \
         review\" — booking bk_1."
    );
}

#[test]
fn an_answer_after_midnight_books_the_day_the_question_showed() {
    let mut c = Client {
        now: WEDNESDAY_LATE,
        ..Client::default()
    };
    let args = json!({"day": "tomorrow", "start": "09", "room_hint": "the big room"});
    let asked = c.call("book_room", args.clone(), form_caps(), None, None);
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    c.now += 3 * 60; // Thursday 00:01 (the state lives 5 minutes): "tomorrow" is now Friday.
    let answer = Some(accept("room", json!({"room_id": "studio-b"})));
    let r = c.call("book_room", args.clone(), form_caps(), answer, Some(&state))["result"].clone();
    assert_eq!(
        r["structuredContent"]["booking"]["start"], "2026-09-24T09:00:00+00:00",
        "{r}"
    );
    // Asked afresh, "tomorrow" is Friday.
    let again = c.call("book_room", args, form_caps(), None, None);
    let message = again["result"]["inputRequests"]["room"]["params"]["message"].to_string();
    assert!(
        message.contains("Friday 2026-09-25 at 09:00–10:00"),
        "{message}"
    );
}

#[test]
fn any_overlap_is_a_clash_and_touching_is_not() {
    let mut c = Client::default();
    let at = |start: &str, minutes: u16| json!({"day": "2026-09-24", "start": start, "minutes": minutes, "room_id": "nook"});
    assert_eq!(
        book(&mut c, at("09:30", 45))["structuredContent"]["booked"],
        true
    );
    for (start, minutes) in [("10:00", 60), ("09:00", 45), ("09:45", 15), ("08:00", 240)] {
        let r = book(&mut c, at(start, minutes));
        assert_eq!(r["structuredContent"]["reason"], "taken", "{start}: {r}");
        assert!(
            text(&r).contains("The Nook is already booked for some of"),
            "{r}"
        );
    }
    for (start, minutes) in [("10:15", 30), ("09:00", 30)] {
        let r = book(&mut c, at(start, minutes));
        assert_eq!(r["structuredContent"]["booked"], true, "{start}: {r}");
    }
    // A cancelled booking holds nothing.
    let free = book(&mut c, at("12:00", 60));
    let id = free["structuredContent"]["booking"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    c.confirmed("cancel_booking", json!({"booking_id": id}));
    let r = book(&mut c, at("12:30", 60));
    assert_eq!(r["structuredContent"]["booked"], true, "{r}");
    // Which rooms are free for a span: the nook is not, at any part of 12:30–13:30.
    let r = c.call(
        "list_rooms",
        json!({"day": "2026-09-24", "start": "13:15", "minutes": 30}),
        json!({}),
        None,
        None,
    )["result"]
        .clone();
    let free: Vec<_> = r["structuredContent"]["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r["free"] == true))
        .collect();
    assert_eq!(
        free,
        [
            ("atrium".into(), true),
            ("studio-b".into(), true),
            ("nook".into(), false)
        ],
        "{r}"
    );
}

#[test]
fn times_off_the_grid_or_too_long_say_what_to_give() {
    let mut c = Client::default();
    let at = |extra: Value| {
        let mut a = json!({"day": "2026-09-24", "room_id": "nook"});
        a.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        a
    };
    let cases = [
        (json!({"start": "9:07"}), "steps of 15 minutes"),
        (
            json!({"start": "9:00", "minutes": 50}),
            "steps of 15 minutes",
        ),
        (json!({"start": "9", "minutes": 495}), "at most 480 minutes"),
        (json!({"start": "9.30"}), "'9.30' is not a time of day"),
        (json!({"start": "9", "hour": 9}), "not both"),
        (json!({}), "Give the start time"),
        (
            json!({"day": "someday", "start": "9"}),
            "'someday' is not a day",
        ),
        (
            json!({"start": "9", "title": "two\nlines"}),
            "one line of text",
        ),
    ];
    for (extra, says) in cases {
        let r = book(&mut c, at(extra.clone()));
        assert_eq!(r["isError"], true, "{extra}: {r}");
        assert!(text(&r).contains(says), "{extra}: {r}");
    }
    // The old way still books the whole hour; `09` is a time like `9`.
    for (extra, start) in [
        (json!({"hour": 9}), "09:00"),
        (json!({"start": "09"}), "10:00"),
    ] {
        let mut a = at(extra);
        if start == "10:00" {
            a["day"] = json!("2026-09-25");
        }
        let r = book(&mut c, a);
        assert_eq!(r["structuredContent"]["booking"]["minutes"], 60, "{r}");
    }
}

#[test]
fn the_minutes_of_today_that_have_passed_are_refused_and_the_next_grid_start_named() {
    let mut c = Client::default(); // 14:13:20
    let r = book(
        &mut c,
        json!({"day": "today", "start": "14:00", "minutes": 30, "room_id": "nook"}),
    );
    assert!(
        text(&r).contains("The earliest bookable start is day=2026-09-21 start=14:15"),
        "{r}"
    );
    let r = book(
        &mut c,
        json!({"day": "today", "start": "14:15", "minutes": 30, "room_id": "nook"}),
    );
    assert_eq!(r["structuredContent"]["booked"], true, "{r}");
    // A panel whose clock is not set cannot place "today".
    let mut panel = Client {
        now: 5_000,
        ..Client::default()
    };
    let r = book(
        &mut panel,
        json!({"day": "today", "hour": 9, "room_id": "nook"}),
    );
    assert!(text(&r).contains("clock is not set"), "{r}");
}

/// A client of a floor open from `open` to `close` o'clock.
fn open_from(open: u16, close: u16) -> Client {
    let floor = Floor {
        open: Some((TimeOfDay(open * 60), TimeOfDay(close * 60))),
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

#[test]
fn a_floor_with_opening_hours_books_only_within_them() {
    let mut c = open_from(7, 20);
    let at = |start: &str, minutes: u16| json!({"day": "2026-09-24", "start": start, "minutes": minutes, "room_id": "nook"});
    for (start, minutes) in [("6:30", 60), ("19:30", 60), ("0", 30)] {
        let r = book(&mut c, at(start, minutes));
        assert!(
            text(&r).contains("This floor is open 07:00–20:00"),
            "{start}: {r}"
        );
    }
    for (start, minutes) in [("7", 60), ("19:00", 60)] {
        let r = book(&mut c, at(start, minutes));
        assert_eq!(r["structuredContent"]["booked"], true, "{start}: {r}");
    }
    let day = c.call(
        "day_schedule",
        json!({"day": "2026-09-24"}),
        json!({}),
        None,
        None,
    );
    assert_eq!(
        day["result"]["structuredContent"]["opening_hours"],
        json!({"open": "07:00", "close": "20:00"})
    );
}

#[test]
fn a_taken_room_offers_other_starts_only_within_the_opening_hours() {
    let mut c = open_from(8, 18);
    let at = |start: &str| json!({"day": "2026-09-24", "start": start, "room_id": "nook"});
    for (taken, want) in [
        ("8", ["@09:00", "@09:15", "@09:30"]),
        ("17", ["@16:00", "@15:45", "@15:30"]),
    ] {
        book(&mut c, at(taken));
        let asked = c.call("book_room", at(taken), form_caps(), None, None);
        let options = &asked["result"]["inputRequests"]["instead"]["params"]["requestedSchema"]
            ["properties"]["choice"]["oneOf"];
        let starts: Vec<&str> = options
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|o| o["const"].as_str().filter(|v| v.starts_with('@')))
            .collect();
        assert_eq!(starts, want, "{asked}");
    }
}
