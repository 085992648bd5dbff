//! The booking page books a weekly series through its "Call a tool" form (book_room's
//! `repeat` and `count` are fields of it like any argument) and renders the one question about
//! the 3 Thursdays taken; each answer is stored as the form said: another room holds those 3
//! and the atrium the other 9, skip books the 9, cancel books none.

#![cfg_attr(not(browser_tools), allow(dead_code, unused_imports))]

use std::net::SocketAddr;

use redmark_tests::browser::Browser;
use redmark_tests::page::{wait_question, wait_says};
use redmark_tests::server::{post_mcp, tool_call, Server, TempDir};
use serde_json::{json, Value};

/// The series' first Thursday.
const DAY: &str = "2099-09-17";
/// The series' 12 Thursdays.
const THURSDAYS: [&str; 12] = [
    "2099-09-17",
    "2099-09-24",
    "2099-10-01",
    "2099-10-08",
    "2099-10-15",
    "2099-10-22",
    "2099-10-29",
    "2099-11-05",
    "2099-11-12",
    "2099-11-19",
    "2099-11-26",
    "2099-12-03",
];
/// The Thursdays taken in the atrium at 09:00.
const TAKEN: [&str; 3] = ["2099-10-01", "2099-10-22", "2099-11-12"];

/// `tool` with `args` over plain HTTP (the page's own principal, anonymous): the result.
fn call(addr: SocketAddr, tool: &str, args: Value) -> Value {
    let r = post_mcp(addr, &tool_call(1, tool, args, true), &[]);
    r.json()["result"].clone()
}

/// The rooms of the bookings on `day` (the page's principal's, as `list_bookings` lists them).
fn rooms_on(addr: SocketAddr, day: &str) -> Vec<String> {
    let r = call(addr, "list_bookings", json!({"day": day}));
    let list = r["structuredContent"]["bookings"].as_array().cloned();
    list.unwrap_or_else(|| panic!("{r}"))
        .iter()
        .map(|b| b["room_id"].as_str().unwrap().to_owned())
        .collect()
}

/// Books the series through the page's form on a server where the atrium's 3 Thursdays are
/// taken, answers its one question with `choice` (an option's value) and waits for the page's
/// `status` saying `says`: the server, to read what was stored, and what the page said.
fn answer_the_series_form(choice: &str, says: &str) -> (Server, TempDir, String) {
    let data = TempDir::new("web-series");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let addr = s.http[0];
    for day in TAKEN {
        let r = call(
            addr,
            "book_room",
            json!({"day": day, "hour": 9, "room_id": "atrium"}),
        );
        assert_eq!(r["structuredContent"]["booked"], true, "{r}");
    }
    let b = Browser::start(1000, 1300);
    b.goto(&format!("http://{addr}/?day={DAY}"));
    b.js(
        "const s = document.getElementById('tool'); s.value = 'book_room';\
         s.dispatchEvent(new Event('change'));",
        json!([]),
    );
    for (field, value) in [
        ("day", DAY),
        ("hour", "9"),
        ("room_id", "atrium"),
        ("repeat", "weekly"),
        ("count", "12"),
        ("title", "Weekly sync"),
    ] {
        let input = b.find(&format!("#tool-args [data-field={field}] input"));
        b.fill(&input, value);
    }
    b.click(&b.find("#call"));
    wait_question(&b, "series");
    let asked = b.text(&b.find("#ask"));
    assert!(
        asked.contains("Weekly on Thu 09:00–10:00 (UTC) (12 dates) in The Atrium: 3 of them"),
        "{asked}"
    );
    for day in TAKEN {
        assert!(asked.contains(&format!("{day} (taken")), "{day}: {asked}");
    }
    let option = format!("#ask [data-field=choice] input[value='{choice}']");
    b.click(&b.find(&option));
    b.click(&b.find("#ask button[data-action=accept]"));
    let said = wait_says(&b, "status", says);
    (s, data, said)
}

/// The rooms booked on each of the 12 Thursdays: the atrium on a free one, `on_taken` on the 3
/// taken before; nothing on the thirteenth.
fn assert_thursdays(addr: SocketAddr, on_taken: &[&str]) {
    for day in THURSDAYS {
        let want: &[&str] = if TAKEN.contains(&day) {
            on_taken
        } else {
            &["atrium"]
        };
        assert_eq!(rooms_on(addr, day), want, "{day}");
    }
    assert_eq!(
        rooms_on(addr, "2099-12-10"),
        Vec::<String>::new(),
        "no thirteenth"
    );
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn the_page_books_a_weekly_series_and_answers_its_clashes_with_another_room() {
    let booked = "Booked Weekly on Thu 09:00–10:00 (UTC)";
    let (s, _data, said) = answer_the_series_form("studio-b", booked);
    assert!(said.contains("in Studio B"), "{said}");
    assert_thursdays(s.http[0], &["atrium", "studio-b"]);
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn the_page_skips_the_taken_dates_of_a_series() {
    let (s, _data, _) = answer_the_series_form("skip", "Booked Weekly on Thu 09:00–10:00 (UTC)");
    // Each of the 12 Thursdays holds one booking in the atrium (the 3 made before, the 9 of
    // the series); nothing went to another room.
    assert_thursdays(s.http[0], &["atrium"]);
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn the_page_cancels_a_series_whose_dates_are_taken() {
    let (s, _data, _) = answer_the_series_form("cancel", "Cancelled: nothing was booked.");
    let addr = s.http[0];
    let mine = call(addr, "list_bookings", json!({}));
    let listed = mine["structuredContent"]["bookings"].as_array().cloned();
    let listed = listed.unwrap_or_else(|| panic!("{mine}"));
    assert_eq!(listed.len(), 3, "only the 3 booked before: {mine}");
    assert_eq!(rooms_on(addr, "2099-10-08"), Vec::<String>::new());
}
