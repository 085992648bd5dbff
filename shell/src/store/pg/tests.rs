//! One store suite, two implementations: [`suite`] runs against redb ([`RedbStore`]) and
//! against PostgreSQL ([`PgStore`], on a throwaway cluster); then PostgreSQL alone under
//! racing callers on two "instances".

use std::collections::HashMap;

use redmark_core::booking::{
    Booking, Commit, Day, NewBooking, RoomId, Slot, Status, Store, StoreError,
};
use redmark_tests::pg::Cluster;

use super::PgStore;
use crate::store::redb::{RedbBookings, RedbStore};
use crate::store::Bookings as _;

const NO_PG: &str = "PostgreSQL is not installed (scripts/test-all.sh installs postgresql)";

fn slot(hour: u8) -> Slot {
    Slot {
        day: Day {
            year: 2026,
            month: 12,
            day: 3,
        },
        hour,
    }
}

fn new(room: &str, hour: u8, holder: u8, nonce: u8) -> NewBooking {
    NewBooking {
        room: RoomId::try_from(room).unwrap(),
        slot: slot(hour),
        attendees: 3,
        holder: [holder; 8],
        nonce: [nonce; 8],
    }
}

fn created(c: Result<Commit, StoreError>) -> Booking {
    match c {
        Ok(Commit::Created(b)) => b,
        other => panic!("expected a new booking, got {other:?}"),
    }
}

/// What every store must do, from empty.
async fn suite(s: &mut impl Store) {
    let a = created(s.commit(&new("atrium", 9, 7, 1)).await);
    assert_eq!(a.status, Status::Active);
    assert_eq!(a.new, new("atrium", 9, 7, 1));
    // The same operation again: the same booking.
    assert_eq!(
        s.commit(&new("atrium", 9, 7, 1)).await,
        Ok(Commit::Replayed(a.clone()))
    );
    // A replay wins over "taken" even with other details.
    assert_eq!(
        s.commit(&new("nook", 10, 7, 1)).await,
        Ok(Commit::Replayed(a.clone()))
    );
    // Another operation (or another holder with the same nonce) on the slot: taken.
    assert_eq!(
        s.commit(&new("atrium", 9, 7, 2)).await,
        Ok(Commit::Taken(a.clone()))
    );
    assert_eq!(
        s.commit(&new("atrium", 9, 8, 1)).await,
        Ok(Commit::Taken(a.clone()))
    );
    let b = created(s.commit(&new("nook", 9, 7, 3)).await);
    assert_ne!(a.id, b.id);
    assert_eq!(s.get(a.id).await, Ok(Some(a.clone())));
    assert_eq!(s.get(b.id.wrapping_add(1000)).await, Ok(None));
    assert_eq!(s.made_by(&[7; 8], &[1; 8]).await, Ok(Some(a.clone())));
    assert_eq!(s.made_by(&[8; 8], &[1; 8]).await, Ok(None));
    assert_eq!(s.occupant("atrium", slot(9)).await, Ok(Some(a.clone())));
    assert_eq!(s.occupant("atrium", slot(10)).await, Ok(None));
    assert_eq!(
        s.occupant("a-room-id-far-longer-than-any-stored-one", slot(9))
            .await,
        Ok(None)
    );
    // Cancel: idempotent, frees the slot, keeps the operation's booking.
    let cancelled = Booking {
        status: Status::Cancelled,
        ..a.clone()
    };
    // Only by its holder: anyone else's cancel finds nothing and changes nothing.
    assert_eq!(s.cancel(a.id, &[8; 8]).await, Ok(None));
    assert_eq!(s.get(a.id).await, Ok(Some(a.clone())));
    assert_eq!(s.cancel(a.id, &[7; 8]).await, Ok(Some(cancelled.clone())));
    assert_eq!(s.cancel(a.id, &[7; 8]).await, Ok(Some(cancelled.clone())));
    assert_eq!(s.cancel(b.id.wrapping_add(1000), &[7; 8]).await, Ok(None));
    assert_eq!(s.occupant("atrium", slot(9)).await, Ok(None));
    assert_eq!(
        s.commit(&new("atrium", 9, 7, 1)).await,
        Ok(Commit::Replayed(cancelled.clone()))
    );
    let d = created(s.commit(&new("atrium", 9, 7, 4)).await);
    assert!(d.id != a.id && d.id != b.id, "ids are never reused");
    assert_eq!(s.occupant("atrium", slot(9)).await, Ok(Some(d.clone())));
    assert_eq!(s.get(a.id).await, Ok(Some(cancelled)));
    // A holder's active bookings walk in (slot, room id) order, room ids byte by byte
    // whatever the database's collation ("Zeta" before "atrium"); others' are skipped.
    let z = created(s.commit(&new("Zeta", 9, 7, 5)).await);
    let theirs = created(s.commit(&new("alpha", 9, 8, 6)).await);
    let late = created(s.commit(&new("alpha", 11, 7, 7)).await);
    assert_eq!(walk(s, [7; 8]).await, [z.id, d.id, b.id, late.id]);
    assert_eq!(walk(s, [8; 8]).await, [theirs.id]);
    assert!(walk(s, [9; 8]).await.is_empty());
    assert_eq!(s.next_held(&[7; 8], slot(9), "atrium").await, Ok(Some(b)));
    assert_eq!(s.next_held(&[7; 8], slot(11), "alpha").await, Ok(None));
    // A room's day walks in hour order, everyone's active bookings of that day only.
    let day_after = Slot {
        day: Day {
            day: 4,
            ..slot(0).day
        },
        hour: 0,
    };
    let tomorrow = NewBooking {
        slot: day_after,
        ..new("alpha", 0, 7, 8)
    };
    let next_day = created(s.commit(&tomorrow).await);
    assert_eq!(
        s.next_in_room("alpha", slot(0)).await,
        Ok(Some(theirs.clone()))
    );
    assert_eq!(s.next_in_room("alpha", slot(9)).await, Ok(Some(theirs)));
    assert_eq!(
        s.next_in_room("alpha", slot(10)).await,
        Ok(Some(late.clone()))
    );
    assert_eq!(
        s.next_in_room("alpha", slot(12)).await,
        Ok(None),
        "not the next day's"
    );
    assert_eq!(s.next_in_room("alpha", day_after).await, Ok(Some(next_day)));
    assert_eq!(
        s.next_in_room("atrium", slot(0)).await,
        Ok(Some(d)),
        "not the cancelled one"
    );
    assert_eq!(s.next_in_room("Zeta", slot(10)).await, Ok(None));
    assert_eq!(
        s.next_in_room("no-such-room-with-a-very-long-id", slot(0))
            .await,
        Ok(None)
    );
}

