//! One store suite, every implementation: [`suite`] runs against the core's reference store,
//! redb and PostgreSQL (`pg/tests.rs`), from empty.

use redmark_core::booking::{
    occupant, Actor, Booking, Change, Commit, Day, Minute, NewBooking, Occurrence, Resized, RoomId,
    SeriesCommit, Span, Status, Store,
};
use redmark_core::Via;

pub(crate) use super::suite_kit::{at, created, draws, new, runtime, slot, span, DAY};
use crate::store::redb::{RedbBookings, RedbStore};

/// What every store must do, from empty.
pub(crate) async fn suite(s: &mut impl Store) {
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
    assert_eq!(occupant(s, "atrium", slot(9)).await, Ok(Some(a.clone())));
    assert_eq!(occupant(s, "atrium", slot(10)).await, Ok(None));
    assert_eq!(
        occupant(s, "a-room-id-far-longer-than-any-stored-one", slot(9)).await,
        Ok(None)
    );
    // Cancel: idempotent, frees the slot, keeps the operation's booking.
    let cancelled = Booking {
        status: Status::Cancelled,
        ..a.clone()
    };
    // Only by its holder: anyone else's cancel finds nothing and changes nothing.
    assert_eq!(s.cancel(a.id, &Actor::holder([8; 8])).await, Ok(None));
    assert_eq!(s.get(a.id).await, Ok(Some(a.clone())));
    assert_eq!(
        s.cancel(a.id, &Actor::holder([7; 8])).await,
        Ok(Some(cancelled.clone()))
    );
    assert_eq!(
        s.cancel(a.id, &Actor::holder([7; 8])).await,
        Ok(Some(cancelled.clone()))
    );
    assert_eq!(
        s.cancel(b.id.wrapping_add(1000), &Actor::holder([7; 8]))
            .await,
        Ok(None)
    );
    assert_eq!(occupant(s, "atrium", slot(9)).await, Ok(None));
    assert_eq!(
        s.commit(&new("atrium", 9, 7, 1)).await,
        Ok(Commit::Replayed(cancelled.clone()))
    );
    let d = created(s.commit(&new("atrium", 9, 7, 4)).await);
    assert!(d.id != a.id && d.id != b.id, "ids are never reused");
    assert_eq!(occupant(s, "atrium", slot(9)).await, Ok(Some(d.clone())));
    assert_eq!(s.get(a.id).await, Ok(Some(cancelled)));
    // A holder's active bookings walk in (start, room id) order, room ids byte by byte
    // whatever the database's collation ("Zeta" before "atrium"); others' are skipped.
    let z = created(s.commit(&new("Zeta", 9, 7, 5)).await);
    let theirs = created(s.commit(&new("alpha", 9, 8, 6)).await);
    let late = created(s.commit(&new("alpha", 11, 7, 7)).await);
    assert_eq!(walk(s, [7; 8]).await, [z.id, d.id, b.id, late.id]);
    assert_eq!(walk(s, [8; 8]).await, [theirs.id]);
    assert!(walk(s, [9; 8]).await.is_empty());
    assert_eq!(
        s.next_held(&[7; 8], slot(9).start, "atrium").await,
        Ok(Some(b))
    );
    assert_eq!(
        s.next_held(&[7; 8], slot(11).start, "alpha").await,
        Ok(None)
    );
    // A room's bookings walk in start order from the one under way, everyone's active ones,
    // on to the days after.
    let tomorrow = NewBooking {
        span: Span::hour(Day { day: 4, ..DAY }, 0),
        ..new("alpha", 0, 7, 8)
    };
    let next_day = created(s.commit(&tomorrow).await);
    let from = |h: u8| slot(h).start;
    assert_eq!(
        s.next_in_room("alpha", from(0)).await,
        Ok(Some(theirs.clone()))
    );
    assert_eq!(
        s.next_in_room("alpha", from(9)).await,
        Ok(Some(theirs.clone()))
    );
    assert_eq!(
        s.next_in_room("alpha", from(9) + 59).await,
        Ok(Some(theirs.clone())),
        "under way"
    );
    assert_eq!(
        s.next_in_room("alpha", from(10)).await,
        Ok(Some(late.clone())),
        "ended at 10:00"
    );
    assert_eq!(
        s.next_in_room("alpha", from(12)).await,
        Ok(Some(next_day.clone())),
        "the next day's"
    );
    assert_eq!(
        s.next_in_room("alpha", tomorrow.span.start).await,
        Ok(Some(next_day))
    );
    assert_eq!(s.next_in_room("alpha", tomorrow.span.end).await, Ok(None));
    assert_eq!(
        s.next_in_room("atrium", from(0)).await,
        Ok(Some(d)),
        "not the cancelled one"
    );
    assert_eq!(s.next_in_room("Zeta", from(10)).await, Ok(None));
    assert_eq!(
        s.next_in_room("no-such-room-with-a-very-long-id", from(0))
            .await,
        Ok(None)
    );
    overlaps(s).await;
    ends(s).await;
    releases(s).await;
    series(s).await;
}

