//! A door panel built for its building's zone (`--features zone`, `REDMARK_PANEL_ZONE=
//! Europe/Berlin`), under QEMU with its wall clock set by SNTP: its answers read and show times
//! on Berlin's clock (with the offset of the day), a time the clocks skip in spring is refused
//! saying why, one they repeat in autumn is asked about, "book now" books Berlin's hour under
//! way, and its screen shows Berlin's time and offset (golden PNG, retaken by
//! scripts/panel-screenshots.sh).
//!
//! Needs `qemu-system-arm` and the `thumbv7m-none-eabi` target (ignored without them, required
//! by scripts/test-all.sh). Every wait is bounded; every QEMU is killed by its `NetPanel`.

use std::time::Duration;

use redmark_tests::qemu::face::{expect_screen, host_now, SntpResponder, SNTP_SERVER};
use redmark_tests::qemu::firmware_with_sntp_in_zone;
use redmark_tests::qemu::net::{HttpAnswer, NetPanel};
use redmark_tests::server::meta;
use serde_json::{json, Value};

/// Longest wait for the panel to take an SNTP answer (see qemu_face.rs).
const SNTP_WAIT: Duration = Duration::from_secs(40);
/// Longest wait for the screen to show what it should.
const SHOT_WAIT: Duration = Duration::from_secs(10);
/// 2026-09-21 10:20 UTC: 12:20 in Berlin (summer time, +02:00).
const T0: u64 = 1_789_986_000;
/// QMP: press and release the gamepad's select button ("book now").
const SELECT_KEY: &str = r#"{"execute":"send-key","arguments":{"keys":[{"type":"qcode","data":"ctrl"}],"hold-time":200}}"#;

fn call(name: &str, args: Value, caps: Value) -> Value {
    let params = json!({"name": name, "arguments": args, "_meta": meta(caps)});
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
}

fn answer(a: &HttpAnswer) -> Value {
    assert_eq!(a.status, 200, "{a:?}");
    serde_json::from_str(&a.body).unwrap_or_else(|e| panic!("not JSON ({e}): {a:?}"))
}

fn text(r: &Value) -> String {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Waits until the panel's stderr holds `needle`.
fn wait_for(p: &NetPanel, needle: &str) {
    let said = p.panel.wait_stderr(needle, SNTP_WAIT);
    assert!(
        said,
        "no {needle:?} within {SNTP_WAIT:?}:\n{}",
        p.panel.stderr()
    );
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn a_panel_built_for_berlin_reads_shows_and_books_berlin_time() {
    let sntp = SntpResponder::start();
    let p = NetPanel::boot(&firmware_with_sntp_in_zone(SNTP_SERVER, "Europe/Berlin"));
    sntp.answer(T0 as i64 - host_now() as i64);
    wait_for(&p, "clock: set by SNTP to ");

    // 13:00 on Berlin's clock is 11:00 UTC; the answer says so, with the zone and offset.
    let r = answer(&p.post(&call(
        "book_room",
        json!({"day": "2026-09-21", "start": "13:00", "room_id": "atrium"}),
        json!({}),
    )));
    assert!(text(&r).contains("13:00–14:00 (Europe/Berlin)"), "{r}");
    assert_eq!(
        r["result"]["structuredContent"]["booking"]["start"], "2026-09-21T13:00:00+02:00",
        "{r}"
    );
    // The screen: free until 13:00, the clock on Berlin's time with its offset.
    expect_screen(&p.panel, "berlin-free-until", SHOT_WAIT);

    // Spring: 02:30 on 2027-03-28 does not exist in Berlin.
    let r = answer(&p.post(&call(
        "book_room",
        json!({"day": "2027-03-28", "start": "02:30", "room_id": "atrium"}),
        json!({}),
    )));
    assert_eq!(r["result"]["isError"], json!(true), "{r}");
    assert!(
        text(&r).contains("02:30 does not exist on 2027-03-28"),
        "{r}"
    );

    // Autumn: 02:30 on 2026-10-25 comes twice; a client with forms is asked which.
    let r = answer(&p.post(&call(
        "book_room",
        json!({"day": "2026-10-25", "start": "02:30", "minutes": 30, "room_id": "atrium"}),
        json!({"elicitation": {"form": {}}}),
    )));
    let message = r["result"]["inputRequests"]["time"]["params"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("02:30 comes twice on 2026-10-25"), "{r}");

    // "Book now" at the door: Berlin's hour under way (12:00-13:00, 10:00 UTC on); the room is
    // then busy until 14:00, back to back with the booking above.
    p.panel.qmp(&[SELECT_KEY]);
    wait_for(&p, "door: booked now, bk_2, hour 12");
    let r = answer(&p.post(&call(
        "book_room",
        json!({"day": "2026-09-21", "start": "12:30", "minutes": 15, "room_id": "atrium"}),
        json!({}),
    )));
    assert!(text(&r).contains("already booked"), "{r}");
    expect_screen(&p.panel, "berlin-busy", SHOT_WAIT);
}