/// The ids of `holder`'s active bookings, walked with `next_held` from the start.
async fn walk(s: &mut impl Store, holder: [u8; 8]) -> Vec<u32> {
    let mut at = (slot(0), RoomId::new());
    let mut ids = Vec::new();
    while let Some(b) = s.next_held(&holder, at.0, &at.1).await.unwrap() {
        assert!(ids.len() < 100, "the walk does not end");
        ids.push(b.id);
        at = (b.new.slot, b.new.room);
    }
    ids
}

#[test]
fn the_core_reference_store_passes_the_store_suite() {
    runtime().block_on(suite(&mut redmark_core::booking::MemStore::<16>::new()));
}

#[test]
fn redb_passes_the_store_suite() {
    let dir = redmark_tests::server::TempDir::new("suite-redb");
    let mut s = RedbBookings::new(RedbStore::open_checked(dir.path(), false).unwrap());
    runtime().block_on(suite(&mut s));
}

/// A runtime for the store's workers and the callers.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn postgres_passes_the_store_suite() {
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    let rt = runtime();
    let mut s = rt.block_on(PgStore::open(&pg.url())).expect(NO_PG);
    rt.block_on(suite(&mut s));
    // A second start on the same database (the schema step is idempotent) sees the bookings.
    let mut again = rt.block_on(PgStore::open(&pg.url())).unwrap();
    assert!(rt
        .block_on(again.occupant("atrium", slot(9)))
        .unwrap()
        .is_some());
    assert_eq!(pg.psql("SELECT count(*) FROM redmark_bookings"), "7");
}

#[test]
fn racing_callers_on_two_instances_get_one_winner_per_slot() {
    const SLOTS: u8 = 24;
    const THREADS: u8 = 12;
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    let rt = runtime();
    // Two instances starting at once: the schema step is serialised by the advisory lock.
    let url = pg.url();
    let (one, two) = rt.block_on(async { tokio::join!(PgStore::open(&url), PgStore::open(&url)) });
    let stores = [one.unwrap(), two.unwrap()];
    let callers = (0..THREADS).map(|t| {
        let mut s = stores[usize::from(t) % 2].handle();
        tokio::spawn(async move {
            let mut got = Vec::new();
            for h in 0..SLOTS {
                got.push((h, s.commit(&new("atrium", h, t, h)).await.unwrap()));
            }
            got
        })
    });
    let outcomes: Vec<(u8, Commit)> = rt.block_on(async {
        let mut all = Vec::new();
        for c in callers.collect::<Vec<_>>() {
            all.extend(c.await.unwrap());
        }
        all
    });
    let mut winners: HashMap<u8, Booking> = HashMap::new();
    for (h, c) in &outcomes {
        if let Commit::Created(b) = c {
            assert!(
                winners.insert(*h, b.clone()).is_none(),
                "two winners at {h}"
            );
        }
    }
    assert_eq!(winners.len(), usize::from(SLOTS));
    for (h, c) in &outcomes {
        match c {
            Commit::Created(_) => {}
            Commit::Taken(b) => assert_eq!(Some(b), winners.get(h), "taken by the winner"),
            Commit::Replayed(b) => panic!("nothing was replayed, got {b:?}"),
        }
    }
    assert_eq!(
        pg.psql("SELECT count(*) FROM redmark_bookings"),
        SLOTS.to_string()
    );
}

