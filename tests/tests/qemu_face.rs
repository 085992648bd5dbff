//! The networked door panel's wall clock under QEMU: provisioned with an SNTP server (a
//! responder on the host side of QEMU's user network), it refuses to book until that server
//! answers, then refuses past hours by the host's time; an answer outside 2026-2099, one behind
//! its clock, or one far ahead does not move the clock back or far. Its OLED (QEMU's
//! `screendump` through QMP, compared with the golden PNGs in docs/ outside the clock's digits;
//! `REDMARK_RETAKE_SCREENS=1` retakes them: scripts/panel-screenshots.sh) shows "no time", then
//! the room free, then a booking made over HTTP by the Python SDK 2.3 client, then the room busy until it ends and asking
//! for its check-in ("up" checks it in; one nobody checked in to is released when the floor's
//! window passes).
//!
//! Needs `qemu-system-arm` and the `thumbv7m-none-eabi` target (ignored without them, required
//! by scripts/test-all.sh). The SNTP responder's port is fixed (built into the image), so these
//! tests take turns. Every wait is bounded; every QEMU is killed by its `NetPanel`.

use std::time::Duration;

use redmark_core::booking::{minute_of, Day};
use redmark_tests::qemu::face::{expect_screen, host_now, sntp_firmware, SntpResponder};
use redmark_tests::qemu::net::{HttpAnswer, NetPanel};
use redmark_tests::qemu::sdk::sdk_book;
use redmark_tests::server::meta;
use serde_json::{json, Value};

/// Longest wait for the panel to take an SNTP answer: two of its requests while it has no
/// time, or one while its clock is set (16 s), with room for a slow machine.
const SNTP_WAIT: Duration = Duration::from_secs(40);
/// Longest wait for the screen to show what it should (it redraws within 250 ms of a change).
const SHOT_WAIT: Duration = Duration::from_secs(10);

fn call(name: &str, args: Value) -> Value {
    let params = json!({"name": name, "arguments": args, "_meta": meta(json!({}))});
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
}

fn result(a: &HttpAnswer) -> Value {
    assert_eq!(a.status, 200, "{a:?}");
    let v: Value =
        serde_json::from_str(&a.body).unwrap_or_else(|e| panic!("not JSON ({e}): {a:?}"));
    v["result"].clone()
}

/// The UTC day and hour that contain unix time `t`.
fn day_hour(t: u64) -> (String, u32) {
    let m = minute_of(t).expect("a time in 2000-2999");
    let day = Day::containing(m).expect("a day");
    (day.to_string(), (m - day.first_minute()) / 60)
}

/// Books the atrium for the hour that contains unix time `t`; the tool result.
fn book_at(p: &NetPanel, t: u64) -> Value {
    let (day, hour) = day_hour(t);
    result(&p.post(&call(
        "book_room",
        json!({"day": day, "hour": hour, "room_id": "atrium"}),
    )))
}

