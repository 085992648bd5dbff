//! A site, not just a floor: buildings each on their own clock, a hint that fits rooms in two
//! buildings asked about first, rooms found by seats and equipment, answers bounded, 500 rooms.

mod common;

use common::{accept, form_caps, Client, INFO};
use redmark_core::booking::{BookingApp, Floor, MemStore, Minute, Resolved, Room, Zone};
use redmark_core::engine::Config;
use redmark_core::limits::{MAX_LISTED_ROOMS, MAX_SCHEDULE_ROOMS};
use redmark_core::seal::{Key, KeyRing};
use redmark_core::Engine;
use serde_json::{json, Value};

/// A zone at a fixed offset from UTC, named as the real one (the tests' dates are in summer).
struct Fixed(&'static str, i32);

impl Zone for Fixed {
    fn name(&self) -> &str {
        self.0
    }
    fn offset(&self, _: Minute) -> i32 {
        self.1
    }
    fn resolve(&self, wall: Minute) -> Resolved {
        Resolved::One(wall.saturating_add_signed(-self.1))
    }
}

static BERLIN: Fixed = Fixed("Europe/Berlin", 120);
static NEW_YORK: Fixed = Fixed("America/New_York", -240);

fn leak<T>(v: Vec<T>) -> &'static [T] {
    Box::leak(v.into_boxed_slice())
}

fn text(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// A room: `equipment` from its index (every second has video, every third a whiteboard).
fn room(id: String, level: u32, i: u32, aliases: &'static [&'static str]) -> Room<'static> {
    let mut equipment = Vec::new();
    if i.is_multiple_of(2) {
        equipment.push("video");
    }
    if i.is_multiple_of(3) {
        equipment.push("Whiteboard");
    }
    Room {
        name: text(format!("Room {id}")),
        id: text(id),
        seats: 4 + (i % 5) as u16 * 4,
        aliases,
        level: text(level.to_string()),
        equipment: leak(equipment),
    }
}

/// A building of `levels` × `per_level` rooms named `{id}-{level}-{n}`.
fn building(
    id: &'static str,
    name: &'static str,
    zone: &'static dyn Zone,
    levels: u32,
    per_level: u32,
) -> Floor<'static> {
    let rooms = (1..=levels)
        .flat_map(|l| (0..per_level).map(move |n| (l, n)))
        .map(|(l, n)| room(format!("{id}-{l}-{n}"), l, n, &[]))
        .collect();
    Floor {
        id,
        name,
        rooms: leak(rooms),
        zone,
        ..redmark_core::booking::DEFAULT_FLOOR
    }
}

/// A client of `site`.
fn client(site: &'static [Floor<'static>]) -> Client {
    let keys = KeyRing::new(Key::new(1, &[0x42; 32]).unwrap());
    Client {
        engine: Engine::new(
            BookingApp::site(site, MemStore::new(), INFO),
            keys,
            Config::default(),
        ),
        ..Client::default() // now: Monday 2026-09-21 14:13:20 UTC
    }
}

/// Berlin HQ and New York, each with a room people call "the big room" (two in New York).
fn two_buildings() -> &'static [Floor<'static>] {
    let big: &'static [&'static str] = &["the big room"];
    let mut ber = building("ber", "Berlin HQ", &BERLIN, 1, 3);
    let mut ber_rooms = ber.rooms.to_vec();
    ber_rooms[0] = room("ber-atrium".into(), 1, 6, big);
    ber.rooms = leak(ber_rooms);
    let mut nyc = building("nyc", "New York", &NEW_YORK, 1, 3);
    let mut nyc_rooms = nyc.rooms.to_vec();
    nyc_rooms[0] = room("nyc-hall".into(), 1, 6, big);
    nyc_rooms[1] = room("nyc-loft".into(), 1, 2, big);
    nyc.rooms = leak(nyc_rooms);
    leak(vec![ber, nyc])
}

/// The 500-room site: 4 buildings (two in Berlin, two in New York), 5 levels of 25 rooms.
fn campus() -> &'static [Floor<'static>] {
    leak(vec![
        building("ber-a", "Berlin A", &BERLIN, 5, 25),
        building("ber-b", "Berlin B", &BERLIN, 5, 25),
        building("nyc-a", "New York A", &NEW_YORK, 5, 25),
        building("nyc-b", "New York B", &NEW_YORK, 5, 25),
    ])
}

fn structured(r: &Value) -> &Value {
    &r["result"]["structuredContent"]
}

fn said(r: &Value) -> &str {
    r["result"]["content"][0]["text"].as_str().unwrap_or("")
}