/// A group with clashes inside it, written in one go (one job, the batch's bookings in one
/// statement): every booking is decided as it would be alone in arrival order, the first for
/// a slot wins, a repeated operation is replayed, and the group's cancel comes after them.
#[test]
fn a_group_with_clashes_is_decided_as_one_at_a_time() {
    use super::worker::{Op, Reply};
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    let rt = runtime();
    let store = rt.block_on(PgStore::open(&pg.url())).expect(NO_PG);
    let mut ops: Vec<Op> = (0..120u8)
        .map(|i| {
            Op::Commit(new(
                ["atrium", "nook"][usize::from(i % 2)],
                i % 12,
                i % 5,
                i,
            ))
        })
        .collect();
    ops.push(Op::Commit(new("atrium", 0, 0, 0))); // the first operation again
    ops.push(Op::Commit(new("nook", 23, 0, 0))); // ... elsewhere: still that booking
    ops.push(Op::Cancel(u32::MAX, [0; 8])); // no such booking
    let said: Vec<String> = ops.iter().map(|op| format!("{op:?}")).collect();
    let want_ops: Vec<Op> = ops.iter().map(Op::clone).collect();
    let got = rt.block_on(store.calls(ops)).unwrap();
    // The reference: one at a time on a fresh redb store.
    let dir = redmark_tests::server::TempDir::new("group-ref");
    let mut alone = RedbBookings::new(RedbStore::open_checked(dir.path(), false).unwrap());
    // Ids differ between stores (PostgreSQL numbers a batch in slot order): compare the rest.
    let strip_commit = |c: &Result<Commit, StoreError>| match c {
        Ok(Commit::Created(b)) => format!("created {:?}", b.new),
        Ok(Commit::Replayed(b)) => format!("replayed {:?}", b.new),
        Ok(Commit::Taken(b)) => format!("taken {:?}", b.new),
        other => format!("{other:?}"),
    };
    for (i, (op, g)) in want_ops.into_iter().zip(&got).enumerate() {
        let (want, got) = match op {
            Op::Commit(n) => {
                let got = match g {
                    Ok(Reply::Commit(c)) => Ok(c.clone()),
                    Ok(Reply::Booking(_)) => Err(StoreError::Io),
                    Err(e) => Err(*e),
                };
                (rt.block_on(alone.commit(&n)), got)
            }
            Op::Cancel(id, h) => {
                let got = match g {
                    Ok(Reply::Booking(b)) => format!("{b:?}"),
                    other => format!("not a booking: {}", other.is_ok()),
                };
                let want = format!("{:?}", rt.block_on(alone.cancel(id, &h)).unwrap());
                assert_eq!(got, want, "op {i}: {}", said[i]);
                continue;
            }
            _ => unreachable!("only writes"),
        };
        assert_eq!(
            strip_commit(&got),
            strip_commit(&want),
            "op {i}: {}",
            said[i]
        );
    }
    assert_eq!(pg.psql("SELECT count(*) FROM redmark_bookings"), "12");
}

/// Bookings per second through one [`PgStore`] from many callers at once. A benchmark, not a test:
/// `bench/pg-bench.sh` runs it against its cluster (`REDMARK_PG_BENCH_URL`).
#[test]
#[ignore = "a benchmark: bench/pg-bench.sh runs it"]
fn store_throughput() {
    let secs: u64 = std::env::var("REDMARK_PG_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let callers: u16 = std::env::var("REDMARK_PG_BENCH_CALLERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    let own = std::env::var("REDMARK_PG_BENCH_URL")
        .is_err()
        .then(Cluster::start);
    let url = std::env::var("REDMARK_PG_BENCH_URL")
        .unwrap_or_else(|_| own.as_ref().map(Cluster::url).unwrap_or_default());
    let rt = runtime();
    let store = rt.block_on(PgStore::open(&url)).expect(NO_PG);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let start = std::time::Instant::now();
    let made: u64 = rt.block_on(async {
        let handles: Vec<_> = (0..callers)
            .map(|c| {
                let mut s = store.handle();
                tokio::spawn(async move {
                    let mut n = 0u32;
                    while std::time::Instant::now() < until {
                        // Caller c books its own year (2200 + c), hour after hour.
                        let (day, hour) = (n / 24, (n % 24) as u8);
                        let b = NewBooking {
                            room: RoomId::try_from("bench").unwrap(),
                            slot: Slot {
                                day: Day {
                                    year: 2200 + c,
                                    month: 1 + (day / 28 % 12) as u8,
                                    day: 1 + (day % 28) as u8,
                                },
                                hour,
                            },
                            attendees: 1,
                            holder: u64::from(c).to_be_bytes(),
                            nonce: u64::from(n).to_be_bytes(),
                        };
                        created(s.commit(&b).await);
                        n += 1;
                    }
                    u64::from(n)
                })
            })
            .collect();
        let mut made = 0;
        for h in handles {
            made += h.await.unwrap();
        }
        made
    });
    let rate = made as f64 / start.elapsed().as_secs_f64();
    println!("pg store, {callers} callers: {rate:.0} bookings/s");
}
