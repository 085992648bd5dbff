//! PostgreSQL racing itself: a write whose time another transaction commits meanwhile, and
//! an operation sent again while the first is in flight, are answered, never a failed batch;
//! a read is answered while every writer waits.

use redmark_core::booking::{Actor, Commit, Day, NewBooking, Span, Store};
use redmark_tests::pg::Cluster;

use super::PgStore;
use crate::store::suite::{new, runtime};
use crate::store::Bookings as _;

const NO_PG: &str = "PostgreSQL is not installed (scripts/test-all.sh installs postgresql)";

/// Returns once `n` sessions wait for a lock, as `watcher` sees them (a session of its own,
/// outside a transaction, whose view of `pg_stat_activity` would stay as first read).
async fn until_waiting(watcher: &tokio_postgres::Client, n: i64) {
    let waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'";
    while watcher
        .query_one(waiting, &[])
        .await
        .unwrap()
        .get::<_, i64>(0)
        < n
    {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// An end moved into a booking another session commits meanwhile: the exclusion constraint
/// fails the batch, which runs again and answers `Taken`, not a store failure.
#[test]
fn an_end_moved_into_a_booking_committed_meanwhile_is_taken() {
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    let rt = runtime();
    rt.block_on(async {
        let mut s = PgStore::open(&pg.url()).await.expect(NO_PG);
        let mine = new("atrium", 9, 1, 1);
        let Commit::Created(b) = s.commit(&mine).await.unwrap() else {
            panic!("the booking is made");
        };
        let (end, later) = (b.new.span.end, b.new.span.end + 30);
        // Another session books the half hour after it, not yet committed.
        let config: tokio_postgres::Config = pg.url().parse().unwrap();
        let other = super::sql::connect(&config).await.unwrap();
        other.batch_execute("BEGIN").await.unwrap();
        let (from, to) = (end as i32, later as i32);
        other
            .execute(
                "INSERT INTO redmark_bookings (room, start_minute, end_minute, title, attendees, \
                 holder, nonce) VALUES ('atrium', $1, $2, '', 1, $3, $3)",
                &[&from, &to, &vec![9u8; 8]],
            )
            .await
            .unwrap();
        let watcher = super::sql::connect(&config).await.unwrap();
        let by = Actor::holder(mine.holder);
        let mut h = s.handle();
        let moved = tokio::spawn(async move { h.set_end(b.id, &by, end, later).await });
        // The update waits for the other session's row, then that commits.
        until_waiting(&watcher, 1).await;
        other.batch_execute("COMMIT").await.unwrap();
        let got = moved.await.unwrap();
        assert!(
            matches!(got, Ok(Some(redmark_core::booking::Resized::Taken(ref o))) if o.new.span.start == end),
            "{got:?}"
        );
    });
}

/// The same series sent twice at once (a client's retry while the first is in flight, on
/// another worker or in the same batch): one books it, the other replays it, never "taken".
#[test]
fn a_series_and_its_retry_at_once_book_it_once() {
    use redmark_core::booking::{Occurrence, SeriesCommit};
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    let rt = runtime();
    let s = rt.block_on(PgStore::open(&pg.url())).expect(NO_PG);
    for round in 0..20u8 {
        let start = Day::parse("2099-06-04").unwrap().first_minute() + 1440 * u32::from(round);
        let occ: Vec<Occurrence> = (0..3)
            .map(|k| Occurrence {
                span: Span::new(start + 60 * k, start + 60 * k + 30).unwrap(),
                elsewhere: false,
            })
            .collect();
        let base = NewBooking {
            span: occ[0].span,
            ..new("hall", 9, 4, 100 + round)
        };
        let by = Actor::holder(base.holder);
        let (mut a, mut b) = (s.handle(), s.handle());
        let (x, y) = rt.block_on(async {
            tokio::join!(
                a.commit_series(&base, "", &occ, &by),
                b.commit_series(&base, "", &occ, &by)
            )
        });
        let ids = |c: &SeriesCommit| match c {
            SeriesCommit::Created(id, ids) | SeriesCommit::Replayed(id, ids) => (*id, ids.clone()),
            other => panic!("round {round}: {other:?}"),
        };
        let (x, y) = (x.unwrap(), y.unwrap());
        assert_eq!(ids(&x), ids(&y), "round {round}: {x:?} {y:?}");
    }
}

/// A read is answered while every worker waits on a row lock inside its transaction: reads
/// have connections of their own ([`super::READERS`]) and run without a transaction.
#[test]
fn a_read_is_answered_while_every_writer_waits() {
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    let rt = runtime();
    rt.block_on(async {
        let mut s = PgStore::open(&pg.url()).await.expect(NO_PG);
        let booking = new("atrium", 9, 1, 1);
        let Commit::Created(first) = s.commit(&booking).await.unwrap() else {
            panic!("the first booking is made");
        };
        // Another session holds the booking's row, which every cancel of it waits for.
        let config: tokio_postgres::Config = pg.url().parse().unwrap();
        let blocker = super::sql::connect(&config).await.unwrap();
        let id = i64::from(first.id);
        blocker.batch_execute("BEGIN").await.unwrap();
        blocker
            .execute(
                "SELECT id FROM redmark_bookings WHERE id = $1 FOR UPDATE",
                &[&id],
            )
            .await
            .unwrap();
        let watcher = super::sql::connect(&config).await.unwrap();
        // One cancel at a time, each sent once the one before waits: every worker takes one.
        let mut writes = Vec::new();
        for k in 0..super::WORKERS {
            let mut h = s.handle();
            let by = Actor::holder(booking.holder);
            writes.push(tokio::spawn(async move { h.cancel(first.id, &by).await }));
            until_waiting(&watcher, k as i64 + 1).await;
        }
        let read = tokio::time::timeout(std::time::Duration::from_secs(3), s.get(first.id)).await;
        let read = read.expect("the read is answered while the writers wait");
        assert_eq!(read.unwrap().map(|b| b.id), Some(first.id));
        blocker.batch_execute("ROLLBACK").await.unwrap();
        for w in writes {
            assert!(w.await.unwrap().is_ok());
        }
    });
}
