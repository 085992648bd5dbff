//! Every write tells the store's change hub what it changed, in redb and in PostgreSQL.
//!
//! In PostgreSQL through `NOTIFY` and the instance's own `LISTEN`, and to a second instance too.

use std::time::Duration;

use redmark_core::booking::{Actor, NewBooking, Occurrence, SeriesCommit, Span};
use tokio::sync::broadcast::Receiver;

use super::changes::Change;
use super::suite::{at, created, new, runtime, slot, span};
use super::Bookings;
use crate::store::redb::{RedbBookings, RedbStore};

/// Long enough for a change to be told (a commit, a NOTIFY): a bound, not a goal.
const TOLD_WITHIN: Duration = Duration::from_secs(10);

/// The next change each of `hear` was told, which must be `want`.
async fn heard(hear: &mut [Receiver<Change>], room: &str, span: Span) {
    for rx in hear.iter_mut() {
        let got = tokio::time::timeout(TOLD_WITHIN, rx.recv()).await;
        let got = got
            .expect("a change told in time")
            .expect("the hub is open");
        assert_eq!(got, Change::room(room, span));
    }
}

fn minutes(from: u32, to: u32) -> Span {
    Span::new(at(from), at(to)).unwrap()
}

/// Each kind of write, and what every follower in `hear` is told (a write that changes nothing
/// tells nothing: the next change heard is the next write's).
async fn told<S: Bookings>(s: &mut S, hear: &mut [Receiver<Change>]) {
    let (me, floor) = (Actor::holder([5; 8]), Actor::floor(1_800_000_000, 9));
    let a = created(s.commit(&new("atrium", 9, 5, 1)).await);
    heard(hear, "atrium", slot(9)).await;
    s.commit(&new("atrium", 9, 5, 1)).await.unwrap(); // replayed: nothing
    s.cancel(a.id, &me).await.unwrap();
    heard(hear, "atrium", slot(9)).await;
    // Extended from 10:00 to 10:30: the span before and after.
    let lobby = created(s.commit(&span("lobby", 540, 600, 2)).await);
    heard(hear, "lobby", minutes(540, 600)).await;
    s.set_end(lobby.id, &me, at(600), at(630)).await.unwrap();
    heard(hear, "lobby", minutes(540, 630)).await;
    // Ended early at 09:30: the span it had.
    s.set_end(lobby.id, &me, at(630), at(570)).await.unwrap();
    heard(hear, "lobby", minutes(540, 630)).await;
    s.check_in(lobby.id, &me).await.unwrap();
    heard(hear, "lobby", minutes(540, 570)).await;
    // Released by the timer: not checked in 10 minutes after its start.
    let nook = created(s.commit(&span("nook", 600, 700, 3)).await);
    heard(hear, "nook", minutes(600, 700)).await;
    let released = s.release_due(at(650), 10, &floor).await.unwrap();
    assert_eq!(released.map(|b| b.id), Some(nook.id));
    heard(hear, "nook", minutes(600, 700)).await;
    // A series: each occurrence in its room; cancelled: each again.
    let day = |k: u32| minutes(k * 1440 + 780, k * 1440 + 840);
    let base = NewBooking {
        span: day(1),
        ..span("hall", 0, 60, 4)
    };
    let occ = [1, 2].map(|k| Occurrence {
        span: day(k),
        elsewhere: k == 2,
    });
    let Ok(SeriesCommit::Created(id, _)) = s.commit_series(&base, "annex", &occ, &me).await else {
        panic!("the series is booked");
    };
    heard(hear, "hall", day(1)).await;
    heard(hear, "annex", day(2)).await;
    s.cancel_series(id, at(0), &me).await.unwrap();
    heard(hear, "hall", day(1)).await;
    heard(hear, "annex", day(2)).await;
}

#[test]
fn redb_tells_every_write() {
    let dir = redmark_tests::server::TempDir::new("changes-redb");
    let mut s = RedbBookings::new(RedbStore::open_checked(dir.path(), false).unwrap());
    let mut hear = [s.changes().expect("redb tells changes").follow()];
    runtime().block_on(told(&mut s, &mut hear));
}

#[test]
fn postgres_tells_every_write_to_every_instance() {
    let Some(pg) = redmark_tests::pg::Cluster::start_or_skip() else {
        return;
    };
    let rt = runtime();
    let mut one = rt.block_on(super::pg::PgStore::open(&pg.url())).unwrap();
    let other = rt.block_on(super::pg::PgStore::open(&pg.url())).unwrap();
    let mut hear = [&one, &other].map(|s| s.changes().expect("PostgreSQL tells changes").follow());
    rt.block_on(told(&mut one, &mut hear));
}