fn text(r: &Value) -> String {
    r["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Waits until the panel's stderr holds `needle` `count` times.
fn wait_for(p: &NetPanel, needle: &str, count: usize) {
    let end = std::time::Instant::now() + SNTP_WAIT;
    while p.panel.stderr().matches(needle).count() < count {
        assert!(
            std::time::Instant::now() < end,
            "no {needle:?} (x{count}) within {SNTP_WAIT:?}:\n{}",
            p.panel.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn without_an_sntp_answer_the_panel_books_nothing_then_refuses_past_hours() {
    let sntp = SntpResponder::start();
    let p = NetPanel::boot(&sntp_firmware());
    // No answer yet: no time, no booking (not even one far in the future).
    let r = book_at(&p, 4_070_908_800); // 2099-01-01
    assert_eq!(r["isError"], json!(true), "{r}");
    assert!(text(&r).contains("no time"), "{r}");

    // A time before 2026 (a forged or broken server) is refused: still no time.
    sntp.answer(-(30 * 365 * 86_400));
    wait_for(&p, "clock: SNTP time outside 2026-2099 refused", 1);
    let r = book_at(&p, 4_070_908_800);
    assert!(text(&r).contains("no time"), "{r}");

    sntp.answer(0);
    wait_for(&p, "clock: set by SNTP to ", 1);
    let now = host_now();
    let r = book_at(&p, now - 2 * 3600);
    assert_eq!(r["isError"], json!(true), "{r}");
    assert!(text(&r).contains("has already started"), "{r}");
    let r = book_at(&p, now + 2 * 3600);
    assert_eq!(r["isError"], json!(false), "{r}");
    assert!(sntp.answered() >= 2);
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn an_sntp_answer_behind_the_clock_or_far_ahead_does_not_move_it_back_or_far() {
    let sntp = SntpResponder::start();
    let p = NetPanel::boot(&sntp_firmware());
    sntp.answer(0);
    wait_for(&p, "clock: set by SNTP to ", 1);

    // A day back: refused, the clock keeps the host's time (the past hour stays past).
    sntp.answer(-86_400);
    wait_for(&p, "clock: SNTP time behind the clock refused", 1);
    let r = book_at(&p, host_now() - 2 * 3600);
    assert!(text(&r).contains("has already started"), "{r}");

    // A day ahead: the clock moves 4 s, not a day (an hour two from now is still bookable).
    sntp.answer(86_400);
    wait_for(&p, "clock: SNTP time too far ahead, stepped 4 s only", 1);
    let r = book_at(&p, host_now() + 2 * 3600);
    assert_eq!(r["isError"], json!(false), "{r}");
}

/// The panel's time in the screen test: 2026-09-21 09:59:40 UTC when the clock is set, so a
/// booking for 10:00 can be made and then seen to begin.
const SCREEN_T0: u64 = 1_789_984_780;

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn the_screen_shows_no_time_then_free_then_the_booking_and_busy_until_it_ends() {
    assert_eq!(day_hour(SCREEN_T0), ("2026-09-21".to_owned(), 9));
    let sntp = SntpResponder::start();
    let p = NetPanel::boot(&sntp_firmware());
    expect_screen(&p.panel, "no-time", SHOT_WAIT);

    let set_at = std::time::Instant::now();
    sntp.answer(SCREEN_T0 as i64 - host_now() as i64);
    wait_for(&p, "clock: set by SNTP to ", 1);
    expect_screen(&p.panel, "free", SHOT_WAIT);

    // Booked for the next hour by the Python SDK 2.3 client over HTTP (a plain POST where the
    // SDK is not installed and not required): "until 10:00" and the booking appear at once.
    let r = match sdk_book(&p.url(), "2026-09-21", 10) {
        Some(out) => out["result"].clone(),
        None => result(&p.post(&call(
            "book_room",
            json!({"day": "2026-09-21", "hour": 10, "room_id": "atrium"}),
        ))),
    };
    assert_eq!(r["isError"], json!(false), "{r}");
    assert_eq!(
        r["structuredContent"]["booking"]["room_id"], "atrium",
        "{r}"
    );
    expect_screen(&p.panel, "free-until", SHOT_WAIT);

    // At 10:00 by the panel's clock the room is busy until 11:00, waiting for its check-in.
    let ten = Duration::from_secs(20 + 2);
    std::thread::sleep(ten.saturating_sub(set_at.elapsed()));
    expect_screen(&p.panel, "check-in", SHOT_WAIT);
}

/// QMP: press and release the gamepad's select button (QEMU maps it to Ctrl), held 200 ms.
const SELECT_KEY: &str = r#"{"execute":"send-key","arguments":{"keys":[{"type":"qcode","data":"ctrl"}],"hold-time":200}}"#;

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn book_now_at_the_door_books_the_hour_under_way_once_and_only_with_a_time() {
    let sntp = SntpResponder::start();
    let p = NetPanel::boot(&sntp_firmware());
    p.panel.qmp(&[SELECT_KEY]);
    wait_for(&p, "door: book now pressed with no time: nothing done", 1);

    sntp.answer(SCREEN_T0 as i64 - host_now() as i64);
    wait_for(&p, "clock: set by SNTP to ", 1);
    expect_screen(&p.panel, "free", SHOT_WAIT);
    p.panel.qmp(&[SELECT_KEY]);
    wait_for(&p, "door: booked now, bk_1, hour 9", 1);
    expect_screen(&p.panel, "book-now", SHOT_WAIT);

    // Pressed again: the room is held; still one booking.
    p.panel.qmp(&[SELECT_KEY]);
    wait_for(&p, "door: book now pressed, the room is already held", 1);
    assert_eq!(p.panel.stderr().matches("door: booked now").count(), 1);
}

/// The panel's time in the door-buttons test: 2026-09-21 09:30:00 UTC when the clock is set,
/// on the floor's 15-minute grid, so "end now" (which ends at the grid's next step) frees the
/// room at once.
const DOOR_T0: u64 = 1_789_983_000;
/// QMP: press and release the gamepad's right button ("extend 15 min").
const RIGHT_KEY: &str = r#"{"execute":"send-key","arguments":{"keys":[{"type":"qcode","data":"right"}],"hold-time":200}}"#;
/// QMP: press and release the gamepad's left button ("end now").
const LEFT_KEY: &str = r#"{"execute":"send-key","arguments":{"keys":[{"type":"qcode","data":"left"}],"hold-time":200}}"#;

/// Whether the atrium is free from 09:45 on 2026-09-21 for `minutes`, by `list_rooms` over HTTP
/// (the next start on the grid: a slot under way is not offered).
fn atrium_free_from_quarter_to_ten(p: &NetPanel, minutes: u32) -> bool {
    let r = result(&p.post(&call(
        "list_rooms",
        json!({"day": "2026-09-21", "start": "9:45", "minutes": minutes}),
    )));
    let rooms = r["structuredContent"]["rooms"]
        .as_array()
        .unwrap_or_else(|| panic!("rooms in {r}"))
        .clone();
    rooms
        .iter()
        .any(|x| x["id"] == "atrium" && x["free"] == json!(true))
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn the_door_books_extends_and_ends_a_walk_up_booking_that_mcp_clients_see() {
    assert_eq!(day_hour(DOOR_T0), ("2026-09-21".to_owned(), 9));
    let sntp = SntpResponder::start();
    let p = NetPanel::boot(&sntp_firmware());
    // Before the clock: neither button does anything.
    p.panel.qmp(&[LEFT_KEY]);
    wait_for(&p, "door: end now pressed with no time: nothing done", 1);
    sntp.answer(DOOR_T0 as i64 - host_now() as i64);
    wait_for(&p, "clock: set by SNTP to ", 1);
    expect_screen(&p.panel, "free", SHOT_WAIT);

    // Booked over HTTP for 11:00 (someone else's): free until then, that booking next.
    let r = result(&p.post(&call(
        "book_room",
        json!({"day": "2026-09-21", "hour": 11, "room_id": "atrium"}),
    )));
    assert_eq!(r["isError"], json!(false), "{r}");
    expect_screen(&p.panel, "door-booked", SHOT_WAIT);
    // Nothing under way: "end now" ends nothing.
    p.panel.qmp(&[LEFT_KEY]);
    wait_for(&p, "door: end now pressed, no booking under way", 1);

    // "Book now": busy until 10:00, the buttons shown; an MCP client sees the room taken.
    assert!(atrium_free_from_quarter_to_ten(&p, 15));
    p.panel.qmp(&[SELECT_KEY]);
    wait_for(&p, "door: booked now, bk_2, hour 9", 1);
    expect_screen(&p.panel, "door-walk-up", SHOT_WAIT);
    assert!(!atrium_free_from_quarter_to_ten(&p, 15));

    // "Extend 15 min": until 10:15, once per press.
    p.panel.qmp(&[RIGHT_KEY]);
    wait_for(&p, "door: extend done, bk_2", 1);
    expect_screen(&p.panel, "door-extended", SHOT_WAIT);
    assert_eq!(p.panel.stderr().matches("door: extend done").count(), 1);

    // "End now": free again at once (09:30 is on the grid), for the door and for MCP clients.
    p.panel.qmp(&[LEFT_KEY]);
    wait_for(&p, "door: end now done, bk_2", 1);
    expect_screen(&p.panel, "door-booked", SHOT_WAIT);
    assert!(atrium_free_from_quarter_to_ten(&p, 15));
    // The booking made over HTTP is not the door's to end (it is not under way either).
    assert!(!atrium_free_from_quarter_to_ten(&p, 120));

    // "Book now" again: the hour's first half is the ended walk-up booking's, so the door
    // books what is free of it, from 09:30 to 10:00, as the face's "free until 11:00" offers.
    p.panel.qmp(&[SELECT_KEY]);
    wait_for(&p, "door: booked now, bk_3, hour 9", 1);
    assert!(!atrium_free_from_quarter_to_ten(&p, 15));
}

/// The panel's time in the others'-booking test: 2026-09-21 09:44:50 UTC when the clock is set,
/// so a booking for 09:45 can be made over HTTP and then seen under way.
const OTHERS_T0: u64 = 1_789_983_890;

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn the_door_neither_ends_nor_extends_a_booking_made_by_an_mcp_client() {
    assert_eq!(day_hour(OTHERS_T0), ("2026-09-21".to_owned(), 9));
    let sntp = SntpResponder::start();
    let p = NetPanel::boot(&sntp_firmware());
    let set_at = std::time::Instant::now();
    sntp.answer(OTHERS_T0 as i64 - host_now() as i64);
    wait_for(&p, "clock: set by SNTP to ", 1);
    let r = result(&p.post(&call(
        "book_room",
        json!({"day": "2026-09-21", "start": "9:45", "minutes": 15, "room_id": "atrium"}),
    )));
    assert_eq!(r["isError"], json!(false), "{r}");

    // At 09:45 by the panel's clock the booking is under way: neither button touches it.
    let quarter_to = Duration::from_secs(10 + 2);
    std::thread::sleep(quarter_to.saturating_sub(set_at.elapsed()));
    p.panel.qmp(&[LEFT_KEY]);
    wait_for(
        &p,
        "door: end now pressed, bk_1 was not booked at the door: unchanged",
        1,
    );
    p.panel.qmp(&[RIGHT_KEY]);
    wait_for(
        &p,
        "door: extend pressed, bk_1 was not booked at the door: unchanged",
        1,
    );
    // Still ends at 10:00: the room is free from then, for MCP clients too.
    let r = result(&p.post(&call(
        "list_rooms",
        json!({"day": "2026-09-21", "start": "10:00", "minutes": 15}),
    )));
    let atrium = &r["structuredContent"]["rooms"][0];
    assert_eq!(
        (&atrium["id"], &atrium["free"]),
        (&json!("atrium"), &json!(true)),
        "{r}"
    );
    assert!(!p.panel.stderr().contains(" done, bk_"));
}

/// QMP: press and release the gamepad's up button ("check in").
const UP_KEY: &str =
    r#"{"execute":"send-key","arguments":{"keys":[{"type":"qcode","data":"up"}],"hold-time":200}}"#;
/// The panel's time in the check-in test: 2026-09-21 09:59:50 UTC when the clock is set.
const CHECK_IN_T0: u64 = 1_789_984_790;

/// Whether `list_rooms` over HTTP finds the atrium free on 2026-09-21 from `start` for 15 min.
fn atrium_free_at(p: &NetPanel, start: &str) -> bool {
    let r = result(&p.post(&call(
        "list_rooms",
        json!({"day": "2026-09-21", "start": start, "minutes": 15}),
    )));
    let rooms = r["structuredContent"]["rooms"]
        .as_array()
        .unwrap_or_else(|| panic!("rooms in {r}"))
        .clone();
    rooms
        .iter()
        .any(|x| x["id"] == "atrium" && x["free"] == json!(true))
}

/// Resets the panel and sets its clock, by its first SNTP answer after the reset, to unix
/// time `t` (the `n`th time the clock is set in this test).
fn reset_to(p: &mut NetPanel, sntp: &SntpResponder, t: u64, n: usize) {
    sntp.answer(t as i64 - host_now() as i64);
    p.reset();
    wait_for(p, "clock: set by SNTP to ", n);
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn a_booking_checked_in_at_the_door_stays_and_one_nobody_checked_in_to_is_released() {
    assert_eq!(day_hour(CHECK_IN_T0), ("2026-09-21".to_owned(), 9));
    let sntp = SntpResponder::start();
    let mut p = NetPanel::boot(&sntp_firmware());
    let set_at = std::time::Instant::now();
    sntp.answer(CHECK_IN_T0 as i64 - host_now() as i64);
    wait_for(&p, "clock: set by SNTP to ", 1);
    // Booked by an MCP client: 10:00-11:00 (bk_1).
    let r = result(&p.post(&call(
        "book_room",
        json!({"day": "2026-09-21", "hour": 10, "room_id": "atrium"}),
    )));
    assert_eq!(r["isError"], json!(false), "{r}");
    // At 10:00 the sign asks for its check-in; "up" checks it in, whoever booked it.
    std::thread::sleep(Duration::from_secs(10 + 2).saturating_sub(set_at.elapsed()));
    expect_screen(&p.panel, "check-in", SHOT_WAIT);
    p.panel.qmp(&[UP_KEY]);
    wait_for(&p, "door: bk_1 checked in", 1);
    expect_screen(&p.panel, "busy", SHOT_WAIT);
    p.panel.qmp(&[UP_KEY]);
    wait_for(&p, "door: bk_1 was already checked in", 1);
    // And 11:00-11:45 (bk_2), which nobody will check in to.
    let r = result(&p.post(&call(
        "book_room",
        json!({"day": "2026-09-21", "start": "11:00", "minutes": 45, "room_id": "atrium"}),
    )));
    assert_eq!(r["isError"], json!(false), "{r}");

    // 10:11 (the clock set anew after a reset; the store kept both): bk_1's window (10 min)
    // has passed and it stays, for MCP clients too.
    reset_to(&mut p, &sntp, CHECK_IN_T0 + 11 * 60 + 10, 2);
    assert!(!atrium_free_at(&p, "10:30"));
    // 11:11: nobody checked in to bk_2 by 11:10: released, and the atrium is free again.
    reset_to(&mut p, &sntp, CHECK_IN_T0 + 71 * 60 + 10, 3);
    wait_for(&p, "door: released bk_2: nobody checked in", 1);
    assert!(atrium_free_at(&p, "11:30"), "{}", p.panel.stderr());
    assert_eq!(p.panel.stderr().matches("door: released").count(), 1);
}