/// A series is booked whole or not at all: one occurrence taken books none (and says which);
/// that one moved to another room books all four under one series id; the same operation
/// again replays it; each occurrence cancels alone, and what is left of the series at once
/// (its holder or an operator); the series walks in id order, every status (rooms `hall`,
/// `annex`, two months after the suite's day, nonces from 200).
async fn series(s: &mut impl Store) {
    let week = |k: Minute| Span::new(at((60 + 7 * k) * 1440 + 540), at((60 + 7 * k) * 1440 + 600));
    let by = Actor::holder([5; 8]);
    let blocker = NewBooking {
        span: week(1).unwrap(),
        ..span("hall", 0, 60, 200)
    };
    created(s.commit(&blocker).await);
    let base = NewBooking {
        span: week(0).unwrap(),
        ..span("hall", 0, 60, 201)
    };
    let mut occ: Vec<Occurrence> = (0..4)
        .map(|k| Occurrence {
            span: week(k).unwrap(),
            elsewhere: false,
        })
        .collect();
    let taken = s.commit_series(&base, "annex", &occ, &by).await;
    assert_eq!(taken, Ok(SeriesCommit::Taken(0b10)));
    assert_eq!(
        occupant(s, "hall", week(0).unwrap()).await,
        Ok(None),
        "none booked"
    );
    assert_eq!(s.made_by(&base.holder, &base.nonce).await, Ok(None));

    occ[1].elsewhere = true;
    let Ok(SeriesCommit::Created(id, ids)) = s.commit_series(&base, "annex", &occ, &by).await
    else {
        panic!("the series is booked");
    };
    assert_eq!((ids.len(), ids[0]), (4, id));
    for (k, b) in ids.iter().enumerate() {
        let b = s.get(*b).await.unwrap().unwrap();
        let room = if k == 1 { "annex" } else { "hall" };
        assert_eq!((b.new.room.as_str(), b.series), (room, Some(id)));
        assert_eq!(b.new.span, week(k as Minute).unwrap());
        assert_eq!(b.status, Status::Active);
    }
    let replayed = s.commit_series(&base, "annex", &occ, &by).await;
    assert_eq!(replayed, Ok(SeriesCommit::Replayed(id, ids.clone())));
    assert_eq!(
        s.made_by(&base.holder, &base.nonce)
            .await
            .unwrap()
            .map(|b| b.id),
        Some(id)
    );

    let one = s.cancel(ids[2], &by).await.unwrap().unwrap();
    assert_eq!(one.status, Status::Cancelled);
    assert_eq!(s.get(ids[3]).await.unwrap().unwrap().status, Status::Active);

    // The rest of the series from the third week: the holder's, not anyone else's.
    let from = week(2).unwrap().start;
    let stranger = Actor::holder([6; 8]);
    assert_eq!(s.cancel_series(id, from, &stranger).await, Ok(None));
    assert_eq!(
        s.cancel_series(ids[1], from, &by).await,
        Ok(None),
        "not a series' id"
    );
    let rest = s.cancel_series(id, from, &by).await.unwrap().unwrap();
    assert_eq!(&rest[..], &ids[3..]);
    assert_eq!(s.get(ids[0]).await.unwrap().unwrap().status, Status::Active);
    let again = s.cancel_series(id, from, &by).await.unwrap().unwrap();
    assert!(again.is_empty(), "nothing left to cancel");
    let operator = Actor {
        operator: true,
        ..stranger
    };
    let all = s.cancel_series(id, 0, &operator).await.unwrap().unwrap();
    assert_eq!(&all[..], &ids[..2]);
    let trail = s.trail(ids[3]).await.unwrap();
    assert_eq!(trail.last().map(|t| t.change), Some(Change::Cancelled));

    // Walked in id order, every status (all cancelled now), and nothing past the series: not
    // the booking made next.
    let after = NewBooking {
        span: week(5).unwrap(),
        ..span("hall", 0, 60, 202)
    };
    let next = created(s.commit(&after).await);
    let mut walked = Vec::new();
    let mut at = id - 1;
    while let Some(b) = s.next_in_series(id, at).await.unwrap() {
        assert_eq!((b.series, b.status), (Some(id), Status::Cancelled));
        walked.push(b.id);
        at = b.id;
    }
    assert_eq!(&walked[..], &ids[..]);
    assert_eq!(s.get(next.id).await.unwrap().unwrap().series, None);
    let from_second = s.next_in_series(id, ids[1]).await.unwrap();
    assert_eq!(from_second.map(|b| b.id), Some(ids[2]));
    assert_eq!(s.next_in_series(ids[1], 0).await, Ok(None), "not a series");
    assert_eq!(s.next_in_series(next.id, 0).await, Ok(None), "no series");
}

