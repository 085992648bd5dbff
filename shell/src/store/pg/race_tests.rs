//! PostgreSQL racing itself: a write whose time another transaction commits meanwhile, and
//! an operation sent again while the first is in flight, are answered, never a failed batch.

use redmark_core::booking::{Actor, Commit, Day, NewBooking, Span, Store};
use redmark_tests::pg::Cluster;

use super::PgStore;
use crate::store::suite::{new, runtime};
use crate::store::Bookings as _;

const NO_PG: &str = "PostgreSQL is not installed (scripts/test-all.sh installs postgresql)";

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
        loop {
            let row = watcher
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'",
                    &[],
                )
                .await
                .unwrap();
            if row.get::<_, i64>(0) > 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
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
