//! The redb store's own tests: records, commits, replays, reopening, a store in use.

use super::open::MARKER_FILE;
use super::tables::{decode, decode_quiet, encode};
use super::*;
use redmark_core::booking::{Booking, Commit, Day, NewBooking, RoomId, Slot, Status, Store};

/// A fresh folder for test `name` of this process.
pub(super) fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("redmark-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `f` run to its end on a runtime of its own (a write waits for the committing thread).
pub(super) fn now<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

fn new(room: &str, hour: u8, nonce: u8) -> NewBooking {
    NewBooking {
        room: RoomId::try_from(room).unwrap(),
        slot: Slot {
            day: Day {
                year: 2026,
                month: 12,
                day: 3,
            },
            hour,
        },
        attendees: 3,
        holder: [7; 8],
        nonce: [nonce; 8],
    }
}

/// A record with an impossible day or hour does not decode (it counts as damaged).
#[test]
fn records_with_impossible_days_or_hours_do_not_decode() {
    let good = Booking {
        id: 1,
        new: new("atrium", 23, 1),
        status: Status::Active,
    };
    let r = encode(&good);
    assert_eq!(decode_quiet(1, &r), Some(good));
    for (at, v) in [(4, 0), (4, 13), (5, 0), (5, 32), (6, 24), (6, 255)] {
        let mut bad = r.clone();
        bad[at] = v;
        assert_eq!(decode_quiet(1, &bad), None, "byte {at} = {v}");
    }
    // 2026-02-29 and 2026-04-31 do not exist; neither does year 1999 (outside 2000-2999).
    for (month, day) in [(2, 29), (4, 31)] {
        let mut bad = r.clone();
        bad[4] = month;
        bad[5] = day;
        assert_eq!(decode_quiet(1, &bad), None, "{month}-{day}");
    }
    let mut bad = r.clone();
    bad[2..4].copy_from_slice(&1999u16.to_le_bytes());
    assert_eq!(decode_quiet(1, &bad), None, "1999");
    assert!(decode(1, &bad).is_err());
}

#[test]
fn commits_replays_takes_cancels_and_survives_reopen() {
    let dir = std::env::temp_dir().join(format!("redmark-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    {
        let mut s = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
        let Commit::Created(a) = now(s.commit(&new("atrium", 9, 1))).unwrap() else {
            panic!()
        };
        assert_eq!(a.id, 1);
        assert_eq!(
            now(s.commit(&new("atrium", 9, 1))).unwrap(),
            Commit::Replayed(a.clone())
        );
        assert_eq!(
            now(s.commit(&new("atrium", 9, 2))).unwrap(),
            Commit::Taken(a.clone())
        );
        let Commit::Created(b) = now(s.commit(&new("nook", 9, 3))).unwrap() else {
            panic!()
        };
        assert_eq!(b.id, 2);
        let second = RedbStore::open_checked(&dir, false).err().unwrap();
        assert!(second.0.contains("in use"), "{second}");
        assert_eq!(now(s.cancel(1, &[0xee; 8])).unwrap(), None, "not theirs");
        assert_eq!(now(s.get(1)).unwrap().unwrap().status, Status::Active);
        let c = now(s.cancel(1, &a.new.holder)).unwrap().unwrap();
        assert_eq!(c.status, Status::Cancelled);
        assert_eq!(now(s.occupant("atrium", a.new.slot)).unwrap(), None);
        assert_eq!(now(s.cancel(99, &a.new.holder)).unwrap(), None);
    }
    let mut s = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
    assert_eq!(now(s.get(1)).unwrap().unwrap().status, Status::Cancelled);
    assert_eq!(
        now(s.occupant("nook", new("nook", 9, 3).slot))
            .unwrap()
            .unwrap()
            .id,
        2
    );
    let Commit::Created(d) = now(s.commit(&new("atrium", 9, 4))).unwrap() else {
        panic!()
    };
    assert_eq!(d.id, 3, "ids are never reused");
    assert_eq!(s.store().all().unwrap().len(), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A store held by one server is in use for another; a marker naming another store
/// refuses it at start.
#[test]
fn a_held_store_is_in_use_and_a_foreign_one_is_refused() {
    let dir = std::env::temp_dir().join(format!("redmark-held-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let s = RedbStore::open_checked(&dir, false).unwrap();
    let e = RedbStore::open_checked(&dir, false).err().unwrap();
    assert!(e.0.contains("in use"), "{e}");
    drop(s);
    drop(RedbStore::open_checked(&dir, false).unwrap());
    std::fs::write(
        dir.join(MARKER_FILE),
        format!("{}\n", hex::encode([9u8; 16])),
    )
    .unwrap();
    let e = RedbStore::open_checked(&dir, false).err().unwrap();
    assert!(
        e.0.contains("belongs to another data folder"),
        "at start: {e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