/// Check-in keeps a booking; one nobody checked in to is released once its window passes
/// (once: asked again, nothing), frees its time and stays in its holder's walk; a check-in
/// after changes nothing; one already over is left (rooms `den`, `loft`, a month after the
/// suite's day, nonces from 140).
async fn releases(s: &mut impl Store) {
    let (day, me) = (30 * 1440, [5; 8]);
    let (by, them) = (Actor::holder(me), Actor::holder([6; 8]));
    let floor = Actor::floor(1_800_000_000, 9);
    let over = created(s.commit(&span("den", day + 300, day + 360, 140)).await);
    let kept = created(s.commit(&span("den", day + 540, day + 600, 141)).await);
    let gone = created(s.commit(&span("loft", day + 540, day + 600, 142)).await);
    assert_eq!(s.check_in(kept.id, &them).await, Ok(None), "not theirs");
    let checked = Booking {
        checked_in: true,
        ..kept.clone()
    };
    for again in ["checked in", "again"] {
        assert_eq!(
            s.check_in(kept.id, &by).await,
            Ok(Some(checked.clone())),
            "{again}"
        );
    }
    assert_eq!(
        s.release_due(at(day + 549), 10, &floor).await,
        Ok(None),
        "inside the window"
    );
    let released = Booking {
        status: Status::Released,
        ..gone.clone()
    };
    assert_eq!(
        s.release_due(at(day + 550), 10, &floor).await,
        Ok(Some(released.clone()))
    );
    assert_eq!(
        s.release_due(at(day + 550), 10, &floor).await,
        Ok(None),
        "released once"
    );
    assert_eq!(
        s.check_in(gone.id, &by).await,
        Ok(Some(released.clone())),
        "too late: unchanged"
    );
    assert_eq!(s.get(gone.id).await, Ok(Some(released.clone())));
    assert_eq!(s.get(kept.id).await, Ok(Some(checked)));
    assert_eq!(
        s.get(over.id).await,
        Ok(Some(over)),
        "over before anyone looked"
    );
    // The trails: one check-in (asked twice), one release by the floor (the releaser's step).
    let changes =
        |t: &[redmark_core::booking::Step]| t.iter().map(|s| s.change).collect::<Vec<_>>();
    let kept_trail = s.trail(kept.id).await.unwrap();
    assert_eq!(changes(&kept_trail).last(), Some(&Change::CheckedIn));
    assert_eq!(
        changes(&kept_trail)
            .iter()
            .filter(|c| **c == Change::CheckedIn)
            .count(),
        1
    );
    let gone_trail = s.trail(gone.id).await.unwrap();
    assert_eq!(changes(&gone_trail).last(), Some(&Change::Released));
    assert_eq!(gone_trail.last().map(|s| s.by), Some(floor));
    assert_eq!(occupant(s, "loft", released.new.span).await, Ok(None));
    assert_eq!(
        s.next_held(&me, at(day + 540), "den").await,
        Ok(Some(released)),
        "its holder still reads it"
    );
    let theirs = NewBooking {
        holder: [6; 8],
        ..span("loft", day + 560, day + 600, 143)
    };
    created(s.commit(&theirs).await);
}

