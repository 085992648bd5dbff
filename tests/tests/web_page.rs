//! The booking page at `/` of `redmark serve --http`, driven in real headless Chromium over
//! WebDriver: book "the big room" and pick Studio B in the rendered form, the red mark on an
//! invalid answer, decline, cancel, one's own booking cancelled through the confirm form, a
//! second tab, keyboard-only answers, and a phone's width (every room shown). The grid's
//! blocks, days and zones: `web_page_grid.rs`; tokens, errors and form fields:
//! `web_page_forms.rs`.
//!
//! What the page shows is checked against the server itself (`list_rooms` over plain HTTP).
//! With `REDMARK_SCREENSHOTS=DIR` the first test also writes the pictures in the README
//! (`scripts/screenshots.sh`).

#![cfg_attr(not(browser_tools), allow(dead_code, unused_imports))]

use std::net::SocketAddr;
use std::path::PathBuf;

use redmark_tests::browser::{key, Browser};
use redmark_tests::page::setup::{book, book_in_words, free_rooms, page_url, DAY};
use redmark_tests::page::{wait_cell, wait_question, wait_says, SHOW};
use redmark_tests::server::{post_mcp, tool_call, Server, TempDir};
use serde_json::{json, Value};

/// Every room's column of the grid lies wholly inside the window, with nothing to scroll to
/// sideways (the rooms as the server lists them: `list_rooms`).
fn assert_every_room_shown(b: &Browser, addr: SocketAddr) {
    let rooms = free_rooms(addr, 9);
    let cut: Value = b.js(
        "const view = document.documentElement.clientWidth;\
         const wrap = document.getElementById('grid');\
         const cut = [];\
         for (const id of arguments[0]) {\
           const c = document.querySelector(`td[data-room=\"${id}\"]`);\
           if (!c) { cut.push(`${id}: no column`); continue; }\
           const r = c.getBoundingClientRect();\
           if (r.left < 0 || r.right > view + 0.5) cut.push(`${id}: ${r.left}..${r.right} of ${view}`);\
         }\
         if (wrap.scrollWidth > wrap.clientWidth) cut.push(`the grid scrolls: ${wrap.scrollWidth} > ${wrap.clientWidth}`);\
         return cut;",
        json!([rooms]),
    );
    assert_eq!(
        cut,
        json!([]),
        "rooms cut off at {}px",
        b.js("return window.innerWidth", json!([]))
    );
}

