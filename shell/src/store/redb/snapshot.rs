//! A copy of the store as one read transaction sees it: every table written into a new redb
//! database on a file of the caller's, for `redmark backup` (while a server serves, writers go
//! on: redb's read transactions see one commit and hold its pages until they end).

use std::fs::File;
use std::path::Path;

use redb::backends::FileBackend;
use redb::{
    Database, Durability, Key, ReadTransaction, ReadableTable, ReadableTableMetadata,
    TableDefinition, Value,
};

use super::tables::{BOOKINGS, INDEXES, META, OLD_HELD};
use super::trail::TRAIL;
use crate::store::Snapshot;

/// Copies every table of `db`, as one read transaction sees them, into a new database on `to`
/// (an empty file, writable), fsynced when this returns.
pub(super) fn snapshot(db: &Database, to: File) -> Result<Snapshot, String> {
    let read = db.begin_read().map_err(text)?;
    let copy = Database::builder()
        .create_with_backend(FileBackend::new(to).map_err(text)?)
        .map_err(text)?;
    let mut write = copy.begin_write().map_err(text)?;
    write.set_durability(Durability::Immediate);
    let bookings = copy_table(&read, &write, BOOKINGS)?;
    for index in INDEXES {
        copy_table(&read, &write, index)?;
    }
    // The empty tripwire an older release obeys (`migrate.rs`), so a copy is as safe as the file.
    copy_table(&read, &write, OLD_HELD)?;
    copy_table(&read, &write, META)?;
    copy_table(&read, &write, TRAIL)?;
    write.commit().map_err(text)?;
    Ok(Snapshot {
        bookings,
        newest: newest(&read)?,
    })
}

/// What the copy at `path` holds (it is opened, so a damaged or truncated file fails here).
pub fn summary(path: &Path) -> Result<Snapshot, String> {
    let db = Database::open(path).map_err(text)?;
    let read = db.begin_read().map_err(text)?;
    let bookings = match read.open_table(BOOKINGS) {
        Ok(t) => t.len().map_err(text)?,
        Err(redb::TableError::TableDoesNotExist(_)) => 0,
        Err(e) => return Err(text(e)),
    };
    Ok(Snapshot {
        bookings,
        newest: newest(&read)?,
    })
}

/// The highest booking id `read` sees.
fn newest(read: &ReadTransaction) -> Result<Option<u32>, String> {
    match read.open_table(BOOKINGS) {
        Ok(t) => Ok(t.last().map_err(text)?.map(|(k, _)| k.value())),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
        Err(e) => Err(text(e)),
    }
}

/// Copies table `def` row by row (a table the source lacks is created empty); its rows.
fn copy_table<K: Key + 'static, V: Value + 'static>(
    from: &ReadTransaction,
    to: &redb::WriteTransaction,
    def: TableDefinition<K, V>,
) -> Result<u64, String> {
    let mut dst = to.open_table(def).map_err(text)?;
    let src = match from.open_table(def) {
        Ok(t) => t,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(0),
        Err(e) => return Err(text(e)),
    };
    let mut rows = 0;
    for row in src.iter().map_err(text)? {
        let (k, v) = row.map_err(text)?;
        dst.insert(k.value(), v.value()).map_err(text)?;
        rows += 1;
    }
    Ok(rows)
}

/// A redb error as text.
fn text(e: impl Into<redb::Error>) -> String {
    e.into().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::redb::tests::now;
    use crate::store::redb::{RedbBookings, RedbStore};
    use redmark_core::booking::{occupant, Actor, Day, NewBooking, RoomId, Span, Store, Title};

    const DAY: Day = Day {
        year: 2099,
        month: 1,
        day: 1,
    };

    /// The copy holds what the store held when it was taken, and serves as a store of its own.
    #[test]
    fn a_copy_holds_every_table_and_opens_as_a_store() {
        let dir = std::env::temp_dir().join(format!("redmark-snapshot-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut store = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
        for hour in 0..5u8 {
            let new = NewBooking {
                room: RoomId::try_from("nook").unwrap(),
                span: Span::hour(DAY, hour),
                title: Title::new(),
                attendees: 1,
                holder: [7; 8],
                nonce: [hour; 8],
            };
            now(store.commit(&new)).unwrap();
        }
        now(store.cancel(2, &Actor::holder([7; 8]))).unwrap();
        let copy = dir.join("copy");
        std::fs::create_dir_all(&copy).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(copy.join("bookings.redb"))
            .unwrap();
        let took = store.store().snapshot(file).unwrap();
        assert_eq!((took.bookings, took.newest), (5, Some(5)));
        let seen = summary(&copy.join("bookings.redb")).unwrap();
        assert_eq!((seen.bookings, seen.newest), (5, Some(5)));
        // Another folder adopts the copy (it has no store-id marker) and serves it whole.
        let restored = RedbStore::open_checked(&copy, false).unwrap();
        assert_eq!(restored.all().unwrap(), store.store().all().unwrap());
        let mut restored = RedbBookings::new(restored);
        for id in 1..=5 {
            let trail = now(restored.trail(id)).unwrap();
            assert_eq!(trail, now(store.trail(id)).unwrap(), "bk_{id}'s trail");
            assert_eq!(
                trail.len(),
                if id == 2 { 2 } else { 1 },
                "bk_{id}: {trail:?}"
            );
        }
        assert!(
            now(occupant(&mut restored, "nook", Span::hour(DAY, 1)))
                .unwrap()
                .is_none(),
            "the cancelled booking's span is free in the copy too"
        );
        drop((store, restored));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
