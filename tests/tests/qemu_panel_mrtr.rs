//! The door-panel firmware under QEMU, on every board: the multi-round-trip requests' edges
//! on the UART. A declined or cancelled form books nothing, `cancel_booking` asks to confirm,
//! and a `requestState` tampered with, expired or from before a reset is refused cleanly.
//!
//! Needs `qemu-system-arm` and the `thumbv7m-none-eabi` and `thumbv6m-none-eabi` targets;
//! fails (does not skip) without them. Every wait is bounded; every QEMU started is killed by
//! its `Panel`.

use std::thread;
use std::time::Duration;

use redmark_tests::qemu::rpc::{
    accept, assert_bad_state, big_room, boot_with_test_time, call, form_caps, rpc, state_of,
};
use redmark_tests::qemu::{firmware, Board, Build, Panel, LM3S6965EVB, MICROBIT};
use serde_json::json;

/// Every test below, for one board.
macro_rules! panel_tests {
    ($board:expr) => {
        const BOARD: Board = $board;

        /// A panel booted and told the test time, as its host would.
        fn boot() -> Panel {
            boot_with_test_time(BOARD)
        }

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn decline_and_cancel_book_nothing() {
    let mut p = boot();
    let mut id = 1;
    for (action, reason) in [("decline", "declined"), ("cancel", "cancelled")] {
        let state = state_of(&rpc(
            &mut p,
            id,
            &call(id, "book_room", big_room(10), form_caps(), None, None),
        ));
        id += 1;
        let answer = json!({"room": {"action": action}});
        let r = rpc(
            &mut p,
            id,
            &call(
                id,
                "book_room",
                big_room(10),
                form_caps(),
                Some(answer),
                Some(&state),
            ),
        );
        id += 1;
        assert_eq!(r["result"]["resultType"], "complete", "{r}");
        assert_eq!(
            r["result"]["structuredContent"],
            json!({"booked": false, "reason": reason}),
            "{r}"
        );
    }
    // Nothing was booked: the exact room is still free.
    let r = rpc(
        &mut p,
        id,
        &call(
            id,
            "book_room",
            json!({"day": "2026-09-17", "hour": 10, "room_id": "atrium"}),
            json!({}),
            None,
            None,
        ),
    );
    assert_eq!(r["result"]["isError"], false, "{r}");
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn cancel_booking_asks_to_confirm_then_cancels() {
    let mut p = boot();
    let r = rpc(
        &mut p,
        1,
        &call(
            1,
            "book_room",
            json!({"day": "2026-09-18", "hour": 14, "room_id": "nook"}),
            json!({}),
            None,
            None,
        ),
    );
    let bk = r["result"]["structuredContent"]["booking"]["id"]
        .as_str()
        .expect("booking id")
        .to_owned();
    let r = rpc(
        &mut p,
        2,
        &call(
            2,
            "cancel_booking",
            json!({"booking_id": bk}),
            form_caps(),
            None,
            None,
        ),
    );
    assert!(
        r["result"]["inputRequests"]["confirm"]["params"]["message"]
            .as_str()
            .unwrap()
            .contains(&bk),
        "{r}"
    );
    let state = state_of(&r);
    let yes = accept("confirm", json!({"confirm": true}));
    let r = rpc(
        &mut p,
        3,
        &call(
            3,
            "cancel_booking",
            json!({"booking_id": bk}),
            form_caps(),
            Some(yes),
            Some(&state),
        ),
    );
    assert_eq!(
        r["result"]["structuredContent"]["booking"]["status"], "cancelled",
        "{r}"
    );
    // The hour is free again.
    let r = rpc(
        &mut p,
        4,
        &call(
            4,
            "book_room",
            json!({"day": "2026-09-18", "hour": 14, "room_id": "nook"}),
            json!({}),
            None,
            None,
        ),
    );
    assert_eq!(r["result"]["isError"], false, "{r}");
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn a_tampered_state_is_rejected_and_the_panel_goes_on() {
    let mut p = boot();
    let state = state_of(&rpc(
        &mut p,
        1,
        &call(1, "book_room", big_room(11), form_caps(), None, None),
    ));
    let mut chars: Vec<char> = state.chars().collect();
    let mid = chars.len() / 2;
    chars[mid] = if chars[mid] == 'A' { 'B' } else { 'A' };
    let tampered: String = chars.into_iter().collect();
    let answer = || Some(accept("room", json!({"room_id": "atrium"})));
    assert_bad_state(&rpc(
        &mut p,
        2,
        &call(
            2,
            "book_room",
            big_room(11),
            form_caps(),
            answer(),
            Some(&tampered),
        ),
    ));
    // The untouched state still works.
    let r = rpc(
        &mut p,
        3,
        &call(
            3,
            "book_room",
            big_room(11),
            form_caps(),
            answer(),
            Some(&state),
        ),
    );
    assert_eq!(
        r["result"]["structuredContent"]["booking"]["room_id"], "atrium",
        "{r}"
    );
    assert!(
        p.finish().contains("requestState rejected"),
        "the reason goes to semihosting, not the wire"
    );
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn an_expired_state_is_rejected() {
    // An image whose states live 2 s (REDMARK_PANEL_STATE_TTL=2): the SysTick clock expires them.
    let mut p = Panel::boot_on(
        BOARD,
        &firmware(Build {
            board: BOARD,
            state_ttl_s: Some(2),
            net: false,
        }),
    );
    p.set_time();
    let answer = || Some(accept("room", json!({"room_id": "studio-b"})));
    // Control: answered at once, the state holds.
    let fresh = state_of(&rpc(
        &mut p,
        1,
        &call(1, "book_room", big_room(12), form_caps(), None, None),
    ));
    let r = rpc(
        &mut p,
        2,
        &call(
            2,
            "book_room",
            big_room(12),
            form_caps(),
            answer(),
            Some(&fresh),
        ),
    );
    assert_eq!(r["result"]["resultType"], "complete", "{r}");

    let old = state_of(&rpc(
        &mut p,
        3,
        &call(3, "book_room", big_room(13), form_caps(), None, None),
    ));
    // Past the lifetime by more than a clock tick (the panel counts whole seconds).
    thread::sleep(Duration::from_millis(4500));
    assert_bad_state(&rpc(
        &mut p,
        4,
        &call(
            4,
            "book_room",
            big_room(13),
            form_caps(),
            answer(),
            Some(&old),
        ),
    ));
    let err = p.finish();
    assert!(
        err.contains("requestState rejected: expired"),
        "rejected as expired: {err}"
    );
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn a_state_from_before_a_reset_fails_cleanly() {
    let mut p = boot();
    let before = p
        .epoch()
        .unwrap_or_else(|| panic!("boot epoch reported: {}", p.stderr()));
    let state = state_of(&rpc(
        &mut p,
        1,
        &call(1, "book_room", big_room(15), form_caps(), None, None),
    ));
    // Reset: the panel counts the boot in its flash, so the epoch moved on without the
    // host's help; the same key, the same request, the same principal.
    p.reset();
    // A reset forgets the time: the host tells it again.
    p.set_time();
    assert_eq!(p.epoch(), Some(before + 1), "{}", p.stderr());
    let answer = || Some(accept("room", json!({"room_id": "atrium"})));
    assert_bad_state(&rpc(
        &mut p,
        2,
        &call(
            2,
            "book_room",
            big_room(15),
            form_caps(),
            answer(),
            Some(&state),
        ),
    ));
    // The panel goes on serving; a form asked after the reset is good.
    let fresh = state_of(&rpc(
        &mut p,
        3,
        &call(3, "book_room", big_room(15), form_caps(), None, None),
    ));
    let r = rpc(
        &mut p,
        4,
        &call(
            4,
            "book_room",
            big_room(15),
            form_caps(),
            answer(),
            Some(&fresh),
        ),
    );
    assert_eq!(
        r["result"]["structuredContent"]["booking"]["room_id"], "atrium",
        "{r}"
    );
    assert!(p.finish().contains("requestState rejected: bad tag"));
}
    };
}

mod lm3s6965evb {
    use super::*;
    panel_tests!(LM3S6965EVB);
}

mod microbit {
    use super::*;
    panel_tests!(MICROBIT);
}