#[test]
fn a_hint_in_two_buildings_asks_which_then_books_on_that_buildings_clock() {
    let mut c = client(two_buildings());
    let args = json!({"day": "2026-09-24", "start": "09:30", "room_hint": "the big room"});
    let asked = c.call("book_room", args.clone(), form_caps(), None, None);
    let q = &asked["result"]["inputRequests"]["building"]["params"];
    assert!(
        q["message"]
            .as_str()
            .unwrap()
            .contains("more than one building"),
        "{asked}"
    );
    let values: Vec<&str> = q["requestedSchema"]["properties"]["building"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["const"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["ber", "nyc"], "{asked}");
    // New York: two big rooms, so the room is asked next, the time read on New York's clock.
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    let pick = Some(accept("building", json!({"building": "nyc"})));
    let asked = c.call("book_room", args.clone(), form_caps(), pick, Some(&state));
    let q = &asked["result"]["inputRequests"]["room"]["params"];
    assert!(
        q["message"]
            .as_str()
            .unwrap()
            .contains("09:30–10:30 (America/New_York)"),
        "{asked}"
    );
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    let pick = Some(accept("room", json!({"room_id": "nyc-loft"})));
    let booked = c.call("book_room", args, form_caps(), pick, Some(&state));
    let b = &structured(&booked)["booking"];
    assert_eq!(b["room_id"], "nyc-loft", "{booked}");
    // 09:30 in New York (EDT) is 13:30 UTC.
    assert_eq!(b["start"], "2026-09-24T09:30:00-04:00", "{booked}");
    // An exact room id needs no question: Berlin's 09:30 is 07:30 UTC.
    let r = c.call(
        "book_room",
        json!({"day": "2026-09-24", "start": "09:30", "room_id": "ber-atrium"}),
        form_caps(),
        None,
        None,
    );
    assert_eq!(
        structured(&r)["booking"]["start"],
        "2026-09-24T09:30:00+02:00",
        "{r}"
    );
    // A building named picks among its rooms only; an unknown one is refused naming them.
    let r = c.call(
        "book_room",
        json!({"day": "2026-09-24", "start": "11", "room_hint": "big room", "building": "berlin hq"}),
        form_caps(),
        None,
        None,
    );
    assert_eq!(structured(&r)["booking"]["room_id"], "ber-atrium", "{r}");
    let r = c.call(
        "book_room",
        json!({"day": "2026-09-24", "start": "11", "building": "paris"}),
        form_caps(),
        None,
        None,
    );
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        said(&r),
        "There is no building 'paris'. Buildings: ber (Berlin HQ), nyc (New York)."
    );
}

#[test]
fn rooms_are_found_by_seats_and_equipment() {
    let mut c = client(campus());
    let r = c.call(
        "list_rooms",
        json!({"building": "nyc-a", "level": "2", "attendees": 12, "equipment": "VIDEO, whiteboard"}),
        json!({}),
        None,
        None,
    );
    let rooms = structured(&r)["rooms"].as_array().unwrap().clone();
    // Level 2 of New York A: n in 0..25 with n % 6 == 0 (video and whiteboard) and
    // 4 + (n % 5) * 4 >= 12 (n % 5 >= 2): 12, 18, 24.
    let ids: Vec<&str> = rooms.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["nyc-a-2-12", "nyc-a-2-18", "nyc-a-2-24"], "{r}");
    assert!(rooms
        .iter()
        .all(|r| r["level"] == "2" && r["building"] == "nyc-a"));
    // book_room's candidates honour it too: only rooms with a whiteboard are offered.
    let r = c.call(
        "book_room",
        json!({"day": "2026-09-24", "start": "10", "building": "ber-a", "equipment": "whiteboard", "attendees": 20}),
        form_caps(),
        None,
        None,
    );
    let offered = &r["result"]["inputRequests"]["room"]["params"]["requestedSchema"];
    let values: Vec<&str> = offered["properties"]["room_id"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["const"].as_str().unwrap())
        .collect();
    // n % 3 == 0 and n % 5 == 4: 9 and 24 on each of the 5 levels.
    assert_eq!(
        values,
        [
            "ber-a-1-9",
            "ber-a-1-24",
            "ber-a-2-9",
            "ber-a-2-24",
            "ber-a-3-9",
            "ber-a-3-24",
            "ber-a-4-9",
            "ber-a-4-24",
            "ber-a-5-9",
            "ber-a-5-24"
        ],
        "{r}"
    );
    // An exact room without it is refused, saying what is missing.
    let r = c.call(
        "book_room",
        json!({"day": "2026-09-24", "start": "10", "room_id": "ber-a-1-1", "equipment": "video"}),
        json!({}),
        None,
        None,
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        said(&r).starts_with("No room asked for has all of: video"),
        "{r}"
    );
}

