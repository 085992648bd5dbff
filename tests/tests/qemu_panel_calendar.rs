//! A room's real calendar on the micro:bit under QEMU: four weeks of a busy room (256
//! titled bookings, `redmark_flash_store::MAX_BOOKINGS`) booked over the UART, kept through a
//! reset of the board, and read back one by one with their titles; one more is refused as the
//! store full, before the reset and after.
//!
//! Persistence is shown by a reset (QMP `system_reset`, the reset button): QEMU's nRF51 flash
//! is not backed by a file (QEMU 7.2's microbit machine refuses `-drive if=pflash`, `mtd` and
//! `sd` alike), so a restart of
//! QEMU starts blank, while a reset keeps what the NVMC wrote (QEMU reloads only the image's
//! own bytes, and the store's pages are outside the image).
//!
//! The requests go in batches: every line of a batch in one write, the replies read in order
//! (the panel serves one line at a time; QEMU's UART takes bytes as the firmware reads them).
//!
//! Needs `qemu-system-arm` and the `thumbv6m-none-eabi` target; fails (does not skip) without
//! them. Every wait is bounded; the QEMU started is killed by its `Panel`.

use std::time::Instant;

use redmark_tests::qemu::rpc::{boot_with_test_time, call, form_caps, parse};
use redmark_tests::qemu::{Panel, MICROBIT};
use serde_json::{json, Value};

/// Bookings the micro:bit's store holds (boards/flash-store `MAX_BOOKINGS`).
const HOLDS: usize = 256;

/// The `i`th booking's day: nine a day in October 2026 (after the test time).
fn day(i: usize) -> String {
    format!("2026-10-{:02}", 1 + i / 9)
}

/// The `i`th booking's title.
fn title(i: usize) -> String {
    format!("Week {} review {i:03}", i / 45)
}

/// `book_room` for the `i`th booking: the nook, an hour from 08:00 on, titled.
fn book(id: i64, i: usize) -> String {
    let args = json!({"day": day(i), "hour": 8 + i % 9, "room_id": "nook", "title": title(i)});
    call(id, "book_room", args, json!({}), None, None)
}

/// Sends `lines` in one write and returns their replies in order, ids from `first` checked.
fn batch(p: &mut Panel, first: i64, lines: &[String]) -> Vec<Value> {
    let mut all = String::new();
    for l in lines {
        all.push_str(l);
        all.push('\n');
    }
    p.send_raw(all.as_bytes());
    (0..lines.len())
        .map(|k| {
            let r = parse(&p.recv());
            assert_eq!(
                r["id"],
                json!(first + k as i64),
                "reply {k} out of order: {r}"
            );
            r
        })
        .collect()
}

/// Asks for one more booking and checks the panel says its store is full.
fn one_more_is_refused(p: &mut Panel, id: i64) {
    let args = json!({"day": "2026-11-02", "hour": 9, "room_id": "nook", "title": "One too many"});
    let r = batch(p, id, &[call(id, "book_room", args, json!({}), None, None)]).remove(0);
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("store is full"), "{r}");
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn microbit_keeps_256_titled_bookings_through_a_reset() {
    let mut p = boot_with_test_time(MICROBIT);
    let started = Instant::now();
    let lines: Vec<String> = (0..HOLDS).map(|i| book(1 + i as i64, i)).collect();
    let booked = batch(&mut p, 1, &lines);
    let mut ids = Vec::new();
    for (i, r) in booked.iter().enumerate() {
        let b = &r["result"]["structuredContent"]["booking"];
        assert_eq!(b["title"], title(i), "booking {i}: {r}");
        ids.push(b["id"].as_str().expect("booking id").to_owned());
    }
    eprintln!("{HOLDS} bookings in {:?}", started.elapsed());
    one_more_is_refused(&mut p, 1000);

    p.reset();
    p.set_time();
    let started = Instant::now();
    // Each booking read back by id, title and all: cancel_booking asks to confirm, naming it
    // (the form is never answered, so nothing is cancelled).
    let asks: Vec<String> = ids
        .iter()
        .enumerate()
        .map(|(k, id)| {
            call(
                2000 + k as i64,
                "cancel_booking",
                json!({"booking_id": id}),
                form_caps(),
                None,
                None,
            )
        })
        .collect();
    for (i, r) in batch(&mut p, 2000, &asks).iter().enumerate() {
        assert_eq!(
            r["result"]["resultType"], "input_required",
            "booking {i}: {r}"
        );
        let asked = r.to_string();
        assert!(
            asked.contains(&title(i)) && asked.contains(&ids[i]),
            "booking {i}: {r}"
        );
    }
    // Each hour still taken, wherever its record is on flash.
    let again: Vec<String> = (0..HOLDS).map(|i| book(3000 + i as i64, i)).collect();
    for (i, r) in batch(&mut p, 3000, &again).iter().enumerate() {
        assert_eq!(
            r["result"]["structuredContent"]["reason"], "taken",
            "booking {i}: {r}"
        );
    }
    eprintln!("read back and rebooked in {:?}", started.elapsed());
    one_more_is_refused(&mut p, 4000);
    let err = p.finish();
    assert_eq!(err.matches("redmark-panel: up: ").count(), 2, "{err}");
}
