//! Durable bookings in redb, behind the core's [`Store`] trait.
//!
//! Why redb rather than SQLite: it is pure Rust (no C toolchain, nothing to cross-build),
//! ACID with copy-on-write B-trees and a checksummed commit slot, so a crash at any instant
//! leaves the last committed transaction and nothing half-written, and a commit with
//! [`Durability::Immediate`] (its default) has been fsynced when `commit()` returns. The
//! booking data is three tiny key/value tables; SQL buys nothing here. A database shared by
//! several instances would be another `Store` implementation (e.g. over a SQL server), not a
//! change to the engine.
//!
//! Tables (one write transaction per group of bookings and cancellations, see `group.rs`):
//! - `bookings`: id → record (see `tables::encode`);
//! - `nonces`: holder ‖ operation nonce → id (at-most-once: the same operation replays its
//!   booking);
//! - `held`: slot ‖ room → id of the active booking holding it;
//! - `meta`: `store-id` → the store's 16-byte id (see below).
//!
//! # A damaged or vanished store is refused at start
//!
//! [`RedbStore::open_checked`] serves a store only after the checks below, and otherwise fails
//! with one sentence saying what is wrong and what to do:
//! - **Vanished**: `bookings.redb` missing or 0 bytes although the data folder has held a store.
//!   The marker of that is `open::MARKER_FILE` (`store-id`): written (atomically, fsynced) when a
//!   store is first created, holding the id also stored in the store's `meta` table. So a
//!   missing or empty store next to a `store-id` is refused, and so is a store whose id is not
//!   the folder's (another folder's file, or an empty one an older redmark created). A folder
//!   from before the marker existed (no `store-id`) adopts its store on the next start; there, a
//!   0-byte `bookings.redb` next to a key file (`sealing-keys`) is refused too, since redb never
//!   leaves a file it initialised empty. Deleting `store-id` is how an operator says "start
//!   afresh" or "adopt this file".
//! - **Damaged where redb's open reads** (garbage over the header, a truncated file): redb's
//!   open fails, or panics on some damage (an assertion on a truncated file); those panics are
//!   caught ([`catch_quiet`]) and reported the same way.
//! - **Damaged, after a shutdown that was not clean** (a crash, `kill -9`, a power cut): the
//!   store is opened with a repair callback that declines; redb calls it only when its open
//!   would have to repair the file, and says `RepairAborted`. Then the file is checked in full
//!   before redb's own recovery opens it: read into memory (under the same `flock` redb takes,
//!   so a running server's file is "in use", never half-read) and checked there with redb's
//!   [`Database::check_integrity`] (every page checksum of the newest commit) plus a decode of
//!   every record and of every link between tables, so the check itself never changes the file.
//!
//! After a clean shutdown a start reads the header, the allocator state and the store id, not
//! every page, so its time does not grow with the floor's history (docs/benchmarks.md). Damage
//! elsewhere in such a file is found by `redmark check` ([`check_store`]: the full check above,
//! on request) or when a request reads it (below). No stamp of our own decides: redb's header
//! flag and the allocator state redb writes at its clean shutdown do. The way out of a damaged
//! store: restore `bookings.redb` from a copy, or `redmark serve --repair` ([`repair`]), which
//! lets redb roll the file back to its last intact commit.
//!
//! Not caught at start: damage to the newest commit's pages of a store that was not shut down
//! cleanly (after a crash or `kill -9`) — redb's crash recovery cannot tell such damage from a
//! torn last commit and rolls back to the previous one, as it is designed to.
//!
//! # Damage met while serving
//!
//! Every read decodes into [`StoreError::Corrupt`] rather than trusting bytes, and a panic
//! inside redb is caught: that request gets `-32603`, the error is logged, and the store is
//! marked broken — redb skips its own clean-up when unwinding, so its in-memory state can no
//! longer be trusted — so every later store request fails the same way (other methods still
//! work) until the operator restarts the server; `redmark check` then says what is damaged.

mod open;
mod overlay;
mod snapshot;
mod tables;

use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use redb::{Database, Durability, ReadableTable};
use redmark_core::booking::{
    Booking, BookingId, Commit, Holder, NewBooking, Slot, Store, StoreError,
};
use redmark_core::seal::Nonce;

use super::{SharedStore, Snapshot, Write, Written};
use crate::host::panics::catch_quiet;
pub use open::{check_store, repair, OpenError, STORE_FILE};
pub use snapshot::summary;
use tables::{corrupt, decode, fault, held_key, load, Tables, BOOKINGS, HELD, NONCES};

/// Bookings in a redb file; every change is durable before the call returns.
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
    fn guarded<T>(
        &self,
        what: &str,
        f: impl FnOnce(&Database) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if self.broken.load(Ordering::Acquire) {
            return Err(StoreError::Corrupt);
        }
        catch_quiet(|| f(&self.db)).unwrap_or_else(|p| {
            self.broken.store(true, Ordering::Release);
            let p = crate::host::tidy::one_line(&p);
            tracing::error!(
                "booking store: redb panicked while {what} ({p}): bookings.redb is damaged; \
                 every booking request now fails until the server is stopped and the file is \
                 restored from a copy or repaired (`redmark serve --repair`)"
            );
            Err(StoreError::Corrupt)
        })
    }
}