/// A booking's end moves later only into free time, earlier at once, only for its holder and
/// only from where the caller saw it; asked again, the same answer (room `lobby`, nonces from 120).
async fn ends(s: &mut impl Store) {
    let (me, them) = ([5; 8], [6; 8]);
    // 09:00–10:00, and someone else's 10:30–11:30.
    let mine = created(s.commit(&span("lobby", 540, 600, 120)).await);
    let theirs = NewBooking {
        holder: them,
        ..span("lobby", 630, 690, 121)
    };
    let theirs = created(s.commit(&theirs).await);
    assert_eq!(
        s.set_end(mine.id, &Actor::holder(them), at(600), at(630))
            .await,
        Ok(None)
    );
    assert_eq!(
        s.set_end(mine.id, &Actor::holder(me), at(600), at(660))
            .await,
        Ok(Some(Resized::Taken(theirs.clone()))),
        "into their time"
    );
    let mut longer = mine.clone();
    longer.new.span = Span::new(at(540), at(630)).unwrap();
    for again in ["up to theirs", "asked again"] {
        assert_eq!(
            s.set_end(mine.id, &Actor::holder(me), at(600), at(630))
                .await,
            Ok(Some(Resized::Moved(longer.clone()))),
            "{again}"
        );
    }
    assert_eq!(
        s.set_end(mine.id, &Actor::holder(me), at(600), at(615))
            .await,
        Ok(Some(Resized::Changed(longer.clone()))),
        "it no longer ends at 10:00"
    );
    assert_eq!(s.get(mine.id).await, Ok(Some(longer)));
    // Earlier: the rest is free for anyone at once.
    let mut shorter = mine.clone();
    shorter.new.span = Span::new(at(540), at(570)).unwrap();
    assert_eq!(
        s.set_end(mine.id, &Actor::holder(me), at(630), at(570))
            .await,
        Ok(Some(Resized::Moved(shorter.clone())))
    );
    created(s.commit(&span("lobby", 570, 630, 122)).await);
    assert_eq!(
        s.set_end(mine.id, &Actor::holder(me), at(570), at(540))
            .await,
        Ok(Some(Resized::Changed(shorter.clone()))),
        "no end at or before its start"
    );
    // A cancelled booking stays as it is.
    let cancelled = s
        .cancel(mine.id, &Actor::holder(me))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        s.set_end(mine.id, &Actor::holder(me), at(570), at(555))
            .await,
        Ok(Some(Resized::Changed(cancelled)))
    );
}

/// Any overlap clashes, touching does not, a cancelled booking clashes with nothing, and a
/// room's next booking may be one under way (room `hall`, holder 5, nonces from 100).
async fn overlaps(s: &mut impl Store) {
    // 09:30–10:15.
    let first = created(s.commit(&span("hall", 570, 615, 100)).await);
    assert_eq!(first.new.title.as_str(), "Design review");
    for (start, end, why) in [
        (600, 660, "10:00–11:00"),
        (540, 585, "09:00–09:45"),
        (570, 615, "the same span"),
        (580, 590, "inside it"),
        (480, 720, "around it"),
    ] {
        assert_eq!(
            s.commit(&span("hall", start, end, 101)).await,
            Ok(Commit::Taken(first.clone())),
            "{why}"
        );
    }
    // Touching is not overlapping, on either side.
    let after = created(s.commit(&span("hall", 615, 660, 102)).await);
    let before = created(s.commit(&span("hall", 525, 570, 103)).await);
    // Over several: taken by the earliest.
    assert_eq!(
        s.commit(&span("hall", 540, 640, 104)).await,
        Ok(Commit::Taken(before.clone()))
    );
    assert_eq!(
        s.next_in_room("hall", at(630)).await,
        Ok(Some(after.clone())),
        "10:30 is during 10:15–11:00"
    );
    assert_eq!(
        s.next_in_room("hall", at(570)).await,
        Ok(Some(first.clone()))
    );
    assert_eq!(
        s.next_in_room("hall", at(0)).await,
        Ok(Some(before.clone()))
    );
    assert_eq!(
        occupant(s, "hall", Span::new(at(600), at(630)).unwrap()).await,
        Ok(Some(first.clone()))
    );
    // A cancelled booking clashes with nothing.
    s.cancel(first.id, &Actor::holder([5; 8])).await.unwrap();
    let inside = created(s.commit(&span("hall", 575, 610, 105)).await);
    assert_eq!(
        s.next_in_room("hall", at(570)).await,
        Ok(Some(inside.clone()))
    );
    assert_eq!(
        s.next_in_room("hall", at(610)).await,
        Ok(Some(after.clone()))
    );
    // Over midnight into the next day, and the next day's morning after it.
    let night = created(s.commit(&span("hall", 1380, 1500, 106)).await);
    assert_eq!(
        s.commit(&span("hall", 1440, 1470, 107)).await,
        Ok(Commit::Taken(night.clone()))
    );
    let morning = created(s.commit(&span("hall", 1500, 1530, 108)).await);
    assert_eq!(s.next_in_room("hall", at(1445)).await, Ok(Some(night)));
    assert_eq!(s.next_in_room("hall", at(1500)).await, Ok(Some(morning)));
    assert_eq!(s.next_in_room("hall", at(1530)).await, Ok(None));
    // Another room is another matter.
    created(s.commit(&span("hall-2", 570, 615, 109)).await);
    trails(s).await;
}

