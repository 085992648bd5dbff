//! A floor in Europe/Berlin (`time_zone` in its floor file), through the official Python SDK
//! 2.3 client and `redmark call`: "the big room for Thursday 09:30 for 45 minutes called Design
//! review" books that local interval; a start in the spring-forward gap is refused saying why;
//! one in the autumn repeat is asked as a question, and the answer is booked.

mod client_support;

use std::path::Path;

use client_support::{cat, redmark};
use redmark_core::booking::{minute_of, Day};
use redmark_tests::peers::sdk_book;
use redmark_tests::server::{Server, TempDir};
use serde_json::json;

const FLOOR: &str = r#"time_zone = "Europe/Berlin"

[[room]]
id = "atrium"
name = "The Atrium"
seats = 24
aliases = ["the big room"]

[[room]]
id = "studio-b"
name = "Studio B"
seats = 12
aliases = ["the big room"]

[[room]]
id = "nook"
name = "The Nook"
seats = 4
"#;

/// A server of the Berlin floor over HTTP, and its `/mcp` URL.
fn berlin(data: &Path) -> (Server, String) {
    let rooms = data.join("rooms.toml");
    std::fs::write(&rooms, FLOOR).unwrap();
    let s = Server::start(
        &["--http", "127.0.0.1:0", "--rooms", rooms.to_str().unwrap()],
        data,
    );
    let url = format!("http://{}/mcp", s.http[0]);
    (s, url)
}

/// Berlin's offset from UTC at UTC minute `m`, in minutes: summer time from the last Sunday
/// of March to the last of October, at 01:00 UTC (the EU rule).
fn berlin_offset(m: u32) -> i32 {
    let day = Day::containing(m).unwrap();
    let last_sunday = |month| {
        let mut d = Day {
            month,
            day: 31,
            ..day
        };
        while d.weekday() != 6 {
            d.day -= 1;
        }
        d.first_minute() + 60
    };
    if (last_sunday(3)..last_sunday(10)).contains(&m) {
        120
    } else {
        60
    }
}

#[test]
fn thursday_half_past_nine_for_45_minutes_is_booked_in_berlin_time() {
    let Some(py) = redmark_tests::peers::python_sdk_2_3("REDMARK_REQUIRE_OAUTH") else {
        return;
    };
    let data = TempDir::new("tz-thursday");
    let (_s, url) = berlin(data.path());
    let args = json!({"day": "Thursday", "start": "9:30", "minutes": 45,
        "title": "Design review", "room_hint": "the big room"});
    let out = sdk_book(&py, &url, &args, &["studio-b"]);
    // The next Thursday on Berlin's clock (today if it is one).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let utc = minute_of(now.as_secs()).unwrap();
    let mut day = Day::containing(utc.saturating_add_signed(berlin_offset(utc))).unwrap();
    while day.weekday() != 3 {
        day = day.next().unwrap();
    }
    let nine_thirty = day.first_minute() + 9 * 60 + 30;
    let offset = berlin_offset(nine_thirty - 120);
    let zone = if offset == 120 { "+02:00" } else { "+01:00" };
    let booking = &out["structured"]["booking"];
    assert_eq!(booking["start"], format!("{day}T09:30:00{zone}"), "{out}");
    assert_eq!(booking["end"], format!("{day}T10:15:00{zone}"), "{out}");
    assert_eq!(booking["title"], "Design review", "{out}");
    let asked = out["asked"][0]["message"].as_str().unwrap();
    assert!(
        asked.contains(&format!("Thursday {day} at 09:30–10:15 (Europe/Berlin)")),
        "the question shows what Thursday became: {asked}"
    );
}

#[test]
fn the_spring_gap_is_refused_and_the_autumn_repeat_asked_through_the_python_sdk() {
    let Some(py) = redmark_tests::peers::python_sdk_2_3("REDMARK_REQUIRE_OAUTH") else {
        return;
    };
    let data = TempDir::new("tz-dst-sdk");
    let (_s, url) = berlin(data.path());
    let gap = json!({"day": "2099-03-29", "start": "02:30", "room_id": "nook"});
    let out = sdk_book(&py, &url, &gap, &[]);
    assert_eq!(out["isError"], true, "{out}");
    let text = out["text"].as_str().unwrap();
    assert!(
        text.contains("02:30 does not exist on 2099-03-29") && text.contains("from 02:00 to 03:00"),
        "{text}"
    );
    let repeat = json!({"day": "2099-10-25", "start": "02:30", "minutes": 30, "room_id": "nook"});
    let out = sdk_book(&py, &url, &repeat, &["second"]);
    assert!(
        out["asked"][0]["message"]
            .as_str()
            .unwrap()
            .contains("02:30 comes twice on 2099-10-25"),
        "{out}"
    );
    assert_eq!(
        out["structured"]["booking"]["start"], "2099-10-25T02:30:00+01:00",
        "{out}"
    );
}

#[test]
fn the_spring_gap_is_refused_and_the_autumn_repeat_asked_through_redmark_call() {
    let data = TempDir::new("tz-dst-call");
    let (_s, url) = berlin(data.path());
    let call = |extra: &[&str]| {
        let base = ["call", "--url", &url, "book_room", "room_id=nook"];
        redmark(&cat(&[&base, extra]))
    };
    let gap = call(&["day=2099-03-29", "start=02:30"]);
    assert_eq!(gap.code, 1, "{gap:?}");
    assert!(
        gap.stdout.contains("02:30 does not exist on 2099-03-29"),
        "{gap:?}"
    );
    let first = call(&[
        "--answer",
        "time.start=first",
        "day=2099-10-25",
        "start=02:30",
    ]);
    assert_eq!(first.code, 0, "{first:?}");
    // An hour from the first 02:30 ends at the second: the clocks went back in between.
    let shown = "Sunday 2099-10-25 at 02:30+02:00–02:30+01:00 (Europe/Berlin)";
    assert!(first.stdout.contains(shown), "{first:?}");
    // The second 02:30 is when the first booking ends: free, and booked; then taken.
    let again = [
        "--answer",
        "time.start=second",
        "day=2099-10-25",
        "start=02:30",
    ];
    let second = call(&again);
    assert_eq!(second.code, 0, "{second:?}");
    assert!(
        second.stdout.contains("at 02:30–03:30 (Europe/Berlin)"),
        "{second:?}"
    );
    // Taken now: what fits instead is offered, and `redmark call` has no one to ask.
    let third = call(&again);
    assert!(third.stderr.contains("already booked"), "{third:?}");
}

#[test]
fn redmark_call_runs_a_floor_file_in_process_with_rooms() {
    let data = TempDir::new("tz-call-rooms");
    let rooms = data.path().join("rooms.toml");
    std::fs::write(&rooms, FLOOR).unwrap();
    let rooms = rooms.to_str().unwrap();
    let gap = redmark(&cat(&[&[
        "call",
        "--scratch",
        "--rooms",
        rooms,
        "book_room",
        "day=2099-03-29",
        "start=02:30",
        "room_id=nook",
    ]]));
    assert_eq!(gap.code, 1, "{gap:?}");
    assert!(
        gap.stdout.contains("02:30 does not exist on 2099-03-29"),
        "{gap:?}"
    );
    let bad = redmark(&cat(&[&[
        "call",
        "--scratch",
        "--rooms",
        "/nonexistent.toml",
        "list_rooms",
    ]]));
    assert_eq!(bad.code, 2, "a usage error: {bad:?}");
    assert!(bad.stderr.contains("/nonexistent.toml"), "{bad:?}");
}
