//! `day_schedule`: when each room is booked on one day (the floor grid and the calendars read
//! a room's day this way).

mod common;

use common::Client;
use serde_json::{json, Value};

fn book(c: &mut Client, day: &str, hour: u8, room: &str) {
    let args = json!({"day": day, "hour": hour, "room_id": room});
    let r = c.call("book_room", args, json!({}), None, None);
    assert_eq!(r["result"]["structuredContent"]["booked"], true, "{r}");
}

fn day(c: &mut Client, args: Value) -> Value {
    let r = c.call("day_schedule", args, json!({}), None, None);
    assert!(r["result"].is_object(), "{r}");
    r["result"].clone()
}

#[test]
fn a_day_lists_each_rooms_booked_hours_and_only_that_days() {
    let mut c = Client::default();
    book(&mut c, "2099-03-04", 9, "nook");
    book(&mut c, "2099-03-04", 14, "nook");
    book(&mut c, "2099-03-04", 0, "atrium");
    book(&mut c, "2099-03-04", 23, "atrium");
    // Other days are not that day's.
    book(&mut c, "2099-03-03", 10, "nook");
    book(&mut c, "2099-03-05", 10, "nook");
    let r = day(&mut c, json!({"day": "2099-03-04"}));
    let rooms = r["structuredContent"]["rooms"].as_array().unwrap();
    let hours = |id: &str| {
        rooms.iter().find(|r| r["id"] == id).unwrap()["booked"]
            .as_array()
            .unwrap()
            .clone()
    };
    assert_eq!(r["structuredContent"]["day"], "2099-03-04", "{r}");
    // What a grid needs to draw the floor's day: its zone, its steps, its longest booking.
    let s = &r["structuredContent"];
    assert_eq!(
        (&s["time_zone"], &s["grid_minutes"], &s["max_minutes"]),
        (&json!("UTC"), &json!(15), &json!(480)),
        "{r}"
    );
    let run = |a: &str, b: &str| json!({"start": a, "end": b});
    assert_eq!(
        hours("nook"),
        [run("09:00", "10:00"), run("14:00", "15:00")],
        "{r}"
    );
    assert_eq!(
        hours("atrium"),
        [run("00:00", "01:00"), run("23:00", "24:00")],
        "{r}"
    );
    assert!(hours("studio-b").is_empty(), "{r}");
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("booked on 2099-03-04 09:00–10:00, 14:00–15:00"),
        "{text}"
    );
    assert!(text.contains("free all day on 2099-03-04"), "{text}");
}

#[test]
fn a_day_keeps_to_the_rooms_with_the_seats_asked_and_says_a_bad_day() {
    let mut c = Client::default();
    let r = day(&mut c, json!({"day": "2099-03-04", "attendees": 10}));
    let rooms = r["structuredContent"]["rooms"].as_array().unwrap();
    assert!(
        !rooms.is_empty() && rooms.iter().all(|r| r["seats"].as_u64() >= Some(10)),
        "{r}"
    );
    for bad in ["2099-02-30", "1999-12-31", "someday"] {
        let r = day(&mut c, json!({"day": bad}));
        assert_eq!(r["isError"], true, "{r}");
        let text = r["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("Not a day") && text.contains("2000-2999"),
            "{r}"
        );
    }
}

#[test]
fn a_day_shows_minutes_and_the_part_of_a_booking_that_runs_into_it() {
    let mut c = Client::default();
    let book = |c: &mut Client, day: &str, start: &str, minutes: u16| {
        let args = json!({"day": day, "start": start, "minutes": minutes, "room_id": "nook"});
        let r = c.call("book_room", args, json!({}), None, None);
        assert_eq!(r["result"]["structuredContent"]["booked"], true, "{r}");
    };
    book(&mut c, "2099-03-03", "23:00", 120);
    book(&mut c, "2099-03-04", "9:30", 45);
    book(&mut c, "2099-03-04", "10:15", 15);
    let r = day(&mut c, json!({"day": "2099-03-04"}));
    let nook = &r["structuredContent"]["rooms"].as_array().unwrap()[2];
    let run = |a: &str, b: &str| json!({"start": a, "end": b});
    // Back-to-back bookings read as one busy run.
    assert_eq!(
        nook["booked"],
        json!([run("00:00", "01:00"), run("09:30", "10:30")]),
        "{r}"
    );
}