/// Operators and trails: an operator cancels anyone's booking, a plain user only its own;
/// each change is kept with who, when, over what and on which instance, once.
async fn trails(s: &mut impl Store) {
    let maker = Actor {
        holder: [20; 8],
        operator: false,
        on_answer: false,
        at: 1_790_000_000,
        via: Via::Http,
        instance: 7,
    };
    let n = NewBooking {
        holder: maker.holder,
        ..span("trail", 540, 600, 130)
    };
    let b = created(s.commit_by(&n, &maker).await);
    let later = Actor {
        at: maker.at + 60,
        via: Via::Stdio,
        ..maker
    };
    let Ok(Some(Resized::Moved(_))) = s.set_end(b.id, &later, at(600), at(630)).await else {
        panic!("extended");
    };
    let stranger = Actor {
        holder: [21; 8],
        ..maker
    };
    assert_eq!(s.cancel(b.id, &stranger).await, Ok(None), "not theirs");
    let early = Actor {
        at: maker.at + 90,
        ..later
    };
    let Ok(Some(Resized::Moved(longer))) = s.set_end(b.id, &early, at(630), at(615)).await else {
        panic!("ended early");
    };
    let operator = Actor {
        holder: [22; 8],
        operator: true,
        on_answer: true,
        at: maker.at + 120,
        via: Via::Tcp,
        instance: 8,
    };
    let cancelled = Booking {
        status: Status::Cancelled,
        ..longer
    };
    assert_eq!(s.cancel(b.id, &operator).await, Ok(Some(cancelled.clone())));
    assert_eq!(
        s.cancel(b.id, &operator).await,
        Ok(Some(cancelled)),
        "idempotent"
    );
    assert_eq!(
        s.cancel(u32::MAX, &operator).await,
        Ok(None),
        "no such booking"
    );
    let trail = s.trail(b.id).await.unwrap();
    let kinds: Vec<Change> = trail.iter().map(|t| t.change).collect();
    let ended = [
        Change::Made,
        Change::Extended,
        Change::Ended,
        Change::Cancelled,
    ];
    assert_eq!(kinds, ended);
    let by: Vec<Actor> = trail.iter().map(|t| t.by).collect();
    assert_eq!(by, [maker, later, early, operator]);
    // The free span is bookable again, and that booking's trail is its own.
    let again = created(s.commit(&span("trail", 540, 600, 131)).await);
    let trail = s.trail(again.id).await.unwrap();
    assert_eq!(trail.len(), 1);
    assert_eq!(trail[0].by, Actor::holder(again.new.holder));
}

/// The ids of `holder`'s active bookings, walked with `next_held` from the start.
async fn walk(s: &mut impl Store, holder: [u8; 8]) -> Vec<u32> {
    let mut at = (slot(0).start, RoomId::new());
    let mut ids = Vec::new();
    while let Some(b) = s.next_held(&holder, at.0, &at.1).await.unwrap() {
        assert!(ids.len() < 100, "the walk does not end");
        ids.push(b.id);
        at = (b.new.span.start, b.new.room);
    }
    ids
}

#[test]
fn the_core_reference_store_passes_the_store_suite() {
    runtime().block_on(suite(&mut redmark_core::booking::MemStore::<40>::new()));
}

#[test]
fn redb_passes_the_store_suite() {
    let dir = redmark_tests::server::TempDir::new("suite-redb");
    let mut s = RedbBookings::new(RedbStore::open_checked(dir.path(), false).unwrap());
    runtime().block_on(suite(&mut s));
}
