//! Where bookings are kept: redb in the data folder ([`redb`]) and PostgreSQL shared by many
//! instances ([`pg`]), each the core's [`Store`] with a handle per engine ([`Bookings`]).

pub mod changes;
#[cfg(test)]
mod changes_tests;
mod fence;
pub mod outage;
pub mod pg;
pub mod redb;
#[cfg(test)]
mod suite;
#[cfg(test)]
mod suite_kit;

use std::future::Future;
use std::pin::Pin;

use redmark_core::booking::{Store, StoreError};

pub use fence::Fence;

/// A store the shell books through: the core's [`Store`] (the booking tools' operations, the
/// only list of them), a handle per engine, and what an operator asks of it.
pub trait Bookings: Store + Admin + Send + Sync + Sized + 'static {
    /// A handle for another engine: the same store, a [`Fence`] of its own.
    fn handle(&self) -> Self;
    /// This handle's place in its connection's read-after-write order.
    fn fence(&self) -> &Fence;
    /// Where the store tells what its writes (and, shared, other instances') changed
    /// (`None`: it does not).
    fn changes(&self) -> Option<std::sync::Arc<changes::Changes>> {
        None
    }
}

/// What the operator's paths ask of a served store (`/healthz`, `redmark backup`), whatever
/// app the host serves.
pub trait Admin: Send + Sync {
    /// Reads one booking (of an id no booking has): `Ok` if the store answers.
    fn probe(&self) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + '_>>;
    /// Writes a copy of the whole store, as one read sees it, into the empty file `to` (a redb
    /// database: `redmark backup`), durable when this returns. A store that is not a redb file
    /// says how it is copied instead.
    fn snapshot(&self, to: std::fs::File) -> Result<Snapshot, String> {
        drop(to);
        Err(
            "this server's bookings are not in a redb file (a PostgreSQL store is copied with \
             pg_dump: docs/operators.md)"
                .into(),
        )
    }
}

/// The booking id [`Admin::probe`] reads: never a booking's (ids start at 1), so the read
/// finds nothing and no booking is ever in the answer.
pub const PROBE_ID: u32 = 0;

/// What a copy of a store holds (`redmark backup`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Bookings in it (cancelled ones too).
    pub bookings: u64,
    /// The highest booking id in it.
    pub newest: Option<redmark_core::booking::BookingId>,
}
