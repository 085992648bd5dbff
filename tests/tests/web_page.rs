//! The booking page at `/` of `redmark serve --http`, driven in real headless Chromium over
//! WebDriver: book "the big room" and pick Studio B in the rendered form, the red mark on an
//! invalid answer, decline, cancel, one's own booking cancelled through the confirm form, a
//! second tab, keyboard-only answers, a phone's width (every room shown), a pasted token, each
//! booking one block at its real start and length (one's own with its title, another's
//! "Booked"), the day chosen on the grid booked, every booked hour shown, a floor in another
//! zone opened on its own today with its grid and lengths, and errors in words.
//!
//! What the page shows is checked against the server itself (`list_rooms` over plain HTTP).
//! With `REDMARK_SCREENSHOTS=DIR` the first test also writes the pictures in the README
//! (`scripts/screenshots.sh`).

#![cfg_attr(not(browser_tools), allow(dead_code, unused_imports))]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use redmark_core::booking::Day;
use redmark_tests::browser::{key, Browser};
use redmark_tests::page::{wait_cell, wait_question, wait_says, SHOW};
use redmark_tests::server::{http, post_mcp, tool_call, Server, TempDir};
use serde_json::{json, Value};

/// The day every test books on: far enough ahead never to have started.
const DAY: &str = "2099-09-17";

fn page_url(s: &Server) -> String {
    format!("http://{}/?day={DAY}", s.http[0])
}

/// The rooms the server itself says are free at `hour` of [`DAY`].
fn free_rooms(addr: SocketAddr, hour: u8) -> Vec<String> {
    free_rooms_on(addr, DAY, hour)
}

/// The rooms the server itself says are free at `hour` of `day`.
fn free_rooms_on(addr: SocketAddr, day: &str, hour: u8) -> Vec<String> {
    free_rooms_for(addr, json!({"day": day, "hour": hour}))
}

/// The rooms the server itself says are free for all of the span in `args` (day, start,
/// minutes).
fn free_rooms_for(addr: SocketAddr, args: Value) -> Vec<String> {
    let r = post_mcp(addr, &tool_call(1, "list_rooms", args, true), &[]);
    let rooms = r.json()["result"]["structuredContent"]["rooms"].clone();
    rooms
        .as_array()
        .unwrap_or_else(|| panic!("no rooms in {}", String::from_utf8_lossy(&r.body)))
        .iter()
        .filter(|x| x["free"] == true)
        .filter_map(|x| x["id"].as_str().map(String::from))
        .collect()
}

/// Books with `args` over plain HTTP, as the holder of `token` (anonymous: the page's own
/// principal on a server without tokens).
fn book(addr: SocketAddr, token: Option<&str>, args: Value) {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", a.as_str())).collect();
    let r = post_mcp(
        addr,
        &tool_call(9, "book_room", args.clone(), true),
        &headers,
    );
    assert_eq!(
        r.json()["result"]["structuredContent"]["booked"],
        true,
        "{args}: {}",
        String::from_utf8_lossy(&r.body)
    );
}

/// Calls book_room from the tool form with `hour` and the room in words.
fn book_in_words(b: &Browser, hour: u8, hint: &str) {
    b.js(
        "const s = document.getElementById('tool'); s.value = 'book_room';\
         s.dispatchEvent(new Event('change'));",
        json!([]),
    );
    b.fill(
        &b.find("#tool-args [data-field=hour] input"),
        &hour.to_string(),
    );
    b.fill(&b.find("#tool-args [data-field=room_hint] input"), hint);
    b.click(&b.find("#call"));
}