/// With `REDMARK_SCREENSHOTS=DIR`, a PNG of the element `css` (the whole window for `None`)
/// as `DIR/name`, taken with the page scrolled to the top (Chromium crops an element of a
/// scrolled page at the wrong place).
fn shot(b: &Browser, css: Option<&str>, name: &str) {
    let Some(dir) = std::env::var_os("REDMARK_SCREENSHOTS").map(PathBuf::from) else {
        return;
    };
    b.js("window.scrollTo(0, 0)", json!([]));
    let e = css.map(|c| b.find(c));
    b.screenshot(e.as_ref(), &dir.join(name));
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn book_pick_mark_decline_cancel_and_a_second_tab() {
    let data = TempDir::new("web-page");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let addr = s.http[0];
    let b = Browser::start(1000, 1300);
    b.goto(&page_url(&s));
    wait_cell(&b, "studio-b", "09:00", "free");
    // A second tab, open before the booking.
    let first = b.new_tab();
    b.goto(&page_url(&s));
    wait_cell(&b, "studio-b", "09:00", "free");
    let second = b.handle();
    b.switch_to(&first);

    // "the big room" fits two rooms: the server asks, the page renders the form.
    book_in_words(&b, 9, "the big room");
    wait_question(&b, "room");
    let ask = b.find("#ask");
    let form_text = b.text(&ask);
    assert!(
        form_text.contains("'the big room' matches more than one room. Which did you mean, for Thursday 2099-09-17 at 09:00–10:00 (UTC)?"),
        "{form_text}"
    );
    assert!(
        form_text.contains("The Atrium (24 seats)") && form_text.contains("Studio B (12 seats)")
    );
    for action in ["Accept", "Decline", "Cancel"] {
        assert!(form_text.contains(action), "no {action} in {form_text}");
    }
    shot(&b, Some("#ask"), "form.png");

    // Accept with no room picked: the server re-asks with the red mark on the field.
    b.click(&b.find("#ask button[data-action=accept]"));
    let marked = b.wait_js(
        "the red mark",
        "const f = document.querySelector('#ask .field.marked');\
         return f && [f.dataset.field, f.querySelector('.mark').textContent,\
           f.querySelector('[aria-invalid=true]') !== null,\
           document.activeElement && document.activeElement.closest('.field.marked') === f,\
           document.querySelector('#ask .message').textContent];",
        SHOW,
    );
    assert_eq!(marked[0], "room_id", "{marked}");
    assert!(
        marked[1].as_str().unwrap().contains("a value is required"),
        "{marked}"
    );
    assert_eq!(marked[2], true, "the control says aria-invalid: {marked}");
    assert_eq!(
        marked[3], true,
        "the focus is on the marked field: {marked}"
    );
    assert!(
        marked[4]
            .as_str()
            .unwrap()
            .starts_with("Room: a value is required."),
        "{marked}"
    );
    assert_eq!(free_rooms(addr, 9).len(), 3, "nothing is booked yet");
    shot(&b, Some("#ask"), "red-mark.png");

    // Keyboard only: the focus is on the first option; arrow down picks Studio B, Tab reaches
    // Accept, Enter presses it.
    b.keys(&[key::DOWN, key::TAB, key::ENTER]);
    let said = wait_says(
        &b,
        "status",
        "Booked Studio B (12 seats) on Thursday 2099-09-17 at 09:00–10:00",
    );
    assert!(said.contains("booking bk_1"), "{said}");
    wait_cell(&b, "studio-b", "09:00", "own");
    wait_cell(&b, "atrium", "09:00", "free");
    assert_eq!(free_rooms(addr, 9), ["atrium", "nook"]);
    // A booking made by another client of the same user: the page did not make it, but the
    // server lists it as theirs (list_bookings), so it is theirs to cancel here too.
    let other = post_mcp(
        addr,
        &tool_call(
            2,
            "book_room",
            json!({"day": DAY, "start": "13:15", "minutes": 45, "title": "Design review",
                   "room_id": "nook"}),
            true,
        ),
        &[],
    );
    assert_eq!(other.json()["result"]["structuredContent"]["booked"], true);
    b.click(&b.find("#show-day"));
    wait_cell(&b, "nook", "13:15", "own");
    wait_cell(&b, "studio-b", "09:00", "own");
    shot(&b, Some("#floor"), "grid.png");

    // The second tab follows the day live: it shows the booking without a refresh.
    b.switch_to(&second);
    wait_cell(&b, "studio-b", "09:00", "own");
    b.switch_to(&first);

    // Decline: nothing booked.
    book_in_words(&b, 10, "the big room");
    wait_question(&b, "room");
    b.click(&b.find("#ask button[data-action=decline]"));
    wait_says(&b, "status", "Not booked: you declined to choose a room.");
    assert_eq!(free_rooms(addr, 10).len(), 3);
    wait_cell(&b, "studio-b", "10:00", "free");

    // Cancel, with Esc: nothing booked either.
    book_in_words(&b, 11, "the big room");
    wait_question(&b, "room");
    b.keys(&[key::ESCAPE]);
    wait_says(&b, "status", "Cancelled: nothing was booked.");
    assert_eq!(free_rooms(addr, 11).len(), 3);

    // One's own booking: the grid offers to cancel it, the server asks to confirm.
    b.click(&b.find("td[data-room=studio-b][data-start='09:00'] button"));
    wait_question(&b, "confirm");
    let confirm = b.text(&b.find("#ask"));
    assert!(
        confirm.contains("Cancel bk_1: Studio B on Thursday 2099-09-17 at 09:00–10:00"),
        "{confirm}"
    );
    let checked = b.js(
        "return document.querySelector('#ask input[type=checkbox]').checked",
        json!([]),
    );
    assert_eq!(checked, true, "the default (true) is prefilled");
    // Another call while the question is open waits its turn: the question stays.
    b.click(&b.find("td[data-room=atrium][data-start='12:00'] button"));
    let said = b.text(&b.find("#status"));
    assert_eq!(
        said,
        "A call is still open: answer or cancel its question first."
    );
    assert!(b.text(&b.find("#ask")).contains("Cancel bk_1"));
    b.click(&b.find("#ask button[data-action=accept]"));
    wait_says(
        &b,
        "status",
        "bk_1 (Studio B on Thursday 2099-09-17 at 09:00–10:00",
    );
    wait_cell(&b, "studio-b", "09:00", "free");
    assert_eq!(free_rooms(addr, 9).len(), 3, "cancelled on the server");

    // A free cell books that room at that hour.
    b.click(&b.find("td[data-room=atrium][data-start='12:00'] button"));
    wait_says(
        &b,
        "status",
        "Booked The Atrium (24 seats) on Thursday 2099-09-17 at 12:00–13:00",
    );
    wait_cell(&b, "atrium", "12:00", "own");
    assert_eq!(free_rooms(addr, 12), ["studio-b", "nook"]);
    // The cell pressed is redrawn away: the focus is on the result's heading, not lost.
    let focused = b.js(
        "return document.activeElement === document.querySelector('#result h3')",
        json!([]),
    );
    assert_eq!(focused, true, "the focus after a grid booking");

    // A phone's width: nothing wider than the screen.
    b.resize(390, 844);
    b.refresh();
    wait_cell(&b, "atrium", "12:00", "own");
    let fits = b.js(
        "return document.documentElement.scrollWidth <= window.innerWidth",
        json!([]),
    );
    assert_eq!(fits, true, "the page is wider than a phone");
    assert_every_room_shown(&b, addr);
    shot(&b, None, "phone.png");
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn a_phone_shows_every_room() {
    let data = TempDir::new("web-phone");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let addr = s.http[0];
    // One's own blocks carry a title and "09:30–10:15 · bk_N", the widest a cell gets.
    for (start, room) in [
        ("09:30", "atrium"),
        ("10:00", "studio-b"),
        ("11:15", "nook"),
    ] {
        book(
            addr,
            None,
            json!({"day": DAY, "start": start, "minutes": 45, "room_id": room,
                   "title": "Quarterly planning with the whole team"}),
        );
    }
    // 390 px with no room to spare before, so a desktop window of that width (its scrollbar
    // takes 15 px) cut the Nook off; 360 px, a common Android width, cut it off as well.
    // (Resized after start: Chromium's headless window is never narrower than 500 px at launch.)
    let b = Browser::start(1000, 1300);
    for (width, height) in [(390, 844), (360, 780)] {
        b.resize(width, height);
        b.goto(&page_url(&s));
        wait_cell(&b, "nook", "11:15", "own");
        assert_every_room_shown(&b, addr);
        // Each block's face stays inside its own block.
        let spill = b.js(
            "return [...document.querySelectorAll('#grid td.block')].filter((t) => {\
               const r = t.getBoundingClientRect(); const f = t.querySelector('.cell').getBoundingClientRect();\
               return f.left < r.left - 0.5 || f.right > r.right + 0.5 || f.bottom > r.bottom + 0.5;\
             }).map((t) => t.dataset.room);",
            json!([]),
        );
        assert_eq!(spill, json!([]), "at {width}px");
    }
}
