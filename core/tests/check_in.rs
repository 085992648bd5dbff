//! Check-in and release of no-shows on a controlled clock: a booking checked in to keeps its
//! room; one nobody checks in to is released once its window passes (and says so in
//! `list_bookings`); releasing again, or checking in after, changes nothing.

mod common;

use common::waiting::block_on;
use common::{Client, INFO};
use redmark_core::booking::{
    release_due, BookingApp, Floor, MemStore, Said, Status, Store, DEFAULT_FLOOR,
};
use redmark_core::engine::Config;
use redmark_core::seal::{Key, KeyRing};
use redmark_core::Engine;
use serde_json::{json, Value};

/// 2026-09-24 09:00 UTC, in unix seconds.
const NINE: u64 = 1_790_240_400;
/// The floor's check-in window, in minutes.
const WINDOW: u16 = 10;

/// A client of the default floor with a check-in window of [`WINDOW`] minutes.
fn client() -> Client {
    let floor = Floor {
        check_in_minutes: Some(WINDOW),
        ..DEFAULT_FLOOR
    };
    let keys = KeyRing::new(Key::new(1, &[0x42; 32]).unwrap());
    Client {
        engine: Engine::new(
            BookingApp::new(floor, MemStore::new(), INFO),
            keys,
            Config::default(),
        ),
        now: NINE - 3600,
        ..Client::default()
    }
}

fn call(c: &mut Client, tool: &str, args: Value) -> Value {
    let r = c.call(tool, args, json!({}), None, None);
    assert!(r["result"].is_object(), "{r}");
    r["result"].clone()
}

fn text(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap()
}

/// Books `room` at 09:00 for an hour; its id.
fn book(c: &mut Client, room: &str) -> String {
    let args = json!({"day": "2026-09-24", "start": "9:00", "room_id": room});
    let r = call(c, "book_room", args);
    r["structuredContent"]["booking"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("booked: {r}"))
        .to_owned()
}

/// Runs the host's release at `c.now`; the ids released.
fn release(c: &mut Client) -> Vec<u32> {
    let mut ids = Vec::new();
    let store = c.engine.app_mut().store_mut();
    let (n, _) = block_on(release_due(store, Some(WINDOW), c.now, 7, |b| {
        ids.push(b.id)
    }));
    assert_eq!(n.unwrap() as usize, ids.len());
    ids
}

/// What booking `id`'s trail says changed, oldest first.
fn trail(c: &mut Client, id: u32) -> Vec<String> {
    let store = c.engine.app_mut().store_mut();
    let steps = block_on(store.trail(id)).0.unwrap();
    steps
        .iter()
        .map(|s| Said(s).to_string().split(" by ").next().unwrap().to_owned())
        .map(|s| s.split(" at ").next().unwrap().to_owned())
        .collect()
}

fn status(c: &mut Client, id: u32) -> (Status, bool) {
    let store = c.engine.app_mut().store_mut();
    let b = block_on(store.get(id)).0.unwrap().unwrap();
    (b.status, b.checked_in)
}

#[test]
fn a_checked_in_booking_stays_and_a_no_show_is_released_once() {
    let mut c = client();
    let kept = book(&mut c, "atrium");
    let gone = book(&mut c, "nook");

    // Too early: check-in opens 10 minutes before the start.
    let r = call(&mut c, "check_in", json!({"booking_id": kept}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("from 10 minutes before its start"), "{r}");

    c.now = NINE - 5 * 60;
    let r = call(&mut c, "check_in", json!({"booking_id": kept}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(
        text(&r).ends_with("is checked in: it keeps its room."),
        "{r}"
    );
    assert_eq!(r["structuredContent"]["booking"]["checked_in"], true);
    // Again: no change.
    let r = call(&mut c, "check_in", json!({"booking_id": kept}));
    assert!(
        text(&r).ends_with("was already checked in: it keeps its room."),
        "{r}"
    );

    // Inside the window nothing is due.
    c.now = NINE + 9 * 60;
    assert_eq!(release(&mut c), Vec::<u32>::new());
    // The window over: the no-show is released, the checked-in one kept.
    c.now = NINE + 10 * 60;
    assert_eq!(release(&mut c), vec![2]);
    assert_eq!(status(&mut c, 1), (Status::Active, true));
    assert_eq!(status(&mut c, 2), (Status::Released, false));
    // A second run (a retry, another instance) releases nothing more.
    assert_eq!(release(&mut c), Vec::<u32>::new());

    // Each trail says what happened: checked in by its holder; released by the floor, on the
    // instance that ran the release, once.
    let kept_trail = trail(&mut c, 1);
    assert_eq!(kept_trail, ["made", "checked in"]);
    assert_eq!(trail(&mut c, 2), ["made", "released (nobody checked in)"]);
    let store = c.engine.app_mut().store_mut();
    let steps = block_on(store.trail(2)).0.unwrap();
    assert_eq!((steps[1].by.instance, steps[1].by.at), (7, NINE + 10 * 60));
    let said = Said(&steps[1]).to_string();
    assert_eq!(
        said,
        "released (nobody checked in) at 2026-09-24T09:10:00+00:00 on instance 7"
    );

    // Checking in after the release changes nothing.
    let r = call(&mut c, "check_in", json!({"booking_id": gone}));
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(status(&mut c, 2), (Status::Released, false));

    // The holder reads that it was released; its time is free again.
    let r = call(&mut c, "list_bookings", json!({"day": "2026-09-24"}));
    assert!(
        text(&r).contains("bk_2 — The Nook on Thursday 2026-09-24 at 09:00–10:00 (UTC) — released (not checked in)"),
        "{r}"
    );
    assert_eq!(r["structuredContent"]["bookings"][1]["status"], "released");
    c.principal = b"bob".to_vec();
    let r = call(
        &mut c,
        "book_room",
        json!({"day": "2026-09-24", "start": "9:30", "minutes": 30, "room_id": "nook"}),
    );
    assert_eq!(r["isError"], false, "{r}");
}

#[test]
fn a_floor_without_check_in_never_releases() {
    let mut c = Client {
        now: NINE - 3600,
        ..Client::default()
    };
    book(&mut c, "atrium");
    c.now = NINE + 30 * 60;
    let mut ids = Vec::new();
    let store = c.engine.app_mut().store_mut();
    let (n, _) = block_on(release_due(
        store,
        DEFAULT_FLOOR.check_in_minutes,
        c.now,
        0,
        |b| ids.push(b.id),
    ));
    assert_eq!(n, Ok(0));
    let r = call(&mut c, "check_in", json!({"booking_id": "bk_1"}));
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(status(&mut c, 1), (Status::Active, false));
}