/// Books `room` at `hour` of [`DAY`] over plain HTTP (the page's own principal, anonymous).
fn book_over_http(addr: SocketAddr, hour: u8, room: &str) {
    book(
        addr,
        None,
        json!({"day": DAY, "hour": hour, "room_id": room}),
    );
}

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

    // The second tab sees it after a refresh.
    b.switch_to(&second);
    wait_cell(&b, "studio-b", "09:00", "free");
    b.refresh();
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

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn a_booking_is_one_block_at_its_start_and_length_with_its_title_and_others_say_booked() {
    const ALICE: &str = "alice-token-0123456789";
    const BOB: &str = "bob-token-0123456789ab";
    let data = TempDir::new("web-blocks");
    let file = data.path().join("tokens.toml");
    std::fs::write(&file, format!("alice = \"{ALICE}\"\nbob = \"{BOB}\"\n")).unwrap();
    let s = Server::start(
        &["--http", "127.0.0.1:0", "--tokens", file.to_str().unwrap()],
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
    // Back to back with Alice's: day_schedule reads the two as one busy run, the grid does not.
    book(addr, Some(BOB), at("10:15", 15, "Stand-up", "atrium"));
    let b = Browser::start(1000, 1300);
    b.goto(&page_url(&s));
    wait_says(&b, "error", "The server needs a bearer token");
    b.keys(&[ALICE, key::ENTER]);
    wait_cell(&b, "atrium", "09:30", "own");
    let got = b.js(
        "const q = (room, start) => document.querySelector(`#grid td[data-room=\"${room}\"][data-start=\"${start}\"]`);\
         const row = (start) => document.querySelector(`#grid tr[data-start=\"${start}\"] th`).getBoundingClientRect();\
         const mine = q('atrium', '09:30'); const r = mine.getBoundingClientRect();\
         const face = mine.querySelector('button').getBoundingClientRect();\
         const after = q('atrium', '10:15'); const bob = q('nook', '09:30');\
         const sent = [...document.querySelectorAll('#wire li')].map((l) => l.textContent).filter((t) => t.startsWith('→'));\
         return {\
           mine: [mine.dataset.end, mine.rowSpan, mine.innerText.replace(/\\s+/g, ' ').trim(),\
                  mine.querySelector('button').getAttribute('aria-label')],\
           place: [r.top - row('09:30').top, r.bottom - row('10:00').bottom, face.top - r.top, face.bottom - r.bottom].map(Math.round),\
           covered: [q('atrium', '09:45'), q('atrium', '10:00')].map((c) => c === null),\
           after: [after.dataset.state, after.dataset.end, after.textContent],\
           bob: [bob.dataset.state, bob.dataset.end, bob.rowSpan, bob.textContent],\
           free: [q('nook', '10:15').dataset.state, q('studio-b', '09:30').dataset.state],\
           secret: document.getElementById('grid').textContent.includes('Secret plan') || document.getElementById('grid').textContent.includes('Stand-up'),\
           calls: ['list_rooms', 'day_schedule'].map((n) => sent.filter((t) => t.includes(`\"name\":\"${n}\"`)).length),\
         };",
        json!([]),
    );
    assert_eq!(got["mine"][0], "10:15", "{got}");
    assert_eq!(got["mine"][1], 3, "three 15-minute rows: {got}");
    assert_eq!(got["mine"][2], "Design review 09:30–10:15 · bk_1", "{got}");
    assert_eq!(
        got["mine"][3],
        "Your booking bk_1, “Design review”: The Atrium 09:30–10:15 on 2099-09-17. Press to cancel it"
    );
    assert_eq!(
        got["place"],
        json!([0, 0, 0, 0]),
        "the block runs from the 09:30 row's top to the 10:00 row's bottom, its face fills it: {got}"
    );
    assert_eq!(got["covered"], json!([true, true]), "{got}");
    assert_eq!(
        got["after"],
        json!([
            "booked",
            "10:30",
            "The Atrium 10:15–10:30: Booked 10:15–10:30"
        ])
    );
    assert_eq!(
        got["bob"],
        json!([
            "booked",
            "10:15",
            3,
            "The Nook 09:30–10:15: Booked 09:30–10:15"
        ])
    );
    assert_eq!(got["free"], json!(["free", "free"]));
    assert_eq!(got["secret"], false, "another's title is theirs");
    assert_eq!(
        got["calls"],
        json!([1, 1]),
        "the rooms once, then one day_schedule for the day (no list_rooms per hour)"
    );

    // A server without day_schedule: the same view, read with list_rooms span by span.
    let fallback = b.js(
        "return Promise.all([import('/web/mcp.js'), import('/web/floor.js')]).then(async ([m, f]) => {\
           const c = new m.McpClient('/mcp'); c.token = sessionStorage.getItem('redmark.token');\
           const div = document.createElement('div');\
           const v = new f.FloorView(c, div, { onBook() {}, onCancel() {}, listsBookings: true, hasDaySchedule: false });\
           await v.load(arguments[0]);\
           const blocks = (root) => [...root.querySelectorAll('td.block')]\
             .map((t) => [t.dataset.room, t.dataset.start, t.dataset.end, t.dataset.state, t.dataset.title || ''].join(' '));\
           return [blocks(div), blocks(document.getElementById('grid'))];\
         });",
        json!([DAY]),
    );
    assert_eq!(
        fallback[0],
        json!([
            "atrium 09:30 10:15 own Design review",
            "nook 09:30 10:15 booked ",
            "atrium 10:15 10:30 booked "
        ])
    );
    assert_eq!(fallback[0], fallback[1], "the same blocks either way");

    // A day gone by: every step is past, nothing to press.
    b.goto(&format!("http://{addr}/?day=2000-01-03"));
    wait_cell(&b, "atrium", "09:00", "past");
    let left = b.js(
        "return [document.querySelectorAll('#grid button').length,\
          [...document.querySelectorAll('#grid td')].filter((t) => t.dataset.state !== 'past').length]",
        json!([]),
    );
    assert_eq!(left, json!([0, 0]));
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn the_page_books_the_day_chosen_on_the_grid() {
    const NEXT: &str = "2099-09-18";
    const THIRD: &str = "2099-09-19";
    let data = TempDir::new("web-day");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let addr = s.http[0];
    let b = Browser::start(1000, 1300);
    b.goto(&page_url(&s));
    wait_cell(&b, "studio-b", "09:00", "free");
    // The tool form is open on book_room before the day changes, as a person would have it.
    b.js(
        "const s = document.getElementById('tool'); s.value = 'book_room';\
         s.dispatchEvent(new Event('change'));",
        json!([]),
    );
    // Another day on the grid.
    b.js(
        "document.getElementById('day').value = arguments[0];",
        json!([NEXT]),
    );
    b.click(&b.find("#show-day"));
    b.wait_js(
        "the grid to show the next day",
        &format!(
            "const c = document.querySelector('#grid caption');\
             return !!c && c.textContent.includes('{NEXT}') && !document.querySelector('[aria-busy]');"
        ),
        SHOW,
    );
    b.fill(&b.find("#tool-args [data-field=hour] input"), "9");
    b.fill(
        &b.find("#tool-args [data-field=room_hint] input"),
        "the big room",
    );
    b.click(&b.find("#call"));
    wait_question(&b, "room");
    b.click(&b.find("#ask input[value=studio-b]"));
    b.click(&b.find("#ask button[data-action=accept]"));
    wait_says(
        &b,
        "status",
        &format!("Booked Studio B (12 seats) on Friday {NEXT} at 09:00–10:00"),
    );
    wait_cell(&b, "studio-b", "09:00", "own");
    assert_eq!(free_rooms_on(addr, NEXT, 9), ["atrium", "nook"]);
    assert_eq!(
        free_rooms(addr, 9).len(),
        3,
        "nothing booked on the day loaded"
    );

    // Choosing a day is enough: the grid follows it, and a reload keeps it.
    b.js(
        "const d = document.getElementById('day'); d.value = arguments[0];\
         d.dispatchEvent(new Event('change'));",
        json!([THIRD]),
    );
    let follows = format!(
        "const c = document.querySelector('#grid caption');\
         return !!c && c.textContent.includes('{THIRD}') && !document.querySelector('[aria-busy]');"
    );
    b.wait_js("the grid to follow the date field", &follows, SHOW);
    b.refresh();
    b.wait_js("a reload to keep the day", &follows, SHOW);
    // The tool form opened on that day fills in that day.
    b.js(
        "const s = document.getElementById('tool'); s.value = 'book_room';\
         s.dispatchEvent(new Event('change'));",
        json!([]),
    );
    let filled = b.js(
        "return document.querySelector('#tool-args [data-field=day] input').value",
        json!([]),
    );
    assert_eq!(filled, THIRD);

    // A press on the grid books the day shown, from the step pressed, for the length chosen.
    b.js("document.getElementById('length').value = '45';", json!([]));
    b.click(&b.find("td[data-room=atrium][data-start='09:30'] button"));
    wait_says(
        &b,
        "status",
        &format!("Booked The Atrium (24 seats) on Saturday {THIRD} at 09:30–10:15"),
    );
    wait_cell(&b, "atrium", "09:30", "own");
    let end = b.js(
        "return document.querySelector('#grid td[data-room=atrium][data-start=\"09:30\"]').dataset.end",
        json!([]),
    );
    assert_eq!(end, "10:15");
    let span = json!({"day": THIRD, "start": "09:30", "minutes": 45});
    assert_eq!(free_rooms_for(addr, span), ["studio-b", "nook"]);
    assert_eq!(
        free_rooms(addr, 9).len(),
        3,
        "nothing more on the day loaded"
    );
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn the_grid_shows_every_hour_that_has_a_booking() {
    let data = TempDir::new("web-hours");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let addr = s.http[0];
    book_over_http(addr, 5, "atrium");
    book_over_http(addr, 22, "nook");
    let b = Browser::start(1000, 1300);
    b.goto(&page_url(&s));
    wait_cell(&b, "atrium", "05:00", "own");
    wait_cell(&b, "nook", "22:00", "own");
    let rows = b.js(
        "return [...document.querySelectorAll('#grid tbody tr')].map((r) => r.dataset.start);",
        json!([]),
    );
    let mut hours = vec![5];
    hours.extend(7..=20);
    hours.push(22);
    let want: Vec<String> = hours
        .iter()
        .flat_map(|h| (0..60).step_by(15).map(move |m| format!("{h:02}:{m:02}")))
        .collect();
    assert_eq!(
        rows,
        json!(want),
        "the working day and every booked hour, in 15-minute rows, in order"
    );
}

/// A floor on Pacific/Kiritimati: UTC+14 all year (no daylight saving, so the test is stable),
/// its date a day ahead of UTC's from 10:00 UTC on; on a 30-minute grid, at most 2 hours.
const KIRITIMATI: &str = r#"time_zone = "Pacific/Kiritimati"
grid_minutes = 30
max_minutes = 120

[[room]]
id = "atrium"
name = "The Atrium"
seats = 24

[[room]]
id = "nook"
name = "The Nook"
seats = 4
"#;

/// Kiritimati's date and wall-clock minute now, from the system clock and its fixed offset.
fn kiritimati_now() -> (String, u32) {
    let utc = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the clock is after 1970")
        .as_secs()
        / 60;
    let local = u32::try_from(utc + 14 * 60).expect("minutes fit in 32 bits");
    let day = Day::containing(local).expect("a day of 2000-2999");
    (day.to_string(), local % (24 * 60))
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn a_floor_in_another_zone_opens_on_its_today_in_its_grid_and_lengths() {
    let data = TempDir::new("web-zone");
    let rooms = data.path().join("rooms.toml");
    std::fs::write(&rooms, KIRITIMATI).unwrap();
    let s = Server::start(
        &["--http", "127.0.0.1:0", "--rooms", rooms.to_str().unwrap()],
        data.path(),
    );
    let b = Browser::start(1000, 1300);
    // No day in the address: the page opens on today, the floor's today.
    b.goto(&format!("http://{}/", s.http[0]));
    b.wait_js(
        "the grid",
        "return !!document.querySelector('#grid caption') && !document.querySelector('[aria-busy]');",
        SHOW,
    );
    let before = kiritimati_now();
    let got = b.js(
        "const len = document.getElementById('length');\
         return {\
           day: document.getElementById('day').value,\
           label: document.getElementById('day-label').textContent,\
           caption: document.querySelector('#grid caption').textContent,\
           head: document.querySelector('#grid thead th').textContent,\
           rows: [...document.querySelectorAll('#grid tbody tr')].map((r) => r.dataset.start),\
           lengths: [...len.options].map((o) => o.value), length: len.value,\
           cells: [...document.querySelectorAll('#grid td')].map((t) => [t.dataset.start, t.dataset.state]),\
         };",
        json!([]),
    );
    let after = kiritimati_now();
    let day = got["day"].as_str().unwrap_or_default();
    assert!(
        day == before.0 || day == after.0,
        "the page opens on Kiritimati's today ({} by the system clock), not UTC's: {got}",
        before.0
    );
    let caption = got["caption"].as_str().unwrap_or_default();
    assert!(
        caption.contains("Pacific/Kiritimati") && caption.contains(day),
        "the caption names the zone and the day: {caption}"
    );
    assert!(
        caption.contains("30-minute rows") && !caption.contains("UTC"),
        "{caption}"
    );
    assert_eq!(got["label"], "Day (Pacific/Kiritimati)", "{got}");
    assert_eq!(got["head"], "Time (Pacific/Kiritimati)", "{got}");
    let want: Vec<String> = (7..=20)
        .flat_map(|h| [format!("{h:02}:00"), format!("{h:02}:30")])
        .collect();
    assert_eq!(
        got["rows"],
        json!(want),
        "rows of the floor's 30-minute grid"
    );
    assert_eq!(
        got["lengths"],
        json!(["30", "60", "90", "120"]),
        "lengths on the grid, at most the floor's longest booking"
    );
    assert_eq!(got["length"], "60", "an hour by default");
    // The page's clock at a fixed instant, whatever the time the test runs at: 12:00 UTC on
    // 2026-12-06 is 02:00 on 2026-12-07 in Kiritimati.
    let fixed = b.js(
        "return import('/web/time.js').then((t) => { const at = Date.UTC(2026, 11, 6, 12);\
           return [t.today('Pacific/Kiritimati', at), t.nowMinute('2026-12-07', 'Pacific/Kiritimati', at),\
                   t.nowMinute('2026-12-06', 'Pacific/Kiritimati', at), t.today('UTC', at)]; });",
        json!([]),
    );
    assert_eq!(fixed, json!(["2026-12-07", 120, 1560, "2026-12-06"]));
    // Past and free on the floor's clock (checked unless its day turned meanwhile).
    if before.0 == after.0 && day == before.0 {
        let minute = |t: &str| {
            let (h, m) = t.split_once(':').unwrap();
            h.parse::<u32>().unwrap() * 60 + m.parse::<u32>().unwrap()
        };
        for cell in got["cells"].as_array().unwrap() {
            let (start, state) = (cell[0].as_str().unwrap(), cell[1].as_str().unwrap());
            let m = minute(start);
            if m < before.1 {
                assert_eq!(state, "past", "{start} has begun at {}", before.1);
            } else if m > after.1 {
                assert_eq!(state, "free", "{start} is to come at {}", after.1);
            }
        }
    }
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn errors_are_said_in_words() {
    let data = TempDir::new("web-errors");
    let mut s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let b = Browser::start(1000, 1300);
    b.goto(&page_url(&s));
    wait_cell(&b, "studio-b", "09:00", "free");

    // A client without form elicitation: the rooms and the argument to give, in words.
    b.click(&b.find("#settings summary"));
    b.click(&b.find("#declare-form"));
    book_in_words(&b, 9, "the big room");
    let said = wait_says(&b, "error", "The tool reported an error: 'the big room'");
    assert!(said.contains("with room_id set to their pick"), "{said}");
    b.click(&b.find("#declare-form"));

    // A tool error.
    b.fill(&b.find("#tool-args [data-field=room_hint] input"), "");
    b.fill(&b.find("#tool-args [data-field=room_id] input"), "moon");
    b.click(&b.find("#call"));
    let said = wait_says(
        &b,
        "error",
        "The tool reported an error: There is no room 'moon'",
    );
    assert!(said.contains("atrium"), "{said}");

    // The server goes away: the next request says so.
    s.kill9();
    b.click(&b.find("#show-day"));
    let said = wait_says(&b, "error", "The connection to the server dropped");
    assert!(said.contains("redmark serve"), "{said}");
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn a_pasted_token_signs_in_and_stays_in_the_tab() {
    const TOKEN: &str = "alice-token-0123456789";
    let data = TempDir::new("web-token");
    let file = data.path().join("tokens.toml");
    const BOB: &str = "bob-token-0123456789ab";
    std::fs::write(&file, format!("alice = \"{TOKEN}\"\nbob = \"{BOB}\"\n")).unwrap();
    let s = Server::start(
        &["--http", "127.0.0.1:0", "--tokens", file.to_str().unwrap()],
        data.path(),
    );
    let b = Browser::start(1000, 1300);
    b.goto(&page_url(&s));
    wait_says(&b, "error", "The server needs a bearer token");
    let focused = b.js("return document.activeElement.id", json!([]));
    assert_eq!(focused, "token", "the focus goes to the token field");
    b.keys(&[TOKEN, key::ENTER]);
    wait_says(&b, "status", "Connected.");
    wait_cell(&b, "nook", "09:00", "free");
    b.click(&b.find("td[data-room=nook][data-start='09:00'] button"));
    wait_says(&b, "status", "Booked The Nook (4 seats)");
    wait_cell(&b, "nook", "09:00", "own");
    // Kept in the tab (sessionStorage), never in localStorage; a reload stays signed in.
    let stored: Value = b.js(
        "return [sessionStorage.getItem('redmark.token'),\
          JSON.stringify(Object.entries(localStorage)).includes(arguments[0])]",
        json!([TOKEN]),
    );
    assert_eq!(stored, json!([TOKEN, false]));
    b.refresh();
    wait_cell(&b, "nook", "09:00", "own");
    // Bob's booking is booked, not Alice's; hers made elsewhere (not on this page) is hers.
    for (n, (token, room)) in [(BOB, "atrium"), (TOKEN, "studio-b")]
        .into_iter()
        .enumerate()
    {
        let call = tool_call(
            n as u64 + 1,
            "book_room",
            json!({"day": DAY, "hour": 10, "room_id": room}),
            false,
        );
        let r = post_mcp(
            s.http[0],
            &call,
            &[("Authorization", &format!("Bearer {token}"))],
        );
        assert_eq!(
            r.json()["result"]["structuredContent"]["booked"],
            true,
            "{room}"
        );
    }
    b.click(&b.find("#show-day"));
    wait_cell(&b, "studio-b", "10:00", "own");
    wait_cell(&b, "atrium", "10:00", "booked");
    // Forgotten: the next request is refused, in words.
    b.click(&b.find("#forget"));
    b.click(&b.find("#show-day"));
    wait_says(&b, "error", "The server needs a bearer token");
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn the_page_echoes_request_state_byte_for_byte() {
    let data = TempDir::new("web-echo");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let b = Browser::start(800, 600);
    b.goto(&page_url(&s));
    // The page's own client module, run in the browser: the raw token is kept, escapes and all
    // (a JSON.parse/stringify round trip would give "a/b"), whatever comes around it.
    let got = b.js(
        r#"return import('/web/mcp.js').then((m) => [
            m.rawMember('{"jsonrpc":"2.0","id":1,"result":{"content":[{"a":"}"}],"requestState" : "a\\u002fb","x":1}}', ['result', 'requestState']),
            m.rawMember('{"result":{"inputRequests":{"requestState":"no"}}}', ['result', 'requestState']),
            m.headerValue('book_room'),
            m.headerValue('réserver'),
        ]);"#,
        json!([]),
    );
    assert_eq!(
        got,
        json!([
            r#""a\u002fb""#,
            null,
            "book_room",
            "=?base64?csOpc2VydmVy?="
        ])
    );
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn every_field_kind_renders_labelled_and_reads_back() {
    let data = TempDir::new("web-kinds");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let b = Browser::start(800, 600);
    b.goto(&page_url(&s));
    // Every PrimitiveSchemaDefinition kind, through the page's own renderer in the browser.
    let schema = json!({"type": "object", "required": ["name", "ok"], "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 5, "default": "Al"},
        "email": {"type": "string", "format": "email"},
        "when": {"type": "string", "format": "date", "default": "2099-09-17"},
        "n": {"type": "integer", "minimum": 1, "maximum": 9, "default": 3},
        "x": {"type": "number"},
        "ok": {"type": "boolean", "default": true},
        "color": {"type": "string", "enum": ["red", "green"]},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}], "default": "l"},
        "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["Apple", "Banana"]},
        "many": {"type": "string", "enum": ["1", "2", "3", "4", "5", "6"]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "default": ["y"]},
        "fruit": {"type": "array", "items": {"anyOf": [{"const": "p", "title": "Pears"}, {"const": "q", "title": "Quinces"}]}, "maxItems": 2},
        "note": {"type": "string", "description": "Say more — last answer: 'zzzzzz' is longer than 5 characters"},
    }});
    let got = b.js(
        r#"return import('/web/form.js').then((f) => {
            const div = document.createElement('div');
            document.body.append(div);
            const r = f.renderFields(div, arguments[0], { email: 'a@b.example' }, 't');
            const before = r.read();
            const q = (s) => div.querySelector(s);
            q('[data-field=x] input').value = '2.5';
            q('[data-field=many] select').value = '6';
            [...div.querySelectorAll('[data-field=fruit] input')].forEach((c) => { c.checked = true; });
            q('[data-field=ok] input').checked = false;
            const unlabelled = [...div.querySelectorAll('input, select, textarea')]
                .filter((c) => !(c.labels && c.labels.length)).map((c) => c.name);
            return [before, r.read(), unlabelled,
                [...div.querySelectorAll('.field')].map((e) => e.className),
                q('.field.marked').dataset.field, q('.field.marked .mark').textContent,
                q('[data-field=legacy]').textContent, q('[data-field=name] .hint').textContent];
        });"#,
        json!([schema]),
    );
    assert_eq!(
        got[0],
        json!({"name": "Al", "email": "a@b.example", "when": "2099-09-17", "n": 3, "ok": true,
               "size": "l", "tags": ["y"]}),
        "defaults and the values given"
    );
    assert_eq!(
        got[1],
        json!({"name": "Al", "email": "a@b.example", "when": "2099-09-17", "n": 3, "x": 2.5,
               "ok": false, "size": "l", "many": "6", "tags": ["y"], "fruit": ["p", "q"]})
    );
    assert_eq!(got[2], json!([]), "every control has a label");
    let kinds: Vec<&str> = got[3]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().split(' ').nth(1).unwrap())
        .collect();
    // In the order the schema lists them (this crate's serde_json sorts keys).
    assert_eq!(
        kinds,
        [
            "field-single",  // color: enum
            "field-text",    // email
            "field-multi",   // fruit: items.anyOf
            "field-single",  // legacy: enum + enumNames
            "field-single",  // many: a list box
            "field-number",  // n: integer
            "field-text",    // name
            "field-text",    // note
            "field-boolean", // ok
            "field-single",  // size: oneOf
            "field-multi",   // tags: items.enum
            "field-text",    // when: date
            "field-number",  // x: number
        ]
    );
    assert_eq!(got[4], "note");
    assert_eq!(got[5], "✗ 'zzzzzz' is longer than 5 characters");
    assert!(got[6].as_str().unwrap().contains("Banana"), "{}", got[6]);
    assert_eq!(got[7], "2 to 5 characters");
}

