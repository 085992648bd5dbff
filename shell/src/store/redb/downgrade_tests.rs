//! A file this release set up, served again by the release before the index tiers (0cacbc5),
//! then by this one: the tripwire (`migrate.rs`) keeps either from serving stale indexes.

use std::path::Path;

use redb::{Database, ReadableTable, ReadableTableMetadata};
use redmark_core::booking::{
    Actor, Booking, Commit, Day, NewBooking, RoomId, Span, Status, Store, Title,
};

use super::INDEX_TIERS;
use crate::store::redb::keys::{holder_key, room_key};
use crate::store::redb::tables::{
    decode, encode, load, next_in_room, BOOKINGS, HOLDER_STARTS, META, NONCES, OLD_HELD,
    ROOM_STARTS,
};
use crate::store::redb::tests::{now, scratch_dir};
use crate::store::redb::tiers::Tiers;
use crate::store::redb::{check_store, RedbBookings, RedbStore, STORE_FILE};

const HOLDER: [u8; 8] = [5; 8];

fn new(room: &str, hour: u8, nonce: u8) -> NewBooking {
    let day = Day {
        year: 2099,
        month: 10,
        day: 1,
    };
    NewBooking {
        room: RoomId::try_from(room).unwrap(),
        span: Span::hour(day, hour),
        title: Title::new(),
        attendees: 2,
        holder: HOLDER,
        nonce: [nonce; 8],
    }
}

/// The store at `path` has the empty `held` and [`INDEX_TIERS`] in `meta`.
fn assert_tripwire(path: &Path) {
    let db = Database::open(path).unwrap();
    let tx = db.begin_read().unwrap();
    let held = tx.open_table(OLD_HELD).expect("a `held` table");
    assert_eq!(held.len().unwrap(), 0, "`held` is empty");
    let meta = tx.open_table(META).unwrap();
    assert!(meta.get(INDEX_TIERS).unwrap().is_some());
}

/// What 0cacbc5's open does to a file with a `held` table (`git show
/// 0cacbc5:shell/src/store/redb/open.rs`, `set_up_as`, calling `migrate.rs` `convert`): deletes
/// `held`, deletes `room_starts` and `holder_starts` and rebuilds them from the active
/// bookings. It knows no other index table; `nonces` stays as it is.
fn open_as_0cacbc5(db: &Database) {
    let tx = db.begin_write().unwrap();
    if tx.delete_table(OLD_HELD).unwrap() {
        tx.delete_table(ROOM_STARTS).unwrap();
        tx.delete_table(HOLDER_STARTS).unwrap();
        let bookings = tx.open_table(BOOKINGS).unwrap();
        let mut rooms = tx.open_table(ROOM_STARTS).unwrap();
        let mut holders = tx.open_table(HOLDER_STARTS).unwrap();
        for row in bookings.iter().unwrap() {
            let (k, rec) = row.unwrap();
            let b = decode(k.value(), rec.value()).unwrap();
            if b.status == Status::Active {
                let n = &b.new;
                let room = room_key(&n.room, n.span.start).unwrap();
                rooms.insert(&room[..], b.id).unwrap();
                let mine = holder_key(&n.holder, n.span.start, &n.room);
                holders.insert(&mine[..], b.id).unwrap();
            }
        }
    }
    tx.commit().unwrap();
}

/// 0cacbc5's `Tables::book`: it reads only `nonces` and `room_starts` (the settled tables).
fn book_as_0cacbc5(db: &Database, new: &NewBooking) -> Commit {
    let operation = [&new.holder[..], &new.nonce[..]].concat();
    {
        let tx = db.begin_read().unwrap();
        let bookings = tx.open_table(BOOKINGS).unwrap();
        // Each "tier" is the one settled table: the only one the older release knows.
        let nonces = Tiers([NONCES; 3]).open(|t| tx.open_table(t)).unwrap();
        if let Some(id) = nonces.get(&operation).unwrap() {
            return Commit::Replayed(load(&bookings, id).unwrap().unwrap());
        }
        let rooms = Tiers([ROOM_STARTS; 3]).open(|t| tx.open_table(t)).unwrap();
        let first = next_in_room(&rooms, &bookings, &new.room, new.span.start, u32::MAX).unwrap();
        if let Some(b) = first.filter(|b| b.new.span.overlaps(&new.span)) {
            return Commit::Taken(b);
        }
    }
    let tx = db.begin_write().unwrap();
    let b = {
        let mut bookings = tx.open_table(BOOKINGS).unwrap();
        let id = bookings.last().unwrap().map_or(0, |(k, _)| k.value()) + 1;
        let b = Booking {
            id,
            new: new.clone(),
            status: Status::Active,
            checked_in: false,
            series: None,
        };
        bookings.insert(id, &encode(&b)[..]).unwrap();
        tx.open_table(NONCES)
            .unwrap()
            .insert(&operation[..], id)
            .unwrap();
        let room = room_key(&new.room, new.span.start).unwrap();
        tx.open_table(ROOM_STARTS)
            .unwrap()
            .insert(&room[..], id)
            .unwrap();
        let mine = holder_key(&new.holder, new.span.start, &new.room);
        tx.open_table(HOLDER_STARTS)
            .unwrap()
            .insert(&mine[..], id)
            .unwrap();
        b
    };
    tx.commit().unwrap();
    Commit::Created(b)
}

