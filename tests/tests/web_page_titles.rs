//! The booking page on a floor with public titles, in real headless Chromium: another
//! principal's booking is a block with its title (where a private floor says "Booked"), next to
//! the caller's own, which stays its own (with its title, to press and cancel).

#![cfg_attr(not(browser_tools), allow(dead_code, unused_imports))]

use redmark_tests::browser::{key, Browser};
use redmark_tests::page::setup::{book, DAY};
use redmark_tests::page::SHOW;
use redmark_tests::server::{Server, TempDir};
use serde_json::json;

const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-0123456789ab";

const FLOOR: &str = r#"public_titles = true

[[room]]
id = "atrium"
name = "The Atrium"
seats = 24

[[room]]
id = "nook"
name = "The Nook"
seats = 4
"#;

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn on_a_floor_with_public_titles_anothers_block_shows_its_title() {
    let data = TempDir::new("web-public-titles");
    let tokens = data.path().join("tokens.toml");
    std::fs::write(&tokens, format!("alice = \"{ALICE}\"\nbob = \"{BOB}\"\n")).unwrap();
    let rooms = data.path().join("rooms.toml");
    std::fs::write(&rooms, FLOOR).unwrap();
    let s = Server::start(
        &[
            "--http",
            "127.0.0.1:0",
            "--tokens",
            tokens.to_str().unwrap(),
            "--rooms",
            rooms.to_str().unwrap(),
        ],
        data.path(),
    );
    let addr = s.http[0];
    let at = |start: &str, minutes: u16, title: &str, room: &str| json!({"day": DAY, "start": start, "minutes": minutes, "title": title, "room_id": room});
    book(
        addr,
        Some(ALICE),
        at("09:30", 45, "Design review", "atrium"),
    );
    book(addr, Some(BOB), at("09:30", 45, "Secret plan", "nook"));
    // Back to back with Alice's: one busy run on day_schedule, two blocks on the grid.
    book(addr, Some(BOB), at("10:15", 15, "Stand-up", "atrium"));
    book(addr, Some(BOB), at("11:00", 30, "", "atrium"));
    let b = Browser::start(1000, 1300);
    b.goto(&format!("http://{addr}/?day={DAY}"));
    b.wait_js(
        "the page to ask for a token",
        "const e = document.getElementById('error'); return !e.hidden && e.textContent.includes('bearer token');",
        SHOW,
    );
    b.keys(&[ALICE, key::ENTER]);
    b.wait_js(
        "Alice's block",
        "const c = document.querySelector('#grid td[data-room=\"atrium\"][data-start=\"09:30\"]');\
         return !!c && c.dataset.state === 'own' && !document.querySelector('[aria-busy]');",
        SHOW,
    );
    let blocks = b.js(
        "return [...document.querySelectorAll('#grid td.block')].map((t) =>\
           [t.dataset.room, t.dataset.start, t.dataset.end, t.dataset.state, t.dataset.title || '',\
            t.textContent.replace(/\\s+/g, ' ').trim()].join(' | '));",
        json!([]),
    );
    assert_eq!(
        blocks,
        json!([
            "atrium | 09:30 | 10:15 | own | Design review | Design review 09:30–10:15 · bk_1",
            "nook | 09:30 | 10:15 | booked | Secret plan | The Nook 09:30–10:15: Secret plan 09:30–10:15",
            "atrium | 10:15 | 10:30 | booked | Stand-up | The Atrium 10:15–10:30: Stand-up 10:15–10:30",
            "atrium | 11:00 | 11:30 | booked |  | The Atrium 11:00–11:30: Booked 11:00–11:30",
        ]),
        "Bob's titled bookings show their titles, his untitled one says Booked"
    );
}
