//! `list_bookings`: only the caller's active bookings, earliest first, one day's or those still
//! to come, a page at a time that fits [`LIST_OUT`].

mod common;

use common::{meta, Client};
use redmark_core::limits::{LIST_OUT, MAX_ID, MAX_LISTED, MAX_TITLE};
use redmark_core::Context;
use serde_json::{json, Value};

fn book(c: &mut Client, day: &str, hour: u8, room: &str) -> String {
    let r = c.call(
        "book_room",
        json!({"day": day, "hour": hour, "room_id": room, "attendees": 2}),
        json!({}),
        None,
        None,
    );
    r["result"]["structuredContent"]["booking"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("booked: {r}"))
        .to_owned()
}

fn list(c: &mut Client, args: Value) -> Value {
    let r = c.call("list_bookings", args, json!({}), None, None);
    assert!(r["result"].is_object(), "{r}");
    r["result"].clone()
}

fn ids(page: &Value) -> Vec<String> {
    page["structuredContent"]["bookings"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {page}"))
        .iter()
        .map(|b| b["id"].as_str().unwrap().to_owned())
        .collect()
}

fn text(page: &Value) -> &str {
    page["content"][0]["text"].as_str().unwrap()
}

#[test]
fn nobody_has_bookings_at_first() {
    let mut c = Client::default();
    let page = list(&mut c, json!({}));
    assert_eq!(page["isError"], false);
    assert_eq!(text(&page), "You have no bookings still to come.");
    assert_eq!(page["structuredContent"], json!({"bookings": []}));
    let page = list(&mut c, json!({"day": "2026-09-24"}));
    assert_eq!(text(&page), "You have no bookings on 2026-09-24.");
}

#[test]
fn only_your_active_bookings_earliest_first() {
    let mut c = Client::default();
    let late = book(&mut c, "2026-09-25", 9, "nook");
    let studio = book(&mut c, "2026-09-24", 10, "studio-b");
    let atrium = book(&mut c, "2026-09-24", 10, "atrium");
    let early = book(&mut c, "2026-09-24", 9, "nook");
    let gone = book(&mut c, "2026-09-24", 11, "nook");
    c.principal = b"bob".to_vec();
    let bobs = book(&mut c, "2026-09-24", 12, "nook");
    assert_eq!(ids(&list(&mut c, json!({}))), [bobs]);
    c.principal = b"alice".to_vec();
    c.confirmed("cancel_booking", json!({"booking_id": gone}));
    let page = list(&mut c, json!({"day": "2026-09-24"}));
    // (slot, room id): 09:00 nook, then 10:00 atrium before studio-b.
    assert_eq!(ids(&page), [early.clone(), atrium.clone(), studio.clone()]);
    assert_eq!(
        text(&page),
        format!(
            "Your bookings on 2026-09-24:\n{early} — The Nook on Thursday 2026-09-24 at 09:00–10:00 (UTC)\n\
             {atrium} — The Atrium on Thursday 2026-09-24 at 10:00–11:00 (UTC)\n\
             {studio} — Studio B on Thursday 2026-09-24 at 10:00–11:00 (UTC)"
        )
    );
    assert_eq!(
        page["structuredContent"]["bookings"][0],
        json!({"id": early, "room_id": "nook", "room_name": "The Nook", "day": "2026-09-24",
               "start": "2026-09-24T09:00:00+00:00", "end": "2026-09-24T10:00:00+00:00",
               "minutes": 60, "attendees": 2, "status": "active"})
    );
    assert!(page["structuredContent"].get("next").is_none());
    let all = list(&mut c, json!({}));
    assert_eq!(ids(&all), [early, atrium, studio, late]);
    assert!(text(&all).starts_with("Your bookings still to come:\n"));
}

#[test]
fn an_hour_under_way_is_still_to_come_and_a_past_one_is_not() {
    let mut c = Client::default();
    // The clock is 2026-09-21 14:13: book 15:00 and 16:00, then move on to 15:30.
    let at_15 = book(&mut c, "2026-09-21", 15, "nook");
    let at_16 = book(&mut c, "2026-09-21", 16, "nook");
    c.now += 80 * 60;
    assert_eq!(
        ids(&list(&mut c, json!({}))),
        [at_15.clone(), at_16.clone()]
    );
    c.now += 60 * 60;
    assert_eq!(ids(&list(&mut c, json!({}))), std::slice::from_ref(&at_16));
    // A day asked for is listed whole, its past hours too.
    assert_eq!(
        ids(&list(&mut c, json!({"day": "2026-09-21"}))),
        [at_15, at_16]
    );
}

#[test]
fn a_long_list_comes_a_page_at_a_time_and_every_booking_once() {
    let mut c = Client::default();
    let mut booked = Vec::new();
    // Two rooms an hour, in the order they are listed: (hour, room id).
    for i in 0..2 * MAX_LISTED + 1 {
        let room = ["atrium", "nook"][i % 2];
        booked.push(book(&mut c, "2026-09-24", 6 + (i / 2) as u8, room));
    }
    booked.push(book(&mut c, "2026-09-25", 8, "atrium"));
    let mut seen = Vec::new();
    let mut args = json!({});
    for pages in 1.. {
        assert!(pages <= booked.len(), "the pages never end");
        let page = list(&mut c, args.clone());
        let got = ids(&page);
        assert!(got.len() <= MAX_LISTED, "{page}");
        seen.extend(got.iter().cloned());
        let Some(next) = page["structuredContent"]["next"].as_str() else {
            break;
        };
        assert_eq!(got.last().map(String::as_str), Some(next), "{page}");
        assert!(
            text(&page).ends_with(&format!(
                "More follow: call list_bookings again with after={next}."
            )),
            "{page}"
        );
        args = json!({"after": next});
    }
    assert_eq!(seen, booked);
    // With a day, the pages stay within it.
    let page = list(
        &mut c,
        json!({"day": "2026-09-24", "after": booked[MAX_LISTED * 2 - 1]}),
    );
    assert_eq!(ids(&page), [booked[MAX_LISTED * 2].clone()]);
    assert!(text(&page).starts_with("More of your bookings:\n"));
    let page = list(
        &mut c,
        json!({"day": "2026-09-24", "after": booked[MAX_LISTED * 2]}),
    );
    assert_eq!(text(&page), "You have no more bookings.");
}

#[test]
fn after_must_name_one_of_your_bookings() {
    let mut c = Client::default();
    let mine = book(&mut c, "2026-09-24", 9, "nook");
    c.principal = b"bob".to_vec();
    for after in [mine.as_str(), "bk_99", "nine"] {
        let page = list(&mut c, json!({"after": after}));
        assert_eq!(page["isError"], true, "{page}");
        assert!(
            text(&page).starts_with(&format!("There is no booking '{after}' of yours")),
            "{page}"
        );
    }
    let page = list(&mut c, json!({"day": "1999-01-01"}));
    assert_eq!(page["isError"], true, "{page}");
}

#[test]
fn a_full_page_fits_its_output_buffer() {
    let mut c = Client::default();
    // The longest titles, each character escaped in JSON, in the text and the structure.
    let title = "\"".repeat(MAX_TITLE);
    for hour in 8..8 + MAX_LISTED as u8 + 1 {
        let args = json!({"day": "2026-09-24", "hour": hour, "room_id": "atrium",
            "title": title, "attendees": 24});
        let r = c.call("book_room", args, json!({}), None, None);
        assert_eq!(r["result"]["structuredContent"]["booked"], true, "{r}");
    }
    let id = "i".repeat(MAX_ID - 2);
    let msg = json!({"jsonrpc": "2.0", "id": id,
        "method": "tools/call", "params": {"name": "list_bookings", "arguments": {},
        "_meta": meta(json!({}))}});
    let cx = Context {
        now: c.now,
        principal: b"alice",
        entropy: [1; 8],
        access: redmark_core::Access::USER,
    };
    let mut out = vec![0u8; LIST_OUT];
    let h = c.engine.handle(msg.to_string().as_bytes(), &cx, &mut out);
    let v: Value = serde_json::from_slice(&out[..h.len]).unwrap();
    assert_eq!(
        v["result"]["structuredContent"]["bookings"]
            .as_array()
            .map(Vec::len),
        Some(MAX_LISTED),
        "{v}"
    );
    assert!(v["result"]["structuredContent"]["next"].is_string(), "{v}");
}
