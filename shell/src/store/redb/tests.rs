//! The redb store's own tests: records, commits, replays, reopening, a store in use.

use super::open::MARKER_FILE;
use super::tables::{decode, decode_quiet, encode};
use super::*;
use redmark_core::booking::{
    occupant, Actor, Booking, Commit, Day, NewBooking, RoomId, Span, Status, Store, Title,
};

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

const DAY: Day = Day {
    year: 2026,
    month: 12,
    day: 3,
};

fn new(room: &str, hour: u8, nonce: u8) -> NewBooking {
    NewBooking {
        room: RoomId::try_from(room).unwrap(),
        span: Span::hour(DAY, hour),
        title: Title::new(),
        attendees: 3,
        holder: [7; 8],
        nonce: [nonce; 8],
    }
}

/// A record as redmark wrote it before spans (v1): version 1, status, year u16 LE, month,
/// day, hour, attendees u16 LE, holder, nonce, room length, room.
pub(super) fn v1_record(
    status: u8,
    day: Day,
    hour: u8,
    room: &str,
    holder: u8,
    nonce: u8,
) -> Vec<u8> {
    let mut r = vec![1, status];
    r.extend_from_slice(&day.year.to_le_bytes());
    r.extend_from_slice(&[day.month, day.day, hour]);
    r.extend_from_slice(&3u16.to_le_bytes());
    r.extend_from_slice(&[holder; 8]);
    r.extend_from_slice(&[nonce; 8]);
    r.push(room.len() as u8);
    r.extend_from_slice(room.as_bytes());
    r
}

