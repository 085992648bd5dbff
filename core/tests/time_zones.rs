//! A floor in a zone with daylight saving: times are given and shown on its wall clock, a time
//! the clocks skip is refused saying why, a time they repeat is asked about.

mod common;

use common::{accept, form_caps, Client, INFO};
use redmark_core::booking::DEFAULT_FLOOR;
use redmark_core::booking::{
    day_span, BookingApp, Day, Floor, Local, MemStore, Minute, Resolved, Rfc3339, Span, TimeOfDay,
    Zone,
};
use redmark_core::engine::Config;
use redmark_core::seal::{Key, KeyRing};
use redmark_core::Engine;
use serde_json::{json, Value};

/// Central European time with its 2026 changes only (last Sundays of March and October at
/// 01:00 UTC): the desktop reads real rules from a zone database.
struct Berlin;

const SPRING: Minute = 29_579_100; // 2026-03-29T01:00Z
const AUTUMN: Minute = 29_881_500; // 2026-10-25T01:00Z

impl Zone for Berlin {
    fn name(&self) -> &str {
        "Europe/Berlin"
    }
    fn offset(&self, at: Minute) -> i32 {
        if (SPRING..AUTUMN).contains(&at) {
            120
        } else {
            60
        }
    }
    fn resolve(&self, wall: Minute) -> Resolved {
        let (winter, summer) = (wall - 60, wall - 120);
        match (self.offset(winter) == 60, self.offset(summer) == 120) {
            (true, true) => Resolved::Twice(summer, winter),
            (true, false) => Resolved::One(winter),
            (false, true) => Resolved::One(summer),
            (false, false) => Resolved::Skipped {
                from: TimeOfDay(120),
                to: TimeOfDay(180),
            },
        }
    }
}

static BERLIN: Berlin = Berlin;

/// A client of a floor in Berlin, at unix time `now`.
fn in_berlin(now: u64) -> Client {
    let floor = Floor {
        zone: &BERLIN,
        ..DEFAULT_FLOOR
    };
    let keys = KeyRing::new(Key::new(1, &[0x42; 32]).unwrap());
    Client {
        engine: Engine::new(
            BookingApp::new(floor, MemStore::new(), INFO),
            keys,
            Config::default(),
        ),
        now,
        ..Client::default()
    }
}

fn result(c: &mut Client, args: Value, caps: Value) -> Value {
    c.call("book_room", args, caps, None, None)["result"].clone()
}

#[test]
fn a_booking_is_given_and_shown_in_the_floors_wall_time() {
    let mut c = in_berlin(1_790_000_000); // Monday 2026-09-21 16:13:20 in Berlin
    let r = result(
        &mut c,
        json!({"day": "thursday", "start": "9:30", "minutes": 45, "room_id": "nook"}),
        json!({}),
    );
    let b = &r["structuredContent"]["booking"];
    assert_eq!(b["start"], "2026-09-24T09:30:00+02:00", "{r}");
    assert_eq!(b["end"], "2026-09-24T10:15:00+02:00", "{r}");
    assert_eq!(b["day"], "2026-09-24", "{r}");
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("on Thursday 2026-09-24 at 09:30–10:15 (Europe/Berlin)"),
        "{text}"
    );
    // 16:13 in Berlin: 16:00 there has started (said on Berlin's clock), and the earliest start
    // today is 16:15 there, not 14:15.
    let r = result(
        &mut c,
        json!({"day": "today", "start": "16", "room_id": "nook"}),
        json!({}),
    );
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("The earliest bookable start is day=2026-09-21 start=16:15 (Europe/Berlin)"),
        "{text}"
    );
    assert!(
        text.starts_with(
            "Not booked: Monday 2026-09-21 at 16:00–17:00 (Europe/Berlin) has already started."
        ),
        "{text}"
    );
}

#[test]
fn today_is_the_floors_day_not_utcs() {
    // Monday 23:30 UTC is already Tuesday 01:30 in Berlin.
    let mut c = in_berlin(1_790_033_400);
    let r = result(
        &mut c,
        json!({"day": "today", "start": "9", "room_id": "nook"}),
        json!({}),
    );
    assert_eq!(
        r["structuredContent"]["booking"]["start"], "2026-09-22T09:00:00+02:00",
        "{r}"
    );
}

#[test]
fn a_time_the_clocks_skip_is_refused_saying_why() {
    let mut c = in_berlin(1_770_000_000); // February 2026
    let r = result(
        &mut c,
        json!({"day": "2026-03-29", "start": "02:30", "room_id": "nook"}),
        json!({}),
    );
    assert_eq!(r["isError"], true, "{r}");
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("02:30 does not exist on 2026-03-29")
            && text.contains("go forward from 02:00 to 03:00"),
        "{text}"
    );
    let r = result(
        &mut c,
        json!({"day": "2026-03-29", "start": "03:00", "room_id": "nook"}),
        json!({}),
    );
    assert_eq!(
        r["structuredContent"]["booking"]["start"], "2026-03-29T03:00:00+02:00",
        "{r}"
    );
}

