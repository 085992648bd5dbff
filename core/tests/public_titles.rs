//! Who sees what: a booking's title is its organiser's; another principal sees "booked" on
//! `day_schedule`, in `list_rooms` and in a taken room's answer, unless the floor makes titles
//! public. The organiser is never named.

mod common;

use common::{form_caps, Client, INFO};
use redmark_core::booking::{BookingApp, Floor, MemStore, DEFAULT_FLOOR};
use redmark_core::engine::Config;
use redmark_core::limits::MAX_NAMED;
use redmark_core::seal::{Key, KeyRing};
use redmark_core::Engine;
use serde_json::{json, Value};

const DAY: &str = "2099-03-04";
const TITLE: &str = "Design review";

/// A client of the default floor, its titles public or not, as alice.
fn client(public_titles: bool) -> Client {
    let floor = Floor {
        public_titles,
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

fn as_who(c: &mut Client, who: &str) {
    c.principal = who.as_bytes().to_vec();
}

/// The result of `tool` with `args`, asking nothing.
fn call(c: &mut Client, tool: &str, args: Value) -> Value {
    c.call(tool, args, json!({}), None, None)["result"].clone()
}

/// Alice books the atrium 09:00–09:45 as "Design review".
fn alice_books(c: &mut Client) {
    as_who(c, "alice");
    let args =
        json!({"day": DAY, "start": "9", "minutes": 45, "room_id": "atrium", "title": TITLE});
    let r = call(c, "book_room", args);
    assert_eq!(r["structuredContent"]["booked"], true, "{r}");
}

/// What the caller sees of the atrium in day_schedule, list_rooms at 09:15 and a booking of it
/// then: the atrium's day_schedule object, list_rooms' atrium object, the Taken result, and
/// all three answers' text.
fn what_is_seen(c: &mut Client) -> (Value, Value, Value, String) {
    let atrium = |r: &Value| {
        r["structuredContent"]["rooms"]
            .as_array()
            .unwrap_or_else(|| panic!("{r}"))
            .iter()
            .find(|x| x["id"] == "atrium")
            .unwrap()
            .clone()
    };
    let text = |r: &Value| r["content"][0]["text"].as_str().unwrap().to_owned();
    let day = call(c, "day_schedule", json!({"day": DAY}));
    let at = json!({"day": DAY, "start": "9:15", "minutes": 15});
    let list = call(c, "list_rooms", at.clone());
    let mut book = at;
    book["room_id"] = json!("atrium");
    let taken = call(c, "book_room", book);
    assert_eq!(taken["structuredContent"]["reason"], "taken", "{taken}");
    let all = [&day, &list, &taken].map(text).join("\n");
    (
        atrium(&day),
        atrium(&list),
        taken["structuredContent"].clone(),
        all,
    )
}

#[test]
fn a_private_floor_shows_another_principal_only_booked_and_the_owner_its_title() {
    let mut c = client(false);
    alice_books(&mut c);
    as_who(&mut c, "bob");
    let (day, list, taken, text) = what_is_seen(&mut c);
    assert_eq!(day["booked"], json!([{"start": "09:00", "end": "09:45"}]));
    for seen in [&day, &list, &taken] {
        assert!(!seen.to_string().contains(TITLE), "{seen}");
    }
    assert!(day.get("meetings").is_none(), "{day}");
    assert!(list.get("in_the_way").is_none(), "{list}");
    assert_eq!(list["free"], false, "{list}");
    assert!(taken.get("in_the_way").is_none(), "{taken}");
    assert!(!text.contains(TITLE), "{text}");
    assert!(
        text.contains("booked on 2099-03-04 09:00–09:45\n"),
        "{text}"
    );

    // The organiser sees its own title everywhere, marked as its own.
    as_who(&mut c, "alice");
    let (day, list, taken, text) = what_is_seen(&mut c);
    let own = json!({"title": TITLE, "yours": true});
    assert_eq!(
        day["meetings"],
        json!([{"start": "09:00", "end": "09:45", "title": TITLE, "yours": true}])
    );
    assert_eq!(list["in_the_way"], own, "{list}");
    assert_eq!(taken["in_the_way"], own, "{taken}");
    assert!(
        text.contains("  09:00–09:45 \"Design review\" (yours)\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "booked on Wednesday 2099-03-04 at 09:15–09:30 (UTC) by your \"Design review\""
        ),
        "{text}"
    );
}

#[test]
fn a_public_floor_shows_every_principal_the_title_but_never_the_organiser() {
    let mut c = client(true);
    alice_books(&mut c);
    as_who(&mut c, "bob");
    let (day, list, taken, text) = what_is_seen(&mut c);
    let public = json!({"title": TITLE, "yours": false});
    assert_eq!(
        day["meetings"],
        json!([{"start": "09:00", "end": "09:45", "title": TITLE, "yours": false}])
    );
    assert_eq!(list["in_the_way"], public, "{list}");
    assert_eq!(taken["in_the_way"], public, "{taken}");
    assert!(text.contains("  09:00–09:45 \"Design review\"\n"), "{text}");
    assert!(
        text.contains("Wednesday 2099-03-04 at 09:15–09:30 (UTC) by \"Design review\". "),
        "{text}"
    );
    assert!(
        !text.contains("alice"),
        "the organiser stays private: {text}"
    );
    // The form that offers what fits instead names it too.
    let book = json!({"day": DAY, "start": "9:15", "minutes": 15, "room_id": "atrium"});
    let asked = c.call("book_room", book, form_caps(), None, None);
    let message = &asked["result"]["inputRequests"]["instead"]["params"]["message"];
    assert!(
        message
            .as_str()
            .is_some_and(|m| m.contains("(UTC) by \"Design review\".")),
        "{asked}"
    );
    // The owner's view is the same with "yours".
    as_who(&mut c, "alice");
    let (day, _, taken, _) = what_is_seen(&mut c);
    assert_eq!(day["meetings"][0]["yours"], true, "{day}");
    assert_eq!(taken["in_the_way"]["yours"], true, "{taken}");
}

#[test]
fn a_day_names_at_most_max_named_meetings_and_says_how_many_it_left_out() {
    let mut c = client(true);
    let extra = 3;
    for i in 0..MAX_NAMED + extra {
        let start = format!("{}:{:02}", 6 + i / 4, i % 4 * 15);
        // The longest titles, with quotes the answer escapes.
        let title = format!("\"Stand-up\" {i:02} {}", "x".repeat(34));
        assert_eq!(title.len(), redmark_core::limits::MAX_TITLE);
        let args =
            json!({"day": DAY, "start": start, "minutes": 15, "room_id": "nook", "title": title});
        let r = call(&mut c, "book_room", args);
        assert_eq!(r["structuredContent"]["booked"], true, "{r}");
    }
    as_who(&mut c, "bob");
    let r = call(&mut c, "day_schedule", json!({"day": DAY}));
    let quiet = call(&mut client(false), "day_schedule", json!({"day": DAY}));
    let added = r.to_string().len() - quiet.to_string().len();
    println!("{MAX_NAMED} named meetings add {added} bytes to a day_schedule answer");
    assert!(added < 3584, "{added} bytes");
    let s = &r["structuredContent"];
    let nook = &s["rooms"][2];
    assert_eq!(nook["meetings"].as_array().unwrap().len(), MAX_NAMED, "{r}");
    assert_eq!(s["unnamed"], extra, "{r}");
    // Every booking is still shown as booked time.
    assert_eq!(
        nook["booked"],
        json!([{"start": "06:00", "end": "10:45"}]),
        "{r}"
    );
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("3 more bookings are shown as booked times only (an answer names at most 16"),
        "{text}"
    );
}
