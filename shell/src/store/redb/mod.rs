//! Durable bookings in redb: [`RedbBookings`] is the core's [`Store`](redmark_core::booking::Store)
//! over one file, reads on the calling thread and writes group-committed (`group.rs`).
//!
//! Why redb rather than SQLite: it is pure Rust (no C toolchain, nothing to cross-build),
//! ACID with copy-on-write B-trees and a checksummed commit slot, so a crash at any instant
//! leaves the last committed transaction and nothing half-written, and a commit with
//! [`redb::Durability::Immediate`] (its default) has been fsynced when `commit()` returns. The
//! booking data is a few tiny key/value tables; SQL buys nothing here. A database shared by
//! several instances is another `Store` implementation ([`crate::store::pg`]), not a change
//! to the engine.
//!
//! Tables (one write transaction per group of bookings and cancellations, see `group.rs`):
//! - `bookings`: id → record (see `tables::encode`; records of stores before spans, v1, are
//!   read as their whole hour);
//! - `nonces`: holder ‖ operation nonce → id (at-most-once: the same operation replays its
//!   booking);
//! - `room_starts`: room ‖ start → id of each active booking (a room's active bookings never
//!   overlap, so the one before a new span's end decides a clash: two index reads, whatever
//!   the store holds);
//! - `holder_starts`: holder ‖ start ‖ room → id of each active booking (`next_held`);
//! - `young_*` and `middle_*` of each of the three indexes above: the index's newer entries,
//!   moved on in bulk so a commit's inserts share pages (`tiers.rs`); the tables named above
//!   are the settled ones, and a read looks in all three;
//! - `held`: always empty, a tripwire: the hour index of stores before spans, which makes the
//!   release before the index tiers rebuild its indexes when it opens the file (and delete
//!   `held`, which makes this one rebuild every index at its next start: `migrate.rs`);
//! - `meta`: `store-id` → the store's 16-byte id (see below); `index-tiers` once the indexes
//!   are in tiers (a file without it, or without `held`, has every index rebuilt from the
//!   bookings at open, in one transaction: `migrate.rs`).
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

mod bookings;
mod errors;
mod file;
mod group;
mod keys;
mod migrate;
mod open;
mod overlay;
mod snapshot;
mod tables;
mod tiers;
mod trail;
mod usage;

pub use bookings::RedbBookings;
pub use file::RedbStore;
pub use group::MAX_GROUP;
pub use open::{check_store, repair, OpenError, STORE_FILE};
pub use snapshot::summary;

// What the module doc links to.
#[cfg(doc)]
use {crate::fault::panics::catch_quiet, redb::Database, redmark_core::booking::StoreError};

#[cfg(test)]
pub(super) mod tests;
