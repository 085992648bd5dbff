//! What redmark reads of an event in a room's CalDAV collection (`event::read`: ours by UID,
//! or another's meeting to hold the room for, on the floor's clock) and the copy it writes back
//! marked cancelled when that meeting lost the room (`event::cancelled`). Anyone who may write
//! to the room's calendar chooses these bytes: never a panic.
//!
//! Input: one byte choosing the floor's zone (even: UTC, odd: Europe/Berlin, which has
//! daylight saving), then the event's text.
#![no_main]

use jiff::tz::TimeZone;
use libfuzzer_sys::fuzz_target;
use redmark::calendar::caldav::event;
use redmark::calendar::caldav::plan::Kind;

fuzz_target!(|data: &[u8]| {
    let Some((&zone, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let floor = match zone % 2 {
        0 => TimeZone::UTC,
        _ => TimeZone::get("Europe/Berlin").expect("bundled"),
    };
    if let Kind::Foreign(f) = event::read(text, "fz", &floor) {
        let _ = event::cancelled(text, f.sequence, "taken by bk_1");
    }
    let _ = event::cancelled(text, u32::from(zone), "taken by bk_1");
    let _ = event::our_id(text, "fz");
});
