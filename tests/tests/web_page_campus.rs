//! The booking page on a site of two buildings in real headless Chromium: a building and level
//! choice above the grid (from day_schedule's answer), the grid of the building chosen on its
//! own clock, a booking in New York at its New York place.

#![cfg_attr(not(browser_tools), allow(dead_code, unused_imports))]

use std::time::Duration;

use redmark_tests::browser::Browser;
use redmark_tests::server::{post_mcp, tool_call, Server, TempDir};
use serde_json::{json, Value};

const DAY: &str = "2099-07-16";
const SHOW: Duration = Duration::from_secs(30);

const SITE: &str = r#"
[[building]]
id = "ber"
name = "Berlin HQ"
time_zone = "Europe/Berlin"

[[building.room]]
id = "ber-1-a"
name = "Spree"
seats = 8
level = "1"

[[building.room]]
id = "ber-2-a"
name = "Havel"
seats = 4
level = "2"

[[building]]
id = "nyc"
name = "New York"
time_zone = "America/New_York"

[[building.room]]
id = "nyc-g-a"
name = "Hudson"
seats = 12
level = "Ground"

[[building.room]]
id = "nyc-5-a"
name = "East"
seats = 6
level = "5"
"#;

/// What the grid shows: the caption, the rooms in its head, the choices above it, the states.
fn grid(b: &Browser) -> Value {
    b.js(
        "const opts = (id) => { const s = document.getElementById(id);\
           return s ? [...s.options].map((o) => o.value) : null; };\
         return {\
           caption: document.querySelector('#grid caption').textContent,\
           rooms: [...document.querySelectorAll('#grid thead th')].slice(1).map((t) => t.firstChild.textContent),\
           buildings: opts('building'), levels: opts('level'),\
           cells: [...document.querySelectorAll('#grid td')].map((t) => [t.dataset.room, t.dataset.start, t.dataset.state]),\
         };",
        json!([]),
    )
}

/// Waits until the grid is drawn and its caption says `text`.
fn wait_caption(b: &Browser, text: &str) {
    b.wait_js(
        &format!("the grid's caption to say {text:?}"),
        &format!(
            "const c = document.querySelector('#grid caption');\
             return !!c && c.textContent.includes({text:?}) && !document.querySelector('[aria-busy]');"
        ),
        SHOW,
    );
}

/// Chooses `value` in the select `id` above the grid.
fn choose(b: &Browser, id: &str, value: &str) {
    b.js(
        &format!(
            "const s = document.getElementById('{id}'); s.value = '{value}';\
             s.dispatchEvent(new Event('change'));"
        ),
        json!([]),
    );
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn a_site_chooses_its_building_and_level_above_the_grid() {
    let data = TempDir::new("web-campus");
    let rooms = data.path().join("site.toml");
    std::fs::write(&rooms, SITE).unwrap();
    let s = Server::start(
        &["--http", "127.0.0.1:0", "--rooms", rooms.to_str().unwrap()],
        data.path(),
    );
    let args = json!({"day": DAY, "start": "09:30", "minutes": 45, "room_id": "nyc-g-a"});
    let r = post_mcp(s.http[0], &tool_call(1, "book_room", args, true), &[]);
    assert_eq!(r.json()["result"]["structuredContent"]["booked"], true);

    let b = Browser::start(1000, 1300);
    b.goto(&format!("http://{}/?day={DAY}", s.http[0]));
    wait_caption(&b, "Europe/Berlin");
    let g = grid(&b);
    assert_eq!(g["buildings"], json!(["ber", "nyc"]), "{g}");
    assert_eq!(g["levels"], json!(["", "1", "2"]), "{g}");
    assert_eq!(
        g["rooms"],
        json!(["Spree", "Havel"]),
        "the first building's rooms: {g}"
    );

    choose(&b, "building", "nyc");
    wait_caption(&b, "America/New_York");
    let g = grid(&b);
    assert_eq!(g["rooms"], json!(["Hudson", "East"]), "{g}");
    assert_eq!(g["levels"], json!(["", "Ground", "5"]), "{g}");
    let cells = g["cells"].as_array().unwrap();
    assert!(
        cells.contains(&json!(["nyc-g-a", "09:30", "own"])),
        "the booking at 09:30 New York time: {g}"
    );

    choose(&b, "level", "5");
    b.wait_js(
        "only level 5",
        "const h = [...document.querySelectorAll('#grid thead th')];\
         return h.length === 2 && h[1].textContent.startsWith('East') && !document.querySelector('[aria-busy]');",
        SHOW,
    );
}