#[test]
fn a_time_the_clocks_repeat_is_asked_and_the_answer_booked() {
    for (pick, offset) in [("first", "+02:00"), ("second", "+01:00")] {
        let mut c = in_berlin(1_790_000_000);
        let args = json!({"day": "2026-10-25", "start": "02:30", "minutes": 30, "room_id": "nook"});
        let asked = c.call("book_room", args.clone(), form_caps(), None, None);
        let request = &asked["result"]["inputRequests"]["time"]["params"];
        let message = request["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("02:30 comes twice on 2026-10-25"),
            "{asked}"
        );
        let options = &request["requestedSchema"]["properties"]["start"]["oneOf"];
        assert_eq!(options[0]["const"], "first", "{asked}");
        assert!(
            options[1]["title"]
                .as_str()
                .unwrap()
                .contains("02:30–03:00, the second time (2026-10-25T02:30:00+01:00)"),
            "{asked}"
        );
        let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
        let answer = Some(accept("time", json!({"start": pick})));
        let r = c.call("book_room", args, form_caps(), answer, Some(&state));
        assert_eq!(
            r["result"]["structuredContent"]["booking"]["start"],
            format!("2026-10-25T02:30:00{offset}"),
            "{r}"
        );
    }
}

/// No argument stands in for which of the two times: a client without forms is refused with
/// `-32021` rather than booked at a guess.
#[test]
fn a_time_the_clocks_repeat_is_refused_to_a_client_without_forms() {
    let mut c = in_berlin(1_790_000_000);
    let args = json!({"day": "2026-10-25", "start": "02:30", "minutes": 30, "room_id": "nook"});
    let r = c.call("book_room", args, json!({}), None, None);
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(c.engine.app().store().bookings().len(), 0);
}

#[test]
fn local_times_show_the_wall_clock_its_offset_across_a_change_and_its_zone() {
    let d = Day::parse("2026-09-24").unwrap();
    let nine_thirty = d.first_minute() + 9 * 60 + 30 - 120;
    let s = Span {
        start: nine_thirty,
        end: nine_thirty + 45,
    };
    assert_eq!(
        Local(s, &Berlin).to_string(),
        "Thursday 2026-09-24 at 09:30–10:15 (Europe/Berlin)"
    );
    assert_eq!(
        Rfc3339(s.start, &Berlin).to_string(),
        "2026-09-24T09:30:00+02:00"
    );
    // The first 02:30 of the night the clocks go back, for an hour: it ends at the second.
    let first = Span {
        start: AUTUMN - 30,
        end: AUTUMN + 30,
    };
    assert_eq!(
        Local(first, &Berlin).to_string(),
        "Sunday 2026-10-25 at 02:30+02:00–02:30+01:00 (Europe/Berlin)"
    );
}

#[test]
fn a_day_with_a_clock_change_is_23_or_25_hours() {
    let day = |d: &str| day_span(&Berlin, Day::parse(d).unwrap()).minutes();
    assert_eq!(day("2026-03-29"), 23 * 60);
    assert_eq!(day("2026-10-25"), 25 * 60);
    assert_eq!(day("2026-09-24"), 24 * 60);
}

/// A series whose first time the clocks repeat starts at the time picked, as a single booking
/// does.
#[test]
fn a_series_from_a_time_the_clocks_repeat_starts_at_the_one_picked() {
    let mut starts = Vec::new();
    for pick in ["first", "second"] {
        for series in [false, true] {
            let mut c = in_berlin(1_790_000_000);
            let mut args =
                json!({"day": "2026-10-25", "start": "02:30", "minutes": 30, "room_id": "nook"});
            if series {
                args["repeat"] = json!("weekly");
                args["count"] = json!(2);
            }
            let asked = c.call("book_room", args.clone(), form_caps(), None, None);
            let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
            let answer = Some(accept("time", json!({"start": pick})));
            let r = c.call("book_room", args, form_caps(), answer, Some(&state));
            assert_eq!(r["result"]["isError"], false, "{r}");
            let store = c.engine.app().store();
            let first = store.bookings().iter().map(|b| b.new.span.start).min();
            starts.push(first.unwrap());
        }
    }
    assert_eq!(starts[0], starts[1], "the first 02:30");
    assert_eq!(starts[2], starts[3], "the second 02:30");
    assert_eq!(starts[3] - starts[1], 60, "an hour apart");
}