/// A v1 record reads as its whole hour with no title; one with an impossible day or hour does
/// not decode (it counts as damaged).
#[test]
fn v1_records_read_as_their_hour_and_impossible_ones_do_not_decode() {
    let good = Booking {
        id: 1,
        new: new("atrium", 23, 1),
        status: Status::Active,
        checked_in: false,
        series: None,
    };
    let r = v1_record(0, DAY, 23, "atrium", 7, 1);
    assert_eq!(decode_quiet(1, &r), Some(good));
    for (at, v) in [(4, 0), (4, 13), (5, 0), (5, 32), (6, 24), (6, 255), (1, 2)] {
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
    assert_eq!(decode_quiet(1, &r[..r.len() - 1]), None, "cut short");
}

/// A v2 record keeps its span and title; an impossible span, a cut or padded record, or a
/// title that is not UTF-8 does not decode.
#[test]
fn v2_records_keep_span_and_title_and_damaged_ones_do_not_decode() {
    let m = DAY.first_minute() + 9 * 60 + 30;
    let b = Booking {
        id: 7,
        new: NewBooking {
            span: Span::new(m, m + 45).unwrap(),
            title: Title::try_from("Design review ✓").unwrap(),
            ..new("atrium", 9, 1)
        },
        status: Status::Cancelled,
        checked_in: false,
        series: None,
    };
    let r = encode(&b);
    assert_eq!(r[0], 2);
    assert_eq!(decode_quiet(7, &r), Some(b.clone()));
    let untitled = Booking {
        new: NewBooking {
            title: Title::new(),
            ..b.new.clone()
        },
        ..b.clone()
    };
    assert_eq!(decode_quiet(7, &encode(&untitled)), Some(untitled));
    let word = |r: &mut Vec<u8>, at: usize, v: u32| r[at..at + 4].copy_from_slice(&v.to_le_bytes());
    for (start, end) in [(m, m), (m + 1, m), (0, 60), (m, u32::MAX)] {
        let mut bad = r.clone();
        word(&mut bad, 2, start);
        word(&mut bad, 6, end);
        assert_eq!(decode_quiet(7, &bad), None, "{start}..{end}");
    }
    assert_eq!(decode_quiet(7, &r[..r.len() - 1]), None, "cut short");
    let mut padded = r.clone();
    padded.push(0);
    assert_eq!(decode_quiet(7, &padded), None, "padded");
    let mut bad = r.clone();
    let last = bad.len() - 1;
    bad[last] = 0xff;
    assert_eq!(decode_quiet(7, &bad), None, "not UTF-8");
    assert_eq!(decode_quiet(7, &[3, 0]), None, "an unknown version");
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
        assert_eq!(
            now(s.cancel(1, &Actor::holder([0xee; 8]))).unwrap(),
            None,
            "not theirs"
        );
        assert_eq!(now(s.get(1)).unwrap().unwrap().status, Status::Active);
        let c = now(s.cancel(1, &Actor::holder(a.new.holder)))
            .unwrap()
            .unwrap();
        assert_eq!(c.status, Status::Cancelled);
        assert_eq!(now(occupant(&mut s, "atrium", a.new.span)).unwrap(), None);
        assert_eq!(
            now(s.cancel(99, &Actor::holder(a.new.holder))).unwrap(),
            None
        );
    }
    let mut s = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
    assert_eq!(now(s.get(1)).unwrap().unwrap().status, Status::Cancelled);
    assert_eq!(
        now(occupant(&mut s, "nook", new("nook", 9, 3).span))
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

/// The property on redb with group commit: 8 clients book random intervals (and cancel
/// some) at once; no two active bookings of a room overlap, and every acknowledged booking is
/// there, as acknowledged, after the store is closed and opened again.
#[test]
fn random_intervals_from_8_clients_never_overlap_and_survive_reopen() {
    const CLIENTS: u64 = 8;
    const TRIES: u64 = 150;
    let dir = scratch_dir("random-intervals");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .build()
        .unwrap();
    let store = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
    let clients = (0..CLIENTS).map(|c| {
        let mut s = crate::store::Bookings::handle(&store);
        rt.spawn(async move {
            let mut next = crate::store::suite::draws(c);
            let mut acked: Vec<Booking> = Vec::new();
            for i in 0..TRIES {
                let start = DAY.first_minute() + next(48 * 60 / 5) as u32 * 5;
                let new = NewBooking {
                    room: RoomId::try_from(["atrium", "nook", "hall"][next(3) as usize]).unwrap(),
                    span: Span::new(start, start + 5 + next(36) as u32 * 5).unwrap(),
                    title: Title::new(),
                    attendees: 1,
                    holder: [c as u8; 8],
                    nonce: i.to_le_bytes(),
                };
                match s.commit(&new).await.unwrap() {
                    Commit::Created(b) => acked.push(b),
                    Commit::Taken(b) => assert!(b.new.span.overlaps(&new.span)),
                    Commit::Replayed(b) => panic!("a fresh nonce replayed {b:?}"),
                }
                if next(5) == 0 {
                    let pick = next(acked.len().max(1) as u64) as usize;
                    if let Some(b) = acked.get_mut(pick) {
                        *b = s
                            .cancel(b.id, &Actor::holder(b.new.holder))
                            .await
                            .unwrap()
                            .unwrap();
                    }
                }
            }
            acked
        })
    });
    let handles: Vec<_> = clients.collect();
    let acked: Vec<Booking> = rt.block_on(async {
        let mut all = Vec::new();
        for h in handles {
            all.extend(h.await.unwrap());
        }
        all
    });
    let groups = store.committer.groups();
    drop(store);
    let store = RedbStore::open_checked(&dir, false).unwrap();
    let stored = store.all().unwrap();
    for b in &acked {
        assert_eq!(
            stored.get(b.id as usize - 1),
            Some(b),
            "acknowledged bk_{}",
            b.id
        );
    }
    let active: Vec<&Booking> = stored
        .iter()
        .filter(|b| b.status == Status::Active)
        .collect();
    for (i, a) in active.iter().enumerate() {
        for b in &active[i + 1..] {
            assert!(
                a.new.room != b.new.room || !a.new.span.overlaps(&b.new.span),
                "bk_{} and bk_{} overlap",
                a.id,
                b.id
            );
        }
    }
    let made = stored.len() as u64;
    assert!(made > 50 && active.len() < stored.len(), "{made} bookings");
    assert!(
        groups < CLIENTS * TRIES,
        "{groups} commits: writes were grouped"
    );
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An occurrence of a series is a v4 record (a v3 one and the series' id after the title);
/// a single booking stays v2, and a v4 record cut or padded does not decode.
#[test]
fn an_occurrence_of_a_series_is_a_v4_record_with_its_series() {
    let b = Booking {
        id: 9,
        new: NewBooking {
            title: Title::try_from("Weekly sync").unwrap(),
            ..new("atrium", 9, 1)
        },
        status: Status::Active,
        checked_in: true,
        series: Some(7),
    };
    let r = encode(&b);
    assert_eq!(r[0], 4);
    assert_eq!(decode_quiet(9, &r), Some(b.clone()));
    assert_eq!(decode_quiet(9, &r[..r.len() - 1]), None, "cut short");
    let mut padded = r.clone();
    padded.push(0);
    assert_eq!(decode_quiet(9, &padded), None, "padded");
    let single = Booking {
        series: None,
        checked_in: false,
        ..b
    };
    assert_eq!(encode(&single)[0], 2);
}
