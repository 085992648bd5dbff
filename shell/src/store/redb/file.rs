//! One redb file of bookings: opening it, its reads, a copy of it, and the guard that stops
//! using it once redb panicked.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use redb::{Database, ReadableTable};
use redmark_core::booking::{Booking, BookingId, Holder, Minute, StoreError, Trail};
use redmark_core::seal::Nonce;

use super::keys;
use super::open::{self, OpenError};
use super::snapshot;
use super::tables::{
    self, corrupt, decode, fault, load, Tables, BOOKINGS, HOLDER_TIERS, NONCE_TIERS, ROOM_TIERS,
};
use crate::fault::panics::catch_quiet;
use crate::store::Snapshot;

/// A redb file of bookings: what every handle ([`RedbBookings`](super::RedbBookings)) and the committer share.
pub struct RedbStore {
    db: Database,
    /// redb panicked under a call: the file is damaged and redb's in-memory state may be
    /// inconsistent, so nothing more is read or written.
    broken: AtomicBool,
}

impl RedbStore {
    /// Opens the store of the data folder `dir` after checking it (see the module doc): a
    /// damaged, vanished or foreign store is an error saying what to do. `key_file_existed`:
    /// whether the folder had a sealing-key file before this start (evidence of an earlier run
    /// in folders from before `open::MARKER_FILE`).
    pub fn open_checked(dir: &Path, key_file_existed: bool) -> Result<RedbStore, OpenError> {
        open::open_checked(dir, key_file_existed).map(RedbStore::new)
    }

    /// A store in memory, gone when dropped (`redmark call --scratch`, tests).
    pub fn in_memory() -> Result<RedbStore, OpenError> {
        let db = Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .map_err(|e| OpenError(format!("cannot make a store in memory: {e}")))?;
        // A write transaction opening the tables makes them.
        let made = (|| {
            let tx = db.begin_write().map_err(fault)?;
            Tables::open(&tx)?;
            tx.commit().map_err(fault)
        })();
        made.map_err(|e| OpenError(format!("cannot make a store in memory: {e}")))?;
        Ok(RedbStore::new(db))
    }

    fn new(db: Database) -> RedbStore {
        RedbStore {
            db,
            broken: AtomicBool::new(false),
        }
    }

    /// Every booking, by id (for tools and tests).
    #[allow(dead_code)]
    pub fn all(&self) -> Result<Vec<Booking>, StoreError> {
        self.guarded("listing bookings", |db| {
            let tx = db.begin_read().map_err(fault)?;
            let t = tx.open_table(BOOKINGS).map_err(fault)?;
            let mut v = Vec::new();
            for row in t.iter().map_err(fault)? {
                let (k, rec) = row.map_err(fault)?;
                v.push(decode(k.value(), rec.value())?);
            }
            Ok(v)
        })
    }

    /// Runs `f` on the database unless the store is broken; a panic in redb breaks it.
    pub(super) fn guarded<T>(
        &self,
        what: &str,
        f: impl FnOnce(&Database) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if self.broken.load(Ordering::Acquire) {
            return Err(StoreError::Corrupt);
        }
        catch_quiet(|| f(&self.db)).unwrap_or_else(|p| {
            self.broken.store(true, Ordering::Release);
            let p = crate::fault::tidy::one_line(&p);
            tracing::error!(
                "booking store: redb panicked while {what} ({p}): bookings.redb is damaged; \
                 every booking request now fails until the server is stopped and the file is \
                 restored from a copy or repaired (`redmark serve --repair`)"
            );
            Err(StoreError::Corrupt)
        })
    }
}

/// The reads, on the calling thread (one read transaction each).
impl RedbStore {
    pub(super) fn get(&self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        self.guarded("reading a booking", |db| {
            let tx = db.begin_read().map_err(fault)?;
            let t = tx.open_table(BOOKINGS).map_err(fault)?;
            load(&t, id)
        })
    }

    /// One read: a series' bookings have the consecutive ids from the series' own (one write
    /// transaction allocates them all, `Tables::book_series`), so the next after `after` is the
    /// id after it (or the series' first) while that booking is still of the series.
    pub(super) fn next_in_series(
        &self,
        series: BookingId,
        after: BookingId,
    ) -> Result<Option<Booking>, StoreError> {
        let Some(id) = after.checked_add(1).map(|id| id.max(series)) else {
            return Ok(None);
        };
        let of = self.get(id)?;
        Ok(of.filter(|b| b.series == Some(series)))
    }

    /// Booking `id`'s trail (`trail.rs`).
    pub(super) fn trail(&self, id: BookingId) -> Result<Trail, StoreError> {
        self.guarded("reading a trail", |db| super::trail::read(db, id))
    }

    pub(super) fn made_by(
        &self,
        holder: &Holder,
        nonce: &Nonce,
    ) -> Result<Option<Booking>, StoreError> {
        self.guarded("reading an operation", |db| {
            let tx = db.begin_read().map_err(fault)?;
            let nonces = NONCE_TIERS.open(|t| tx.open_table(t))?;
            let Some(id) = nonces.get(&keys::operation_key(holder, nonce)[..])? else {
                return Ok(None);
            };
            let t = tx.open_table(BOOKINGS).map_err(fault)?;
            load(&t, id)?.map(Some).ok_or_else(|| {
                corrupt(format_args!("a nonce names booking {id}, which is missing"))
            })
        })
    }

    /// One read of each table of the holder index (`holder_starts`, in (start, room) order).
    pub(super) fn next_held(
        &self,
        holder: &Holder,
        start: Minute,
        room: &str,
    ) -> Result<Option<Booking>, StoreError> {
        self.guarded("reading a holder's bookings", |db| {
            let tx = db.begin_read().map_err(fault)?;
            let holders = HOLDER_TIERS.open(|t| tx.open_table(t))?;
            let t = tx.open_table(BOOKINGS).map_err(fault)?;
            tables::next_held(&holders, &t, holder, start, room)
        })
    }

    /// At most two reads of each table of the room index (`room_starts`, in start order).
    pub(super) fn next_in_room(
        &self,
        room: &str,
        from: Minute,
    ) -> Result<Option<Booking>, StoreError> {
        self.guarded("reading a room's bookings", |db| {
            let tx = db.begin_read().map_err(fault)?;
            let rooms = ROOM_TIERS.open(|t| tx.open_table(t))?;
            let t = tx.open_table(BOOKINGS).map_err(fault)?;
            tables::next_in_room(&rooms, &t, room, from, Minute::MAX)
        })
    }

    /// One read transaction copied table by table (`snapshot.rs`); a panic in redb breaks the
    /// store as any other call's does.
    pub fn snapshot(&self, to: std::fs::File) -> Result<Snapshot, String> {
        let mut why = None;
        let copied = self.guarded("copying the store", |db| {
            snapshot::snapshot(db, to).map_err(|e| {
                why = Some(e);
                StoreError::Io
            })
        });
        copied.map_err(|e| why.unwrap_or_else(|| e.message().to_owned()))
    }
}
