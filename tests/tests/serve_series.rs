//! A weekly series of 12 with 3 clashes on a Berlin floor over HTTP, through the official
//! Python SDK 2.3 client and through `redmark call --answer`: one form with exactly the 3
//! dates; skip, another room and cancel each leave the stored state the form promised, and
//! `list_bookings` shows the series once.

mod client_support;

use std::path::Path;

use client_support::{cat, redmark, Run};
use redmark_tests::peers::sdk_book;
use redmark_tests::server::{Server, TempDir};
use serde_json::{json, Value};

const FLOOR: &str = r#"time_zone = "Europe/Berlin"

[[room]]
id = "atrium"
name = "The Atrium"
seats = 24

[[room]]
id = "studio-b"
name = "Studio B"
seats = 12

[[room]]
id = "nook"
name = "The Nook"
seats = 4
"#;

/// The three Thursdays taken in the atrium (one after the clocks go forward on 2099-03-29).
const TAKEN: [&str; 3] = ["2099-03-19", "2099-04-02", "2099-04-23"];

/// Thursdays 09:30–10:15 from 2099-03-05, 12 times, in the atrium.
fn series() -> Value {
    json!({"day": "2099-03-05", "start": "9:30", "minutes": 45, "room_id": "atrium",
           "title": "Weekly sync", "repeat": "weekly", "count": 12})
}

/// A server of the Berlin floor over HTTP with the atrium taken on the [`TAKEN`] days, and
/// its `/mcp` URL.
fn floor_with_clashes(data: &Path) -> (Server, String) {
    let rooms = data.join("rooms.toml");
    std::fs::write(&rooms, FLOOR).unwrap();
    let s = Server::start(
        &["--http", "127.0.0.1:0", "--rooms", rooms.to_str().unwrap()],
        data,
    );
    let url = format!("http://{}/mcp", s.http[0]);
    for day in TAKEN {
        let day = format!("day={day}");
        let r = call(&url, &["book_room", "room_id=atrium", "start=9", &day]);
        assert_eq!(r.code, 0, "{r:?}");
    }
    (s, url)
}

/// `redmark call --url URL ARGS`.
fn call(url: &str, args: &[&str]) -> Run {
    redmark(&cat(&[&["call", "--url", url], args]))
}

/// The rooms booked on `day` (what `list_bookings` lists, as `room@HH:MM`).
fn booked_on(url: &str, day: &str) -> Vec<String> {
    let r = call(url, &["--json", "list_bookings", &format!("day={day}")]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|_| panic!("{r:?}"));
    let list = v["structuredContent"]["bookings"].as_array().cloned();
    list.unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|b| {
            let at = &b["start"].as_str().unwrap()[11..16];
            format!("{}@{at}", b["room_id"].as_str().unwrap())
        })
        .collect()
}

/// What each choice leaves on a taken Thursday and on a free one.
fn assert_stored(url: &str, choice: &str) {
    let (taken, free) = ("2099-04-02", "2099-04-09");
    let mut on_taken = vec!["atrium@09:00".to_string()];
    if choice == "studio-b" {
        on_taken.push("studio-b@09:30".into());
    }
    assert_eq!(booked_on(url, taken), on_taken, "{choice}");
    let on_free: &[&str] = if choice == "cancel" {
        &[]
    } else {
        &["atrium@09:30"]
    };
    assert_eq!(
        booked_on(url, free),
        on_free,
        "{choice}: 09:30 Berlin time after the change too"
    );
}

