//! Recurring meetings: a weekly series of 12 with 3 dates taken asks once, listing exactly
//! those 3; each answer (skip, another room, cancel) books what the form showed, in one store
//! operation, and a retry replays the same series.

mod common;

use common::waiting::block_on;
use common::{accept, form_caps, Client};
use redmark_core::booking::{Actor, Day, Status, Store};
use redmark_core::limits::{LIST_OUT, MAX_ID, MAX_LISTED, MAX_SERIES_LISTED, MAX_TITLE};
use redmark_core::Context;
use serde_json::{json, Value};

/// Every Thursday at 09:30 for 45 minutes, 12 times, in the atrium.
fn series() -> Value {
    json!({"day": "2026-10-01", "start": "9:30", "minutes": 45, "room_id": "atrium",
           "title": "Weekly sync", "repeat": "weekly", "count": 12})
}

const TAKEN: [&str; 3] = ["2026-10-15", "2026-11-05", "2026-11-26"];

/// A client whose floor has bob's meetings in the atrium on the three [`TAKEN`] Thursdays.
fn floor_with_clashes() -> Client {
    let mut c = Client {
        principal: b"bob".to_vec(),
        ..Client::default()
    };
    for day in TAKEN {
        let args = json!({"day": day, "start": "9", "room_id": "atrium", "title": "Board"});
        let r = c.call("book_room", args, json!({}), None, None);
        assert_eq!(r["result"]["isError"], false, "{r}");
    }
    c.principal = b"alice".to_vec();
    c
}

/// Asks for the series with forms: the question and its state.
fn ask(c: &mut Client) -> (Value, String) {
    let asked = c.call("book_room", series(), form_caps(), None, None);
    let q = asked["result"]["inputRequests"]["series"]["params"].clone();
    assert!(q.is_object(), "one question, keyed series: {asked}");
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    (q, state)
}

/// Answers the series question with `choice`: the result.
fn answer(c: &mut Client, state: &str, choice: &str) -> Value {
    let a = Some(accept("series", json!({"choice": choice})));
    let r = c.call("book_room", series(), form_caps(), a, Some(state));
    r["result"].clone()
}

/// alice's active bookings: (room, day) and series id.
fn alices(c: &Client) -> Vec<(String, u32, Option<u32>)> {
    let holder = redmark_core::booking::holder(b"alice");
    c.engine
        .app()
        .store()
        .bookings()
        .iter()
        .filter(|b| b.new.holder == holder && b.status == Status::Active)
        .map(|b| (b.new.room.to_string(), b.new.span.start, b.series))
        .collect()
}

#[test]
fn three_taken_thursdays_are_asked_about_once_with_exactly_those_dates() {
    let mut c = floor_with_clashes();
    let (q, _) = ask(&mut c);
    let message = q["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "Weekly on Thu 09:30–10:15 (UTC) (12 dates) in The Atrium: 3 of them cannot be \
             booked there: 2026-10-15 (taken), 2026-11-05 (taken), 2026-11-26 (taken)."
        ),
        "{message}"
    );
    let values: Vec<&str> = q["requestedSchema"]["properties"]["choice"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["const"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["skip", "studio-b", "nook", "cancel"]);
    assert!(alices(&c).is_empty(), "nothing booked while asking");
}

#[test]
fn skip_books_the_nine_free_thursdays_as_one_series() {
    let mut c = floor_with_clashes();
    let (_, state) = ask(&mut c);
    let r = answer(&mut c, &state, "skip");
    assert_eq!(r["isError"], false, "{r}");
    let s = &r["structuredContent"];
    assert_eq!(s["bookings"].as_array().unwrap().len(), 9, "{r}");
    assert_eq!(s["skipped"], json!(TAKEN));
    let mine = alices(&c);
    assert_eq!(mine.len(), 9);
    assert!(mine.iter().all(|(room, _, _)| room == "atrium"));
    let series = mine[0].2.expect("an occurrence carries its series");
    assert!(mine.iter().all(|b| b.2 == Some(series)));
    assert_eq!(s["series"], format!("bk_{series}"));
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "Booked Weekly on Thu 09:30–10:15 (UTC), 12 from 2026-10-01 to 2026-12-17, in The \
             Atrium; except 2026-10-15 (skipped), 2026-11-05 (skipped), 2026-11-26 (skipped)"
        ),
        "{text}"
    );

    // Listed once, for all nine (in words and in structuredContent).
    let listed = c.call("list_bookings", json!({}), json!({}), None, None)["result"].clone();
    let words = listed["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        words.matches(&format!("series bk_{series}")).count(),
        1,
        "{words}"
    );
    let folded = &listed["structuredContent"]["bookings"][0]["series"];
    assert_eq!(folded["id"], format!("bk_{series}"), "{listed}");
    assert_eq!(folded["count"], 9);

    // The same answer again (a retry): the same series, nothing booked twice.
    let again = answer(&mut c, &state, "skip");
    assert_eq!(
        again["structuredContent"]["bookings"], s["bookings"],
        "{again}"
    );
    assert_eq!(alices(&c).len(), 9);
}

