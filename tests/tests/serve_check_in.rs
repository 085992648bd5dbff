//! Check-in and release with the real clock: `redmark serve` on PostgreSQL with a floor whose
//! check-in window is 3 minutes. Two bookings are moved (in the database) to have started two
//! minutes ago; one is checked in, then the server is killed with `kill -9` inside the window.
//! A new server on the same database finds the check-in kept, and its timer releases the other
//! once the window passes: `list_bookings` says "released (not checked in)".
#![cfg_attr(not(pg_tools), allow(dead_code, unused_imports))]

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redmark_tests::pg::Cluster;
use redmark_tests::server::{tool_call, LineClient, Server, TempDir};
use serde_json::{json, Value};

/// The floor: the default rooms, a 5-minute grid, check-in within 3 minutes of the start.
const FLOOR: &str = "grid_minutes = 5\ncheck_in_minutes = 3\n\
[[room]]\nid = \"atrium\"\nname = \"The Atrium\"\nseats = 24\n\
[[room]]\nid = \"nook\"\nname = \"The Nook\"\nseats = 4\n";

/// The release timer's period (`RELEASE_EVERY`), and the slack a loaded machine gets.
const TIMER: Duration = Duration::from_secs(15);

fn call<R: std::io::Read + Send + 'static, W: std::io::Write>(
    c: &mut LineClient<R, W>,
    id: u64,
    tool: &str,
    args: Value,
) -> Value {
    let r = c.request(&tool_call(id, tool, args, false));
    assert!(r["result"].is_object(), "{r}");
    r["result"].clone()
}

fn text(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap_or("")
}

/// Unix seconds now.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[test]
#[cfg_attr(not(pg_tools), ignore = "PostgreSQL is not installed")]
fn a_no_show_is_released_by_the_timer_and_a_check_in_survives_kill_9() {
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    let dir = TempDir::new("check-in");
    let floor = dir.path().join("floor.toml");
    std::fs::write(&floor, FLOOR).unwrap();
    let floor = floor.to_str().unwrap();
    let url = pg.url();
    let args = ["--tcp", "127.0.0.1:0", "--store", &url, "--rooms", floor];
    let data = TempDir::new("check-in-data");
    let mut server = Server::start(&args, data.path());
    let mut c = server.tcp_client();
    let mut ids = Vec::new();
    for (i, room) in ["atrium", "nook"].into_iter().enumerate() {
        let r = call(
            &mut c,
            i as u64 + 1,
            "book_room",
            json!({"day": "tomorrow", "start": "9:00", "room_id": room}),
        );
        let id = r["structuredContent"]["booking"]["id"].as_str().unwrap();
        ids.push(id.trim_start_matches("bk_").to_owned());
    }
    // Far enough from a minute's end that the check-in below is inside the window.
    while now() % 60 > 40 {
        std::thread::sleep(Duration::from_secs(1));
    }
    let started = now() / 60 - 2;
    pg.psql(&format!(
        "UPDATE redmark_bookings SET start_minute = {started}, end_minute = {} WHERE id IN ({})",
        started + 60,
        ids.join(", ")
    ));
    let r = call(&mut c, 3, "check_in", json!({"booking_id": "bk_1"}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(
        text(&r).ends_with("is checked in: it keeps its room."),
        "{r}"
    );
    // Inside the window: nothing is released yet; the server dies without a word.
    server.kill9();
    server.wait_exit();
    assert_eq!(
        pg.psql("SELECT id, checked_in, released FROM redmark_bookings ORDER BY id"),
        "1|t|f\n2|f|f"
    );

    let server = Server::start(&args, data.path());
    let mut c = server.tcp_client();
    let due = Duration::from_secs((started + 3) * 60 - now().min((started + 3) * 60));
    let deadline = Instant::now() + due + TIMER + TIMER;
    let listed = loop {
        let r = call(&mut c, 4, "list_bookings", json!({"day": "today"}));
        if text(&r).contains("released") || Instant::now() > deadline {
            break r;
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    let t = text(&listed);
    assert!(t.contains("bk_2 — The Nook on "), "{listed}");
    assert!(t.contains(") — released (not checked in)"), "{listed}");
    let bookings = &listed["structuredContent"]["bookings"];
    assert_eq!(bookings[0]["status"], "active", "{listed}");
    assert_eq!(
        bookings[0]["checked_in"], true,
        "the check-in survived kill -9"
    );
    assert_eq!(bookings[1]["status"], "released", "{listed}");
    assert_eq!(
        pg.psql("SELECT id, checked_in, released FROM redmark_bookings ORDER BY id"),
        "1|t|f\n2|f|t"
    );
    // Each trail: made (code 1), then checked in (4) or released by the timer (5), once.
    assert_eq!(
        pg.psql("SELECT booking_id, get_byte(step, 0) FROM redmark_trail ORDER BY booking_id, seq"),
        "1|1\n1|4\n2|1\n2|5"
    );
    assert!(
        server.stderr().contains("released: not checked in"),
        "{}",
        server.stderr()
    );
}