/// No browser needed: the page through the real server, its headers, and the same
/// Host/Origin guard as `/mcp` (no CORS header is added anywhere).
#[test]
fn the_page_is_served_behind_the_same_guard() {
    let data = TempDir::new("web-guard");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let a = s.http[0];
    let r = http(a, "GET", "/", &[], b"");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    let csp = r.header("content-security-policy").unwrap_or_default();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("connect-src 'self'"),
        "{csp}"
    );
    assert!(String::from_utf8_lossy(&r.body).contains("/web/app.js"));
    let js = http(a, "GET", "/web/mcp.js", &[], b"");
    assert_eq!(js.status, 200);
    assert_eq!(
        js.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    let etag = js.header("etag").unwrap().to_string();
    let again = http(a, "GET", "/web/mcp.js", &[("If-None-Match", &etag)], b"");
    assert_eq!(again.status, 304);
    for r in [&r, &js] {
        assert!(r.header("access-control-allow-origin").is_none());
    }
    // DNS rebinding: a foreign Host or Origin is refused for the page as for /mcp.
    let evil = http(a, "GET", "/", &[("Host", "evil.example")], b"");
    assert_eq!(evil.status, 403);
    let evil = http(
        a,
        "GET",
        "/web/app.js",
        &[("Origin", "http://evil.example")],
        b"",
    );
    assert_eq!(evil.status, 403);
    assert_eq!(http(a, "GET", "/web/nope.js", &[], b"").status, 404);
}