#[test]
fn another_room_books_the_three_there_in_the_same_series() {
    let mut c = floor_with_clashes();
    let (_, state) = ask(&mut c);
    let r = answer(&mut c, &state, "studio-b");
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["moved"], json!(TAKEN), "{r}");
    let mine = alices(&c);
    assert_eq!(mine.len(), 12);
    let elsewhere: Vec<_> = mine.iter().filter(|b| b.0 == "studio-b").collect();
    assert_eq!(elsewhere.len(), 3);
    let series = mine[0].2;
    assert!(series.is_some() && mine.iter().all(|b| b.2 == series));
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(
            "; except 2026-10-15 (in Studio B), 2026-11-05 (in Studio B), 2026-11-26 (in Studio B)"
        ),
        "{text}"
    );
}

#[test]
fn cancel_books_nothing() {
    let mut c = floor_with_clashes();
    let (_, state) = ask(&mut c);
    let r = answer(&mut c, &state, "cancel");
    assert_eq!(r["structuredContent"]["booked"], false, "{r}");
    assert!(alices(&c).is_empty());
}

#[test]
fn a_series_without_clashes_is_booked_at_once_and_a_rule_past_the_bound_is_refused() {
    let mut c = Client::default();
    let r = c.call("book_room", series(), form_caps(), None, None)["result"].clone();
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        r["structuredContent"]["bookings"].as_array().unwrap().len(),
        12
    );
    assert_eq!(alices(&c).len(), 12);

    let mut too_many = series();
    too_many["count"] = json!(53);
    too_many["day"] = json!("2026-10-02");
    let r = c.call("book_room", too_many, form_caps(), None, None)["result"].clone();
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("A repeating booking has at most 52 occurrences"),
        "{r}"
    );
}

