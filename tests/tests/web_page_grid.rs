//! The booking page's grid in real headless Chromium: each booking one block at its real start
//! and length (one's own with its title, another's "Booked"), the day chosen on the grid booked,
//! every booked hour shown, and a floor in another zone opened on its own today with its grid
//! and lengths. What the page shows is checked against the server itself (`list_rooms`).

#![cfg_attr(not(browser_tools), allow(dead_code, unused_imports))]

use std::time::{SystemTime, UNIX_EPOCH};

use redmark_core::booking::Day;
use redmark_tests::browser::{key, Browser};
use redmark_tests::page::setup::{
    book, book_over_http, free_rooms, free_rooms_for, free_rooms_on, page_url, DAY,
};
use redmark_tests::page::{wait_cell, wait_question, wait_says, SHOW};
use redmark_tests::server::{Server, TempDir};
use serde_json::json;

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
