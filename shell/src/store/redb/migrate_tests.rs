//! Stores written by earlier releases (their own binaries: `fixtures/README.txt`) open with
//! every booking as it was, and refuse what overlaps them: the release before spans (whole
//! hours) and the release before the index tiers (`tiers.rs`).

use std::io::Read as _;

use redb::ReadableTableMetadata as _;

use redmark_core::booking::{Actor, Booking, Commit, Day, NewBooking, Span, Status, Store, Title};

use super::super::tables::OLD_HELD;
use crate::store::redb::tests::{now, scratch_dir};
use crate::store::redb::{RedbBookings, RedbStore, STORE_FILE};

/// The v1 fixture, unpacked into a fresh folder of its own (no `store-id`: the folder adopts it).
fn unpack(name: &str) -> std::path::PathBuf {
    unpack_gz(name, include_bytes!("fixtures/bookings-v1.redb.gz"))
}

/// A gzipped store, unpacked into a fresh folder `name`.
fn unpack_gz(name: &str, gz: &[u8]) -> std::path::PathBuf {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut bytes)
        .unwrap();
    let dir = scratch_dir(name);
    std::fs::write(dir.join(STORE_FILE), bytes).unwrap();
    dir
}

fn day(d: u8) -> Day {
    Day {
        year: 2099,
        month: 9,
        day: d,
    }
}

/// What the old binary booked (README.txt): id, room, day, hour, status.
const BOOKED: [(u32, &str, u8, u8, Status); 4] = [
    (1, "studio-b", 17, 9, Status::Active),
    (2, "atrium", 17, 10, Status::Active),
    (3, "nook", 17, 9, Status::Cancelled),
    (4, "atrium", 18, 23, Status::Active),
];

/// Every booking reads back as its whole hour, untitled, with its id, status and operation.
fn assert_as_booked(all: &[Booking]) {
    let seen: Vec<_> = all
        .iter()
        .map(|b| {
            (
                b.id,
                b.new.room.as_str(),
                b.new.span,
                b.new.title.as_str(),
                b.status,
            )
        })
        .collect();
    let want: Vec<_> = BOOKED
        .iter()
        .map(|&(id, room, d, h, status)| (id, room, Span::hour(day(d), h), "", status))
        .collect();
    assert_eq!(seen, want);
}

