//! The booking page follows the live stream: another client's booking appears without a reload.
//!
//! The booking page follows the server's live stream: when another client books a room on the day
//! shown, the grid shows it booked without a reload (headless Chromium).

#![cfg_attr(not(browser_tools), allow(dead_code, unused_imports))]

use redmark_tests::browser::{key, Browser};
use redmark_tests::page::setup::{book, page_url, DAY};
use redmark_tests::page::{wait_cell, wait_says, SHOW};
use redmark_tests::server::{Server, TempDir};
use serde_json::json;

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn another_client_s_booking_appears_on_the_grid_without_a_reload() {
    const ALICE: &str = "alice-token-0123456789";
    const BOB: &str = "bob-token-0123456789ab";
    let data = TempDir::new("web-live");
    let file = data.path().join("tokens.toml");
    std::fs::write(&file, format!("alice = \"{ALICE}\"\nbob = \"{BOB}\"\n")).unwrap();
    let s = Server::start(
        &["--http", "127.0.0.1:0", "--tokens", file.to_str().unwrap()],
        data.path(),
    );
    let b = Browser::start(1000, 1300);
    b.goto(&page_url(&s));
    wait_says(&b, "error", "The server needs a bearer token");
    b.keys(&[ALICE, key::ENTER]);
    wait_cell(&b, "studio-b", "14:00", "free");
    // The page follows the day shown; a mark on the window tells a reload apart.
    b.wait_js(
        "the grid to follow the day live",
        &format!("return document.getElementById('grid').dataset.live === '{DAY}';"),
        SHOW,
    );
    b.js("window.notReloaded = true;", json!([]));
    book(
        s.http[0],
        Some(BOB),
        json!({"day": DAY, "start": "14:00", "minutes": 60, "room_id": "studio-b"}),
    );
    wait_cell(&b, "studio-b", "14:00", "booked");
    let same_page = b.js("return window.notReloaded === true;", json!([]));
    assert_eq!(same_page, true, "the grid changed without a reload");
}
