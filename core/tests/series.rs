//! Recurring meetings: a weekly series of 12 with 3 dates taken asks once, listing exactly
//! those 3; each answer (skip, another room, cancel) books what the form showed, in one store
//! operation, and a retry replays the same series.

mod common;

use common::{accept, form_caps, Client};
use redmark_core::booking::Status;
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

    // Each occurrence listed names its series (in words and in structuredContent).
    let listed = c.call("list_bookings", json!({}), json!({}), None, None)["result"].clone();
    let words = listed["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        words.matches(&format!(" — of series bk_{series}")).count(),
        8,
        "{words}"
    );
    assert_eq!(
        listed["structuredContent"]["bookings"][0]["series"],
        format!("bk_{series}")
    );

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