impl SharedStore for RedbStore {
    fn get(&self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        self.guarded("reading a booking", |db| {
            let tx = db.begin_read().map_err(fault)?;
            let t = tx.open_table(BOOKINGS).map_err(fault)?;
            load(&t, id)
        })
    }

    fn made_by(&self, holder: &Holder, nonce: &Nonce) -> Result<Option<Booking>, StoreError> {
        self.guarded("reading an operation", |db| {
            let tx = db.begin_read().map_err(fault)?;
            let nonces = tx.open_table(NONCES).map_err(fault)?;
            let operation = [&holder[..], &nonce[..]].concat();
            let Some(id) = nonces
                .get(&operation[..])
                .map_err(fault)?
                .map(|g| g.value())
            else {
                return Ok(None);
            };
            let t = tx.open_table(BOOKINGS).map_err(fault)?;
            load(&t, id)?.map(Some).ok_or_else(|| {
                corrupt(format_args!("a nonce names booking {id}, which is missing"))
            })
        })
    }

    fn occupant(&self, room: &str, slot: Slot) -> Result<Option<Booking>, StoreError> {
        self.guarded("reading a slot", |db| {
            let tx = db.begin_read().map_err(fault)?;
            let held = tx.open_table(HELD).map_err(fault)?;
            let Some(id) = held
                .get(&held_key(room, slot)[..])
                .map_err(fault)?
                .map(|g| g.value())
            else {
                return Ok(None);
            };
            let t = tx.open_table(BOOKINGS).map_err(fault)?;
            load(&t, id)?.map(Some).ok_or_else(|| {
                corrupt(format_args!(
                    "a slot is held by booking {id}, which is missing"
                ))
            })
        })
    }

    /// Walks the active bookings (`held`, in (slot, room) order) from just after (`slot`,
    /// `room`) to the first of `holder`'s: each step reads one booking, so a page costs the
    /// bookings of others between the holder's, and nothing at all is kept between calls.
    fn next_held(
        &self,
        holder: &Holder,
        slot: Slot,
        room: &str,
    ) -> Result<Option<Booking>, StoreError> {
        self.guarded("reading a holder's bookings", |db| {
            let tx = db.begin_read().map_err(fault)?;
            let held = tx.open_table(HELD).map_err(fault)?;
            let t = tx.open_table(BOOKINGS).map_err(fault)?;
            let from = held_key(room, slot);
            let after = (Bound::Excluded(&from[..]), Bound::Unbounded);
            for entry in held.range::<&[u8]>(after).map_err(fault)? {
                let id = entry.map_err(fault)?.1.value();
                let b = load(&t, id)?.ok_or_else(|| {
                    corrupt(format_args!(
                        "a slot is held by booking {id}, which is missing"
                    ))
                })?;
                if b.new.holder == *holder {
                    return Ok(Some(b));
                }
            }
            Ok(None)
        })
    }

    /// One write transaction and one fsync for the whole group. A storage fault while deciding
    /// any write aborts the transaction: every write of the group then fails, none is made.
    fn write_group(&self, writes: &[Write]) -> Vec<Written> {
        let made = self.guarded("committing", |db| {
            let mut tx = db.begin_write().map_err(fault)?;
            tx.set_durability(Durability::Immediate);
            let mut out = Vec::with_capacity(writes.len());
            {
                let mut t = Tables::open(&tx)?;
                for w in writes {
                    out.push(match w {
                        Write::Book(new) => Written::Book(t.book(new)?),
                        Write::Cancel(id, h) => Written::Cancel(Ok(t.cancel(*id, h)?)),
                    });
                }
            }
            // Durable (fsynced) when commit returns: only then is any of them acknowledged.
            tx.commit().map_err(fault)?;
            Ok(out)
        });
        made.unwrap_or_else(|e| {
            writes
                .iter()
                .map(|w| match w {
                    Write::Book(_) => Written::Book(Err(e)),
                    Write::Cancel(..) => Written::Cancel(Err(e)),
                })
                .collect()
        })
    }

    /// One read transaction copied table by table (`snapshot.rs`); a panic in redb breaks the
    /// store as any other call's does.
    fn snapshot(&self, to: std::fs::File) -> Result<Snapshot, String> {
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

/// The store alone (tests, tools): each write its own transaction.
impl Store for RedbStore {
    fn commit(&mut self, new: &NewBooking) -> Result<Commit, StoreError> {
        match self.write_group(&[Write::Book(new.clone())]).pop() {
            Some(Written::Book(r)) => r,
            _ => Err(StoreError::Io),
        }
    }

    fn get(&self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        SharedStore::get(self, id)
    }

    fn made_by(&self, holder: &Holder, nonce: &Nonce) -> Result<Option<Booking>, StoreError> {
        SharedStore::made_by(self, holder, nonce)
    }

    fn occupant(&self, room: &str, slot: Slot) -> Result<Option<Booking>, StoreError> {
        SharedStore::occupant(self, room, slot)
    }

    fn next_held(
        &self,
        holder: &Holder,
        slot: Slot,
        room: &str,
    ) -> Result<Option<Booking>, StoreError> {
        SharedStore::next_held(self, holder, slot, room)
    }

    fn cancel(&mut self, id: BookingId, holder: &Holder) -> Result<Option<Booking>, StoreError> {
        match self.write_group(&[Write::Cancel(id, *holder)]).pop() {
            Some(Written::Cancel(r)) => r,
            _ => Err(StoreError::Io),
        }
    }
}

#[cfg(test)]
mod tests;