#[test]
fn a_list_of_the_whole_site_is_bounded_and_says_how_to_narrow() {
    let mut c = client(campus());
    let r = c.call(
        "list_rooms",
        json!({"day": "2026-09-24", "start": "9"}),
        json!({}),
        None,
        None,
    );
    let s = structured(&r);
    assert_eq!(
        s["rooms"].as_array().unwrap().len(),
        MAX_LISTED_ROOMS,
        "{r}"
    );
    assert_eq!(s["more"], 500 - MAX_LISTED_ROOMS, "{r}");
    let text = said(&r);
    assert!(text.starts_with("Berlin A (Europe/Berlin), ber-a:\nLevel 1:\nber-a-1-0 — Room ber-a-1-0 (4 seats), free on Thursday 2026-09-24 at 09:00–10:00 (Europe/Berlin)\n"), "{text}");
    assert!(
        text.ends_with(&format!(
            "{} more: narrow by building, level, attendees or equipment.",
            500 - MAX_LISTED_ROOMS
        )),
        "{text}"
    );
    // Across buildings, each reads the time on its own clock.
    let r = c.call("list_rooms", json!({"day": "2026-09-24", "start": "9", "level": "5", "equipment": "video,whiteboard", "attendees": 20}), json!({}), None, None);
    let text = said(&r);
    assert!(text.contains("nyc-b-5-24 — Room nyc-b-5-24 (20 seats), free on Thursday 2026-09-24 at 09:00–10:00 (America/New_York)"), "{text}");
    assert!(!text.contains("more"), "{text}");
}

#[test]
fn a_site_of_500_rooms_books_and_shows_a_level_of_a_building() {
    let mut c = client(campus());
    let r = c.call(
        "book_room",
        json!({"day": "2026-09-24", "start": "09:30", "minutes": 45, "room_id": "nyc-b-3-7", "title": "Design review"}),
        json!({}),
        None,
        None,
    );
    assert_eq!(
        structured(&r)["booking"]["start"],
        "2026-09-24T09:30:00-04:00",
        "{r}"
    );
    let r = c.call(
        "day_schedule",
        json!({"day": "2026-09-24", "building": "New York B", "level": "3"}),
        json!({}),
        None,
        None,
    );
    let s = structured(&r);
    assert_eq!(s["time_zone"], "America/New_York", "{r}");
    assert_eq!(s["building"]["id"], "nyc-b", "{r}");
    let rooms = s["rooms"].as_array().unwrap();
    assert_eq!(rooms.len(), 25);
    let booked = rooms.iter().find(|r| r["id"] == "nyc-b-3-7").unwrap();
    assert_eq!(
        booked["booked"],
        json!([{"start": "09:30", "end": "10:15"}]),
        "{r}"
    );
    // The page's choice: every building with its levels.
    let buildings = s["buildings"].as_array().unwrap();
    assert_eq!(buildings.len(), 4);
    assert_eq!(buildings[2]["levels"], json!(["1", "2", "3", "4", "5"]));
    // A whole building is more than one answer shows: the rest counted.
    let r = c.call(
        "day_schedule",
        json!({"day": "2026-09-24", "building": "nyc-b"}),
        json!({}),
        None,
        None,
    );
    let s = structured(&r);
    assert_eq!(
        s["rooms"].as_array().unwrap().len(),
        MAX_SCHEDULE_ROOMS,
        "{r}"
    );
    assert_eq!(s["more"], 125 - MAX_SCHEDULE_ROOMS);
    // The booking is shown on its own building's clock to its holder.
    let r = c.call("list_bookings", json!({}), json!({}), None, None);
    assert_eq!(
        structured(&r)["bookings"][0]["start"],
        "2026-09-24T09:30:00-04:00",
        "{r}"
    );
}

/// A client without forms is told the buildings and `building`, then (in New York, two big
/// rooms) the rooms and `room_id`, each time with the arguments it gave; then it books.
#[test]
fn a_client_without_forms_is_told_building_then_room_id_and_books() {
    let mut c = client(two_buildings());
    // Each object's keys in the order it is written whether or not serde_json preserves
    // insertion order (workspace features decide): the text names them as the client sent them.
    let args = json!({"day": "2026-09-24", "room_hint": "the big room", "start": "09:30"});
    let r = c.call("book_room", args.clone(), json!({}), None, None);
    assert_eq!(r["result"]["isError"], true, "{r}");
    for part in [
        "more than one building",
        "- \"ber\": ",
        "- \"nyc\": ",
        "call book_room again with building set to their pick and the other arguments as \
         before (day, room_hint, start).",
    ] {
        assert!(said(&r).contains(part), "{part:?} not in {}", said(&r));
    }
    let mut args = json!({"building": "nyc", "day": "2026-09-24", "room_hint": "the big room", "start": "09:30"});
    let r = c.call("book_room", args.clone(), json!({}), None, None);
    assert_eq!(r["result"]["isError"], true, "{r}");
    for part in [
        "09:30–10:30 (America/New_York)",
        "- \"nyc-hall\": ",
        "- \"nyc-loft\": ",
        "with room_id set to their pick",
        "as before (building, day, room_hint, start).",
    ] {
        assert!(said(&r).contains(part), "{part:?} not in {}", said(&r));
    }
    args["room_id"] = json!("nyc-loft");
    let booked = c.call("book_room", args, json!({}), None, None);
    let b = &structured(&booked)["booking"];
    assert_eq!(b["room_id"], "nyc-loft", "{booked}");
    assert_eq!(b["start"], "2026-09-24T09:30:00-04:00", "{booked}");
}
