//! PostgreSQL against the store suite (`store/suite.rs`, on a throwaway cluster), then alone
//! under racing callers on several "instances", and opening a database of the release before
//! spans.

use std::collections::HashMap;

use redmark_core::booking::{
    occupant, Actor, Booking, Commit, Day, NewBooking, RoomId, Span, Store, StoreError, Title,
};
use redmark_tests::pg::Cluster;

use super::PgStore;
use crate::store::redb::{RedbBookings, RedbStore};
use crate::store::suite::{created, new, runtime, slot, suite};
use crate::store::Bookings as _;

const NO_PG: &str = "PostgreSQL is not installed (scripts/test-all.sh installs postgresql)";

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
        .block_on(occupant(&mut again, "atrium", slot(9)))
        .unwrap()
        .is_some());
    assert_eq!(pg.psql("SELECT count(*) FROM redmark_bookings"), "29");
    // Every booking made has its trail, in the same transaction.
    assert_eq!(
        pg.psql("SELECT count(DISTINCT booking_id) FROM redmark_trail"),
        "29"
    );
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
    use super::op::{Op, Reply};
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    let rt = runtime();
    let store = rt.block_on(PgStore::open(&pg.url())).expect(NO_PG);
    let mut ops: Vec<Op> = (0..120u8)
        .map(|i| {
            let n = new(["atrium", "nook"][usize::from(i % 2)], i % 12, i % 5, i);
            Op::Commit(n.clone(), Actor::holder(n.holder))
        })
        .collect();
    let by = |n: NewBooking| Op::Commit(n.clone(), Actor::holder(n.holder));
    ops.push(by(new("atrium", 0, 0, 0))); // the first operation again
    ops.push(by(new("nook", 23, 0, 0))); // ... elsewhere: still that booking
    ops.push(Op::Cancel(u32::MAX, Actor::holder([0; 8]))); // no such booking
    let said: Vec<String> = ops.iter().map(|op| format!("{op:?}")).collect();
    let want_ops: Vec<Op> = ops.iter().map(Op::clone).collect();
    let got = rt.block_on(store.calls(ops)).unwrap();
    // The reference: one at a time on a fresh redb store.
    let dir = redmark_tests::server::TempDir::new("group-ref");
    let mut alone = RedbBookings::new(RedbStore::open_checked(dir.path(), false).unwrap());
    // Ids differ between stores (PostgreSQL numbers a batch in (room, start) order): compare the rest.
    let strip_commit = |c: &Result<Commit, StoreError>| match c {
        Ok(Commit::Created(b)) => format!("created {:?}", b.new),
        Ok(Commit::Replayed(b)) => format!("replayed {:?}", b.new),
        Ok(Commit::Taken(b)) => format!("taken {:?}", b.new),
        other => format!("{other:?}"),
    };
    for (i, (op, g)) in want_ops.into_iter().zip(&got).enumerate() {
        let (want, got) = match op {
            Op::Commit(n, _) => {
                let got = match g {
                    Ok(Reply::Commit(c)) => Ok(c.clone()),
                    Ok(_) => Err(StoreError::Io),
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
                            span: Span::hour(
                                Day {
                                    year: 2200 + c,
                                    month: 1 + (day / 28 % 12) as u8,
                                    day: 1 + (day % 28) as u8,
                                },
                                hour,
                            ),
                            title: Title::new(),
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

/// The property on PostgreSQL: 8 callers on three instances book random intervals (and
/// cancel some) at once; the database lets no two active bookings of a room overlap, and
/// every acknowledged booking is stored as acknowledged.
#[test]
fn random_intervals_on_three_instances_never_overlap() {
    const CALLERS: u64 = 8;
    const TRIES: u64 = 60;
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    let rt = runtime();
    let url = pg.url();
    let (a, b, c) = rt.block_on(async {
        tokio::join!(
            PgStore::open(&url),
            PgStore::open(&url),
            PgStore::open(&url)
        )
    });
    let stores = [a.unwrap(), b.unwrap(), c.unwrap()];
    let callers: Vec<_> = (0..CALLERS)
        .map(|c| {
            let mut s = stores[c as usize % 3].handle();
            rt.spawn(async move {
                let mut next = crate::store::suite::draws(c);
                let mut acked: Vec<Booking> = Vec::new();
                for i in 0..TRIES {
                    let start = slot(0).start + next(24 * 60 / 5) as u32 * 5;
                    let new = NewBooking {
                        room: RoomId::try_from(["atrium", "nook"][next(2) as usize]).unwrap(),
                        span: Span::new(start, start + 5 + next(24) as u32 * 5).unwrap(),
                        title: Title::try_from("random").unwrap(),
                        attendees: 1,
                        holder: [c as u8; 8],
                        nonce: i.to_le_bytes(),
                    };
                    match s.commit(&new).await.unwrap() {
                        Commit::Created(b) => acked.push(b),
                        Commit::Taken(b) => assert!(b.new.span.overlaps(&new.span), "{b:?}"),
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
        })
        .collect();
    let acked: Vec<Booking> = rt.block_on(async {
        let mut all = Vec::new();
        for h in callers {
            all.extend(h.await.unwrap());
        }
        all
    });
    let mut reader = stores[0].handle();
    for b in &acked {
        assert_eq!(rt.block_on(reader.get(b.id)), Ok(Some(b.clone())));
    }
    // Checked by the database too, over every row: no two active ones of a room overlap.
    let overlapping = pg.psql(
        "SELECT count(*) FROM redmark_bookings a JOIN redmark_bookings b \
         ON a.room = b.room AND a.id < b.id AND NOT a.cancelled AND NOT b.cancelled \
         AND int4range(a.start_minute, a.end_minute) && int4range(b.start_minute, b.end_minute)",
    );
    assert_eq!(overlapping, "0");
    let stored: usize = pg
        .psql("SELECT count(*) FROM redmark_bookings")
        .parse()
        .unwrap();
    assert_eq!(stored, acked.len(), "only acknowledged bookings are stored");
    assert!(acked.len() > 20, "{} bookings", acked.len());
}

/// Check-in racing the release on three instances: 48 bookings under way, their window over;
/// three releasers (one an instance) call `release_due` until nothing is due while callers
/// check in to every other booking. Each booking is released at most once, none that was
/// checked in is released, and every one ends either checked in or released.
#[test]
fn three_instances_release_each_no_show_once_and_no_checked_in_one() {
    use redmark_core::booking::Status;
    use std::collections::HashSet;
    const BOOKINGS: u8 = 48;
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    let rt = runtime();
    let url = pg.url();
    let (a, b, c) = rt.block_on(async {
        tokio::join!(
            PgStore::open(&url),
            PgStore::open(&url),
            PgStore::open(&url)
        )
    });
    let stores = [a.unwrap(), b.unwrap(), c.unwrap()];
    let mut maker = stores[0].handle();
    let made: Vec<Booking> = (0..BOOKINGS)
        .map(|i| created(rt.block_on(maker.commit(&new(&format!("room-{i}"), 9, i, i)))))
        .collect();
    let now = slot(9).start + 10;
    let releasers: Vec<_> = (0..3)
        .map(|i| {
            let mut s = stores[i].handle();
            rt.spawn(async move {
                let mut released = Vec::new();
                while let Some(b) = s.release_due(now, 10, &Actor::floor(0, 1)).await.unwrap() {
                    released.push(b);
                }
                released
            })
        })
        .collect();
    let checkers: Vec<_> = (0..3)
        .map(|i| {
            let mut s = stores[i].handle();
            let mine: Vec<Booking> = made.iter().skip(i).step_by(6).cloned().collect();
            rt.spawn(async move {
                let mut checked = Vec::new();
                for b in mine {
                    let now = s
                        .check_in(b.id, &Actor::holder(b.new.holder))
                        .await
                        .unwrap()
                        .unwrap();
                    if now.checked_in {
                        checked.push(now.id);
                    }
                }
                checked
            })
        })
        .collect();
    let (released, checked) = rt.block_on(async {
        let (mut released, mut checked) = (Vec::new(), HashSet::new());
        for h in releasers {
            released.extend(h.await.unwrap());
        }
        for h in checkers {
            checked.extend(h.await.unwrap());
        }
        (released, checked)
    });
    let once: HashSet<u32> = released.iter().map(|b| b.id).collect();
    assert_eq!(once.len(), released.len(), "a booking released twice");
    for b in &released {
        assert_eq!((b.status, b.checked_in), (Status::Released, false));
        assert!(
            !checked.contains(&b.id),
            "bk_{} released after its check-in",
            b.id
        );
    }
    let mut reader = stores[1].handle();
    for b in &made {
        let now = rt.block_on(reader.get(b.id)).unwrap().unwrap();
        match (now.status, now.checked_in) {
            (Status::Active, true) => assert!(checked.contains(&b.id)),
            (Status::Released, false) => assert!(once.contains(&b.id)),
            other => panic!("bk_{} ended as {other:?}", b.id),
        }
    }
    assert_eq!(once.len() + checked.len(), usize::from(BOOKINGS));
    assert!(checked.len() < usize::from(BOOKINGS) / 2 + 1);
    assert_eq!(
        pg.psql("SELECT count(*) FROM redmark_bookings WHERE released"),
        once.len().to_string()
    );
}

/// A series whose occurrence another instance takes after the series' clash check (its row
/// inserted, not yet committed) comes back taken, with nothing of it stored: the exclusion
/// constraint's conflict is an answer, not a failed batch.
#[test]
fn a_series_raced_by_another_instance_is_taken_whole() {
    use redmark_core::booking::{Occurrence, SeriesCommit};
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    let rt = runtime();
    let mut s = rt.block_on(PgStore::open(&pg.url())).expect(NO_PG);
    let week = |k: u32| {
        let start = Day::parse("2099-06-04").unwrap().first_minute() + 7 * 1440 * k + 540;
        Span::new(start, start + 60).unwrap()
    };
    let occ: Vec<Occurrence> = (0..4)
        .map(|k| Occurrence {
            span: week(k),
            elsewhere: false,
        })
        .collect();
    // The other instance: its booking of the second week inserted and held uncommitted.
    let (start, end) = (week(1).start, week(1).end);
    let hold = format!(
        "BEGIN; INSERT INTO redmark_bookings (room, start_minute, end_minute, title, attendees, \
         holder, nonce) VALUES ('hall', {start}, {end}, '', 1, '\\x0909090909090909', \
         '\\x0909090909090909'); SELECT pg_sleep(3); COMMIT;"
    );
    let mut other = std::process::Command::new(pg.bin().join("psql"))
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", &hold])
        .arg(pg.url())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("run psql");
    let sleeping = "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'";
    for _ in 0..200 {
        if pg.psql(sleeping) == "1" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    assert_eq!(pg.psql(sleeping), "1", "the other instance holds its row");
    let base = NewBooking {
        span: week(0),
        ..new("hall", 9, 4, 77)
    };
    let by = Actor::holder(base.holder);
    let got = rt.block_on(s.commit_series(&base, "", &occ, &by));
    assert_eq!(got, Ok(SeriesCommit::Taken(0b10)));
    assert!(other.wait().unwrap().success());
    let mine = "SELECT count(*) FROM redmark_bookings WHERE holder = '\\x0404040404040404'";
    assert_eq!(pg.psql(mine), "0", "none of the series stays");
    assert_eq!(pg.psql("SELECT count(*) FROM redmark_bookings"), "1");
    // Asked again, the clash is seen by the check itself.
    let got = rt.block_on(s.commit_series(&base, "", &occ, &by));
    assert_eq!(got, Ok(SeriesCommit::Taken(0b10)));
}