/// `list_bookings` (not on one day) on redb: the series on one line, with the three dates in
/// Studio B, between the three meetings that took the atrium.
fn assert_listed_once(url: &str) {
    let r = call(url, &["--json", "list_bookings"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|_| panic!("{r:?}"));
    let words = v["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        words.contains(
            "bk_4 — Weekly on Thu 09:30–10:15 (Europe/Berlin) in The Atrium, 12 from 2099-03-05 \
             to 2099-05-21 — series bk_4; except 2099-03-19 in Studio B, 2099-04-02 in Studio \
             B, 2099-04-23 in Studio B"
        ),
        "{v}"
    );
    let listed = v["structuredContent"]["bookings"].as_array().cloned();
    let ids: Vec<Value> = listed
        .unwrap_or_default()
        .iter()
        .map(|b| b["id"].clone())
        .collect();
    assert_eq!(
        ids,
        [json!("bk_4"), json!("bk_1"), json!("bk_2"), json!("bk_3")],
        "{v}"
    );
}

#[test]
fn the_python_sdk_is_asked_once_about_the_three_dates_and_each_answer_is_stored() {
    let Some(py) = redmark_tests::peers::python_sdk_2_3("REDMARK_REQUIRE_OAUTH") else {
        return;
    };
    for choice in ["skip", "studio-b", "cancel"] {
        let data = TempDir::new("series-sdk");
        let (_s, url) = floor_with_clashes(data.path());
        let out = sdk_book(&py, &url, &series(), &[choice]);
        let asked = out["asked"].as_array().unwrap();
        assert_eq!(asked.len(), 1, "one form: {out}");
        let message = asked[0]["message"].as_str().unwrap();
        assert!(
            message.starts_with(
                "Weekly on Thu 09:30–10:15 (Europe/Berlin) (12 dates) in The Atrium: 3 of them \
                 cannot be booked there: 2099-03-19 (taken), 2099-04-02 (taken), 2099-04-23 \
                 (taken)."
            ),
            "{message}"
        );
        for day in TAKEN {
            assert!(message.contains(day), "{day} in {message}");
        }
        assert_eq!(
            message.matches(" (taken").count(),
            3,
            "exactly 3: {message}"
        );
        let options: Vec<&str> = asked[0]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["const"].as_str().unwrap())
            .collect();
        assert_eq!(options, ["skip", "studio-b", "nook", "cancel"], "{out}");
        let booked = out["structured"]["bookings"].as_array().map_or(0, Vec::len);
        let want = match choice {
            "skip" => 9,
            "studio-b" => 12,
            _ => 0,
        };
        assert_eq!(booked, want, "{choice}: {out}");
        assert_stored(&url, choice);
    }
}

#[test]
fn redmark_call_answers_the_series_form_with_each_choice() {
    for choice in ["skip", "studio-b", "cancel"] {
        let data = TempDir::new("series-call");
        let (_s, url) = floor_with_clashes(data.path());
        let answer = format!("series.choice={choice}");
        let r = call(
            &url,
            &[
                "--answer",
                &answer,
                "book_room",
                "day=2099-03-05",
                "start=9:30",
                "minutes=45",
                "room_id=atrium",
                "repeat=weekly",
                "count=12",
            ],
        );
        assert_eq!(r.code, 0, "{choice}: {r:?}");
        if choice != "cancel" {
            assert!(
                r.stdout.contains(
                    "Booked Weekly on Thu 09:30–10:15 (Europe/Berlin), 12 from \
                     2099-03-05 to 2099-05-21, in The Atrium; except 2099-03-19"
                ),
                "{r:?}"
            );
        }
        assert_stored(&url, choice);
        if choice == "studio-b" {
            assert_listed_once(&url);
        }
    }
    // Unanswered, `redmark call` shows the form it cannot ask and books nothing.
    let data = TempDir::new("series-call-unanswered");
    let (_s, url) = floor_with_clashes(data.path());
    let r = call(
        &url,
        &[
            "book_room",
            "day=2099-03-05",
            "start=9:30",
            "minutes=45",
            "room_id=atrium",
            "repeat=weekly",
            "count=12",
        ],
    );
    assert_ne!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("2099-04-23"), "the dates shown: {r:?}");
    assert_eq!(booked_on(&url, "2099-04-09"), Vec::<String>::new());
}