/// 0cacbc5's `Tables::cancel`: the entries it removes are those of the settled tables.
fn cancel_as_0cacbc5(db: &Database, mut b: Booking) {
    let tx = db.begin_write().unwrap();
    b.status = Status::Cancelled;
    tx.open_table(BOOKINGS)
        .unwrap()
        .insert(b.id, &encode(&b)[..])
        .unwrap();
    let n = &b.new;
    let room = room_key(&n.room, n.span.start).unwrap();
    tx.open_table(ROOM_STARTS)
        .unwrap()
        .remove(&room[..])
        .unwrap();
    let mine = holder_key(&n.holder, n.span.start, &n.room);
    tx.open_table(HOLDER_STARTS)
        .unwrap()
        .remove(&mine[..])
        .unwrap();
    drop(tx.commit());
}

/// A store this release sets up has an empty `held` (and [`INDEX_TIERS`]), so has its backup
/// copy, and `redmark check` passes it.
#[test]
fn a_store_of_this_release_and_its_copy_have_an_empty_held() {
    let dir = scratch_dir("tripwire-new");
    let mut s = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
    assert!(matches!(
        now(s.commit(&new("nook", 9, 1))),
        Ok(Commit::Created(_))
    ));
    let copy = dir.join("copy.redb");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&copy)
        .unwrap();
    s.store().snapshot(file).unwrap();
    drop(s);
    assert_tripwire(&dir.join(STORE_FILE));
    assert_tripwire(&copy);
    check_store(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The older release opens a store with bookings in the young tables: it rebuilds its clash
/// indexes (a retried operation is answered "taken", not booked twice), books and cancels;
/// this release then rebuilds every index: each booking is found, no stale young entry
/// answers a clash, and each earlier operation replays.
#[test]
fn a_store_the_older_release_served_opens_with_every_index_rebuilt() {
    let dir = scratch_dir("tripwire-downgrade");
    let mut s = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
    let made: Vec<Booking> = [new("nook", 9, 1), new("nook", 11, 2), new("atrium", 9, 3)]
        .iter()
        .map(|n| match now(s.commit(n)) {
            Ok(Commit::Created(b)) => b,
            c => panic!("{c:?}"),
        })
        .collect();
    drop(s);
    let path = dir.join(STORE_FILE);
    let db = Database::open(&path).unwrap();
    open_as_0cacbc5(&db);
    // A client retries atrium's operation: its nonce is in a young table, its booking in the way.
    assert_eq!(
        book_as_0cacbc5(&db, &made[2].new),
        Commit::Taken(made[2].clone())
    );
    // Nook 09:00 cancelled and booked again by the older release (its young entries stay).
    cancel_as_0cacbc5(&db, made[0].clone());
    let Commit::Created(again) = book_as_0cacbc5(&db, &new("nook", 9, 4)) else {
        panic!("the cancelled hour is free to the older release")
    };
    drop(db);
    let mut s = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
    let all = s.store().all().unwrap();
    let ids: Vec<_> = all.iter().map(|b| (b.id, b.status)).collect();
    let (active, cancelled) = (Status::Active, Status::Cancelled);
    assert_eq!(ids, [(1, cancelled), (2, active), (3, active), (4, active)]);
    for b in &all {
        assert_eq!(now(s.commit(&b.new)), Ok(Commit::Replayed(b.clone())));
        assert_eq!(now(s.made_by(&HOLDER, &b.new.nonce)), Ok(Some(b.clone())));
    }
    // Nook 09:00 is the older release's booking, not the cancelled one a young table named.
    let clash = new("nook", 9, 5);
    assert_eq!(now(s.commit(&clash)), Ok(Commit::Taken(again.clone())));
    let mut walk = Vec::new();
    let mut at = (0, String::new());
    while let Some(b) = now(s.next_held(&HOLDER, at.0, &at.1)).unwrap() {
        walk.push(b.id);
        at = (b.new.span.start, b.new.room.to_string());
    }
    assert_eq!(
        walk,
        [3, 4, 2],
        "the holder's active bookings, in (start, room) order"
    );
    now(s.cancel(again.id, &Actor::holder(HOLDER)))
        .unwrap()
        .unwrap();
    assert!(matches!(now(s.commit(&clash)), Ok(Commit::Created(_))));
    drop(s);
    assert_tripwire(&path);
    std::fs::remove_dir_all(&dir).unwrap();
}
