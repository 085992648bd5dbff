//! The networked door panel's wall clock under QEMU: provisioned with an SNTP server (a
//! responder on the host side of QEMU's user network), it refuses to book until that server
//! answers, then refuses past hours by the host's time; an answer outside 2026-2099, one behind
//! its clock, or one far ahead does not move the clock back or far.
//!
//! Needs `qemu-system-arm` and the `thumbv7m-none-eabi` target (ignored without them, required
//! by scripts/test-all.sh). The SNTP responder's port is fixed (built into the image), so these
//! tests take turns. Every wait is bounded; every QEMU is killed by its `NetPanel`.

use std::time::Duration;

use redmark_core::booking::Slot;
use redmark_tests::qemu::face::{host_now, sntp_firmware, SntpResponder};
use redmark_tests::qemu::net::{HttpAnswer, NetPanel};
use redmark_tests::server::meta;
use serde_json::{json, Value};

/// Longest wait for the panel to take an SNTP answer: two of its requests while it has no
/// time, or one while its clock is set (16 s), with room for a slow machine.
const SNTP_WAIT: Duration = Duration::from_secs(40);

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

/// Books the atrium for the hour that contains unix time `t`; the tool result.
fn book_at(p: &NetPanel, t: u64) -> Value {
    let slot = Slot::containing(t).expect("a slot in 2000-2999");
    result(&p.post(&call(
        "book_room",
        json!({"day": slot.day.to_string(), "hour": slot.hour, "room_id": "atrium"}),
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