#[test]
fn one_occurrence_cancels_alone_and_the_series_cancels_what_is_left() {
    let mut c = Client::default();
    let r = c.call("book_room", series(), json!({}), None, None)["result"].clone();
    let ids: Vec<String> = r["structuredContent"]["bookings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 12, "{r}");
    let one = c.call(
        "cancel_booking",
        json!({"booking_id": ids[2]}),
        json!({}),
        None,
        None,
    );
    assert_eq!(one["result"]["isError"], false, "{one}");
    assert_eq!(alices(&c).len(), 11);

    let bob = Client {
        principal: b"bob".to_vec(),
        ..Client::default()
    };
    let mut bob = Client {
        engine: std::mem::replace(&mut c.engine, common::engine()),
        ..bob
    };
    let args = json!({"booking_id": ids[4], "series": true});
    let r = bob.call("cancel_booking", args.clone(), json!({}), None, None)["result"].clone();
    assert_eq!(r["isError"], true, "not bob's: {r}");
    c.engine = bob.engine;
    assert_eq!(alices(&c).len(), 11);

    // Asked first when the client can be asked; then every active occurrence is cancelled.
    let asked = c.call("cancel_booking", args.clone(), form_caps(), None, None);
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    let q = &asked["result"]["inputRequests"]["confirm"]["params"]["message"];
    assert!(
        q.as_str().unwrap().starts_with(&format!(
            "Cancel every occurrence still to come of series {}",
            ids[0]
        )),
        "{asked}"
    );
    let yes = Some(accept("confirm", json!({"confirm": true})));
    let r = c.call("cancel_booking", args, form_caps(), yes, Some(&state))["result"].clone();
    assert_eq!(r["isError"], false, "{r}");
    let cancelled = r["structuredContent"]["cancelled"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(cancelled, 11, "{r}");
    assert!(alices(&c).is_empty());
}

#[test]
fn a_date_taken_between_the_question_and_the_answer_is_asked_about_again() {
    let mut c = floor_with_clashes();
    let (_, state) = ask(&mut c);
    // Meanwhile bob takes a fourth Thursday the form showed free.
    c.principal = b"bob".to_vec();
    let args = json!({"day": "2026-12-10", "start": "9", "room_id": "atrium"});
    let r = c.call("book_room", args, json!({}), None, None);
    assert_eq!(r["result"]["isError"], false, "{r}");
    c.principal = b"alice".to_vec();
    let a = Some(accept("series", json!({"choice": "skip"})));
    let asked = c.call("book_room", series(), form_caps(), a, Some(&state));
    assert!(alices(&c).is_empty(), "all or nothing");
    let q = &asked["result"]["inputRequests"]["series_again"]["params"]["message"];
    let q = q.as_str().unwrap_or_else(|| panic!("asked again: {asked}"));
    assert!(
        q.starts_with("Some dates were taken since you answered, so nothing was booked yet.")
            && q.contains("4 of them cannot be booked there")
            && q.contains("2026-12-10 (taken)"),
        "{q}"
    );
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    let a = Some(accept("series_again", json!({"choice": "skip"})));
    let r = c.call("book_room", series(), form_caps(), a, Some(&state))["result"].clone();
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        r["structuredContent"]["bookings"].as_array().unwrap().len(),
        8
    );
    assert_eq!(alices(&c).len(), 8);
}

/// alice's series of 12 from [`series`] with one Thursday in Studio B (bob holds the atrium
/// then), one cancelled and one released, and a booking of hers on each of the 10 Mondays
/// between: the series' id and its bookings' ids.
fn series_with_exceptions() -> (Client, u32, Vec<String>) {
    let mut c = Client {
        principal: b"bob".to_vec(),
        ..Client::default()
    };
    let args = json!({"day": "2026-10-15", "start": "9", "room_id": "atrium"});
    assert_eq!(
        c.call("book_room", args, json!({}), None, None)["result"]["isError"],
        false
    );
    c.principal = b"alice".to_vec();
    let (_, state) = ask(&mut c);
    let r = answer(&mut c, &state, "studio-b");
    let ids: Vec<String> = r["structuredContent"]["bookings"]
        .as_array()
        .unwrap_or_else(|| panic!("booked: {r}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 12);
    let series = ids[0][3..].parse().unwrap();
    let one = json!({"booking_id": ids[5]});
    let r = c.call("cancel_booking", one, json!({}), None, None);
    assert_eq!(r["result"]["isError"], false, "{r}");
    // 2026-11-12 09:40: the seventh Thursday's check-in window of 10 minutes has passed.
    let at = Day::parse("2026-11-12").unwrap().first_minute() + 9 * 60 + 40;
    let store = c.engine.app_mut().store_mut();
    let released = block_on(store.release_due(at, 10, &Actor::floor(0, 1))).0;
    assert_eq!(released.unwrap().map(|b| b.id), Some(series + 6));
    for week in 0..10 {
        let day = Day::parse("2026-10-05").unwrap().first_minute() / 1440 + 7 * week;
        let day = Day::containing(day * 1440).unwrap();
        let args = json!({"day": day.to_string(), "start": "14", "room_id": "nook"});
        let r = c.call("book_room", args, json!({}), None, None);
        assert_eq!(r["result"]["isError"], false, "{r}");
    }
    (c, series, ids)
}

#[test]
fn a_series_is_listed_once_with_its_exceptions() {
    let (mut c, series, ids) = series_with_exceptions();
    let listed = c.call("list_bookings", json!({}), json!({}), None, None)["result"].clone();
    let words = listed["content"][0]["text"].as_str().unwrap();
    let line = format!(
        "\n{} — Weekly on Thu 09:30–10:15 (UTC) in The Atrium, \"Weekly sync\", 12 from \
         2026-10-01 to 2026-12-17 — series bk_{series}; except 2026-10-15 in Studio B, \
         2026-11-05 cancelled, 2026-11-12 released (not checked in)\n",
        ids[0]
    );
    assert!(words.contains(&line), "{words}");
    assert_eq!(words.matches(" series bk_").count(), 1, "{words}");
    let b = &listed["structuredContent"]["bookings"][0];
    assert_eq!(b["id"], ids[0]);
    let s = &b["series"];
    assert_eq!(s["id"], format!("bk_{series}"));
    assert_eq!(
        (&s["count"], &s["first"], &s["last"]),
        (&json!(12), &json!("2026-10-01"), &json!("2026-12-17"))
    );
    assert_eq!(
        s["exceptions"],
        json!([
            {"id": ids[2], "day": "2026-10-15", "room_id": "studio-b"},
            {"id": ids[5], "day": "2026-11-05", "status": "cancelled"},
            {"id": ids[6], "day": "2026-11-12", "status": "released"},
        ])
    );
    assert_eq!(
        s["occurrences"],
        json!([{"first": ids[0], "last": ids[11]}])
    );

    // One day lists its occurrence as it is, naming its series.
    let day = json!({"day": "2026-10-15"});
    let r = c.call("list_bookings", day, json!({}), None, None)["result"].clone();
    assert_eq!(
        r["structuredContent"]["bookings"][0]["series"],
        format!("bk_{series}"),
        "{r}"
    );
    assert_eq!(r["structuredContent"]["bookings"][0]["room_id"], "studio-b");
}

#[test]
fn paging_past_the_series_lists_it_once() {
    let (mut c, series, ids) = series_with_exceptions();
    let mut listed = Vec::new();
    let mut after = None;
    for _ in 0..10 {
        let args = after.map_or(json!({}), |a: String| json!({"after": a}));
        let r = c.call("list_bookings", args, json!({}), None, None)["result"].clone();
        let page = r["structuredContent"]["bookings"]
            .as_array()
            .unwrap()
            .clone();
        listed.extend(page.iter().map(|b| b["id"].as_str().unwrap().to_owned()));
        match r["structuredContent"]["next"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => break,
        }
    }
    // The series' first occurrence and the ten Mondays, each once; no other occurrence.
    assert_eq!(listed.len(), 11, "{listed:?}");
    assert_eq!(
        listed.iter().filter(|id| ids.contains(id)).count(),
        1,
        "{listed:?}"
    );
    assert_eq!(listed[0], format!("bk_{series}"));

    // From later on (the series' first four past), it is listed at its next occurrence.
    c.now = 1_793_000_000; // 2026-10-26
    let r = c.call("list_bookings", json!({}), json!({}), None, None)["result"].clone();
    let b = &r["structuredContent"]["bookings"];
    let shown: Vec<_> = b
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["series"].is_object())
        .collect();
    assert_eq!(shown.len(), 1, "{r}");
    assert_eq!(shown[0]["id"], ids[4], "{r}");
    assert_eq!(shown[0]["series"]["count"], 12);
}

#[test]
fn a_full_page_of_series_fits_its_output_buffer() {
    let mut c = Client::default();
    // Four bookings, then five series (a page's worth and one more), each with the longest
    // title (every character escaped in JSON); a series has five exceptions: every weekday
    // for one week and two days of the week after next, all but the first and last cancelled.
    let title = "\"".repeat(MAX_TITLE);
    for hour in 8..12 {
        let args = json!({"day": "2026-09-28", "hour": hour, "room_id": "atrium",
            "title": title, "attendees": 24});
        let r = c.call("book_room", args, json!({}), None, None);
        assert_eq!(r["result"]["structuredContent"]["booked"], true, "{r}");
    }
    for hour in 12..12 + MAX_SERIES_LISTED + 1 {
        let args = json!({"day": "2026-09-28", "hour": hour, "room_id": "atrium",
            "title": title, "attendees": 24, "repeat": "weekly",
            "weekdays": "mon,tue,wed,thu,fri", "every": 2, "count": 7});
        let r = c.call("book_room", args, json!({}), None, None)["result"].clone();
        let ids = r["structuredContent"]["bookings"].as_array().cloned();
        let ids = ids.unwrap_or_else(|| panic!("booked: {r}"));
        for id in &ids[1..6] {
            let one = json!({"booking_id": id});
            let r = c.call("cancel_booking", one, json!({}), None, None);
            assert_eq!(r["result"]["isError"], false, "{r}");
        }
    }
    let id = "i".repeat(MAX_ID - 2);
    let msg = json!({"jsonrpc": "2.0", "id": id,
        "method": "tools/call", "params": {"name": "list_bookings", "arguments": {},
        "_meta": common::meta(json!({}))}});
    let cx = Context {
        now: c.now,
        principal: b"alice",
        entropy: [1; 8],
        access: redmark_core::Access::USER,
    };
    let mut out = vec![0u8; LIST_OUT];
    let h = c.engine.handle(msg.to_string().as_bytes(), &cx, &mut out);
    println!("a full page with series: {} bytes", h.len);
    let v: Value = serde_json::from_slice(&out[..h.len]).unwrap();
    let page = &v["result"]["structuredContent"];
    let listed = page["bookings"].as_array().cloned().unwrap_or_default();
    assert_eq!(listed.len(), MAX_LISTED, "{v}");
    let series = listed.iter().filter(|b| b["series"].is_object()).count();
    assert_eq!(series, MAX_SERIES_LISTED);
    let words = v["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        words.contains(
            "Every 2 weeks on Mon, Tue, Wed, Thu, Fri 12:00–13:00 (UTC) in The Atrium, \""
        ),
        "{words}"
    );
    assert!(
        words.contains(
            "; except 2026-09-29 cancelled, 2026-09-30 cancelled, 2026-10-01 cancelled, \
             2026-10-02 cancelled, and 1 more"
        ),
        "{words}"
    );
    assert_eq!(listed[4]["series"]["more_exceptions"], 1);

    // The fifth series begins the next page.
    let next = json!({"after": page["next"]});
    let r = c.call("list_bookings", next, json!({}), None, None)["result"].clone();
    let first = &r["structuredContent"]["bookings"][0];
    assert_eq!(first["start"], "2026-09-28T16:00:00+00:00", "{r}");
    assert!(first["series"].is_object(), "{r}");
}

#[test]
fn a_series_whose_first_date_moved_is_listed_in_the_room_most_of_it_is_in() {
    let mut c = Client {
        principal: b"bob".to_vec(),
        ..Client::default()
    };
    let args = json!({"day": "2026-10-01", "start": "9", "room_id": "atrium"});
    assert_eq!(
        c.call("book_room", args, json!({}), None, None)["result"]["isError"],
        false
    );
    c.principal = b"alice".to_vec();
    let (_, state) = ask(&mut c);
    let r = answer(&mut c, &state, "studio-b");
    let first = r["structuredContent"]["bookings"][0]
        .as_str()
        .unwrap()
        .to_owned();
    let listed = c.call("list_bookings", json!({}), json!({}), None, None)["result"].clone();
    let words = listed["content"][0]["text"].as_str().unwrap();
    assert!(
        words.contains(&format!(
            "{first} — Weekly on Thu 09:30–10:15 (UTC) in The Atrium, \"Weekly sync\", 12 from \
             2026-10-01 to 2026-12-17 — series {first}; except 2026-10-01 in Studio B"
        )),
        "{words}"
    );
    let exceptions = &listed["structuredContent"]["bookings"][0]["series"]["exceptions"];
    assert_eq!(
        exceptions,
        &json!([{"id": first, "day": "2026-10-01", "room_id": "studio-b"}])
    );
}

/// A rule with no date between the first day and `until` books nothing (and takes no id).
#[test]
fn a_series_with_no_date_before_until_books_nothing() {
    let mut c = Client::default();
    // Monday 2026-09-28 to Tuesday: no Thursday.
    let args = json!({"day": "2026-09-28", "start": "10", "room_id": "nook",
                      "repeat": "weekly", "weekdays": "thu", "until": "2026-09-29"});
    let r = c.call("book_room", args, json!({}), None, None);
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("Nothing booked: no date of the series"),
        "{r}"
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    let one = json!({"day": "2026-09-28", "start": "10", "room_id": "nook"});
    let r = c.call("book_room", one, json!({}), None, None);
    assert_eq!(
        r["result"]["structuredContent"]["booking"]["id"], "bk_1",
        "{r}"
    );
}