#[test]
fn a_store_of_the_release_before_spans_opens_with_every_booking_as_it_was() {
    let dir = unpack("migrate-v1");
    let mut s = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
    let all = s.store().all().unwrap();
    assert_as_booked(&all);
    let holder = all[0].new.holder;
    // A replayed operation still replays (cancelled or not): the nonces came through.
    for b in &all {
        assert_eq!(now(s.commit(&b.new)), Ok(Commit::Replayed(b.clone())));
    }
    // 09:30–10:15 in Studio B overlaps bk_1 (09:00–10:00); the cancelled Nook hour is free.
    let nine_thirty = day(17).first_minute() + 9 * 60 + 30;
    let overlapping = NewBooking {
        span: Span::new(nine_thirty, nine_thirty + 45).unwrap(),
        title: Title::try_from("Design review").unwrap(),
        nonce: [0xa1; 8],
        ..all[0].new.clone()
    };
    assert_eq!(
        now(s.commit(&overlapping)),
        Ok(Commit::Taken(all[0].clone()))
    );
    let in_atrium = NewBooking {
        room: all[1].new.room.clone(),
        nonce: [0xa2; 8],
        ..overlapping.clone()
    };
    assert_eq!(now(s.commit(&in_atrium)), Ok(Commit::Taken(all[1].clone())));
    let in_nook = NewBooking {
        room: all[2].new.room.clone(),
        nonce: [0xa3; 8],
        ..overlapping.clone()
    };
    let Ok(Commit::Created(made)) = now(s.commit(&in_nook)) else {
        panic!("the cancelled hour is free")
    };
    assert_eq!(made.id, 5, "ids go on from the old ones");
    // The holder's bookings walk in (start, room) order; a room's from the one under way.
    let mut walk = Vec::new();
    let mut at = (0, String::new());
    while let Some(b) = now(s.next_held(&holder, at.0, &at.1)).unwrap() {
        walk.push(b.id);
        at = (b.new.span.start, b.new.room.to_string());
    }
    assert_eq!(walk, [1, 5, 2, 4]);
    let late = now(s.next_in_room("atrium", day(18).first_minute() + 23 * 60 + 59));
    assert_eq!(late.unwrap().map(|b| b.id), Some(4));
    drop(s);
    // Converted once: the hour index is emptied (the tripwire, `migrate.rs`), and a second
    // start changes nothing.
    let s = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
    assert_eq!(s.store().all().unwrap().len(), 5);
    drop(s);
    let db = redb::Database::open(dir.join(STORE_FILE)).unwrap();
    let read = db.begin_read().unwrap();
    assert_eq!(read.open_table(OLD_HELD).unwrap().len().unwrap(), 0);
    drop((read, db));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A store an older redmark opened after the conversion (it makes an empty `held` again) has
/// its span indexes rebuilt from the records at the next start: nothing double-booked.
#[test]
fn an_hour_index_left_by_an_older_redmark_rebuilds_the_span_indexes() {
    let dir = unpack("migrate-again");
    let mut s = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
    let all = s.store().all().unwrap();
    // bk_1 cancelled now: the old `held` would be stale; the records decide.
    now(s.cancel(1, &Actor::holder(all[0].new.holder)))
        .unwrap()
        .unwrap();
    drop(s);
    let db = redb::Database::open(dir.join(STORE_FILE)).unwrap();
    let tx = db.begin_write().unwrap();
    {
        let mut held = tx.open_table(OLD_HELD).unwrap();
        held.insert(&b"stale"[..], 1).unwrap();
    }
    tx.commit().unwrap();
    drop(db);
    let mut s = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
    let again = NewBooking {
        nonce: [0xb1; 8],
        ..all[0].new.clone()
    };
    assert!(matches!(now(s.commit(&again)), Ok(Commit::Created(_))));
    let atrium = NewBooking {
        nonce: [0xb2; 8],
        ..all[1].new.clone()
    };
    assert_eq!(now(s.commit(&atrium)), Ok(Commit::Taken(all[1].clone())));
    drop(s);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What the release before the index tiers booked (README.txt): id, room, day, start, minutes,
/// title, status.
const BOOKED_V2: [(u32, &str, u8, u32, u32, &str, Status); 4] = [
    (
        1,
        "studio-b",
        17,
        9 * 60 + 30,
        45,
        "Design review",
        Status::Active,
    ),
    (2, "atrium", 17, 10 * 60, 90, "", Status::Active),
    (3, "nook", 17, 9 * 60, 60, "Standup", Status::Cancelled),
    (4, "atrium", 18, 23 * 60, 30, "", Status::Active),
];

/// A store of the release before the index tiers has its indexes rebuilt into their settled
/// tables: every booking, operation and clash as it was, and new bookings go on from it.
#[test]
fn a_store_of_the_release_before_index_tiers_opens_with_every_booking_as_it_was() {
    let dir = unpack_gz("migrate-v2", include_bytes!("fixtures/bookings-v2.redb.gz"));
    let mut s = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
    let all = s.store().all().unwrap();
    let seen: Vec<_> = all
        .iter()
        .map(|b| {
            (
                b.id,
                b.new.room.to_string(),
                b.new.span,
                b.new.title.to_string(),
                b.status,
            )
        })
        .collect();
    let want: Vec<_> = BOOKED_V2
        .iter()
        .map(|&(id, room, d, at, minutes, title, status)| {
            let start = day(d).first_minute() + at;
            let span = Span::new(start, start + minutes).unwrap();
            (id, room.to_string(), span, title.to_string(), status)
        })
        .collect();
    assert_eq!(seen, want);
    // Every operation replays its booking, cancelled or not.
    for b in &all {
        assert_eq!(now(s.commit(&b.new)), Ok(Commit::Replayed(b.clone())));
        assert_eq!(
            now(s.made_by(&b.new.holder, &b.new.nonce)),
            Ok(Some(b.clone()))
        );
    }
    // 10:00–10:30 in Studio B overlaps bk_1; in The Nook it is free (bk_3 is cancelled).
    let ten = day(17).first_minute() + 10 * 60;
    let overlapping = NewBooking {
        span: Span::new(ten, ten + 30).unwrap(),
        nonce: [0xc1; 8],
        ..all[0].new.clone()
    };
    assert_eq!(
        now(s.commit(&overlapping)),
        Ok(Commit::Taken(all[0].clone()))
    );
    let in_nook = NewBooking {
        room: all[2].new.room.clone(),
        nonce: [0xc2; 8],
        ..overlapping.clone()
    };
    let Ok(Commit::Created(made)) = now(s.commit(&in_nook)) else {
        panic!("the cancelled span is free")
    };
    assert_eq!(made.id, 5, "ids go on from the old ones");
    // The holder's bookings walk in (start, room) order across the old and the new tables.
    let holder = all[0].new.holder;
    let mut walk = Vec::new();
    let mut at = (0, String::new());
    while let Some(b) = now(s.next_held(&holder, at.0, &at.1)).unwrap() {
        walk.push(b.id);
        at = (b.new.span.start, b.new.room.to_string());
    }
    assert_eq!(walk, [1, 2, 5, 4]);
    // A cancel of a booking in the old tables frees its span.
    now(s.cancel(2, &Actor::holder(holder))).unwrap().unwrap();
    let atrium = NewBooking {
        room: all[1].new.room.clone(),
        nonce: [0xc3; 8],
        ..overlapping.clone()
    };
    assert!(matches!(now(s.commit(&atrium)), Ok(Commit::Created(_))));
    drop(s);
    let s = RedbStore::open_checked(&dir, false).unwrap();
    assert_eq!(s.all().unwrap().len(), 6);
    drop(s);
    // The file now has the tripwire the release before the tiers obeys (`migrate.rs`).
    let db = redb::Database::open(dir.join(STORE_FILE)).unwrap();
    let read = db.begin_read().unwrap();
    assert_eq!(read.open_table(OLD_HELD).unwrap().len().unwrap(), 0);
    drop((read, db));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Check-in and release on today's store (the v2 fixture): bk_1 checked in, bk_2 released
/// when its window passes, both rewritten as v3 records, read back so after a restart; the
/// other records stay as they were.
#[test]
fn bookings_of_todays_store_are_checked_in_and_released_and_read_back_after_a_restart() {
    let dir = unpack_gz("release-v2", include_bytes!("fixtures/bookings-v2.redb.gz"));
    let mut s = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
    let all = s.store().all().unwrap();
    let holder = all[0].new.holder;
    assert!(
        now(s.check_in(1, &Actor::holder(holder)))
            .unwrap()
            .unwrap()
            .checked_in
    );
    // 10:10: bk_1's window (09:30 + 10) and bk_2's (10:00 + 10) are over.
    let ten_past_ten = day(17).first_minute() + 10 * 60 + 10;
    let released = now(s.release_due(ten_past_ten, 10, &Actor::floor(0, 1)))
        .unwrap()
        .unwrap();
    assert_eq!((released.id, released.status), (2, Status::Released));
    assert_eq!(
        now(s.release_due(ten_past_ten, 10, &Actor::floor(0, 1))),
        Ok(None)
    );
    drop(s);
    let mut s = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
    let again = s.store().all().unwrap();
    assert_eq!(
        (again[0].status, again[0].checked_in),
        (Status::Active, true)
    );
    assert_eq!(
        (again[1].status, again[1].checked_in),
        (Status::Released, false)
    );
    assert_eq!(again[2..], all[2..]);
    let atrium = NewBooking {
        holder: [0xd1; 8],
        ..all[1].new.clone()
    };
    assert!(
        matches!(now(s.commit(&atrium)), Ok(Commit::Created(_))),
        "its time is free"
    );
    assert_eq!(
        now(s.next_held(&holder, all[0].new.span.start, "studio-b")),
        Ok(Some(again[1].clone()))
    );
    drop(s);
    std::fs::remove_dir_all(&dir).unwrap();
}
