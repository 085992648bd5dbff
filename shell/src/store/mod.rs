//! Where bookings are kept: the shell's store interface ([`SharedStore`]: reads from any
//! thread, writes applied in groups) and its two stores, redb in the data folder ([`redb`])
//! and PostgreSQL shared by many instances ([`pg`]).

pub mod outage;
pub mod pg;
pub mod redb;

use redmark_core::booking::{
    Booking, BookingId, Commit, Holder, NewBooking, Outcome, Slot, StoreError, StoreOp,
};
use redmark_core::seal::Nonce;
use std::future::Future;
use std::pin::Pin;

/// A durable write a message asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// [`redmark_core::booking::Store::commit`].
    Book(NewBooking),
    /// [`redmark_core::booking::Store::cancel`] by a holder.
    Cancel(BookingId, Holder),
}

impl Write {
    /// `op` as a write, if it is one.
    pub fn of(op: &StoreOp) -> Option<Write> {
        match op {
            StoreOp::Commit(new) => Some(Write::Book(new.clone())),
            StoreOp::Cancel(id, holder) => Some(Write::Cancel(*id, *holder)),
            _ => None,
        }
    }
}

/// The outcome of a [`Write`], as the store's method would have returned it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Written {
    /// Of [`Write::Book`].
    Book(Result<Commit, StoreError>),
    /// Of [`Write::Cancel`].
    Cancel(Result<Option<Booking>, StoreError>),
    /// The committer went away before making the write (the call then fails; nothing was
    /// acknowledged).
    Lost,
}

impl Written {
    /// The outcome as the core's tools take it (a lost write fails with [`StoreError::Io`]).
    pub fn outcome(self) -> Outcome {
        match self {
            Written::Book(r) => Outcome::Commit(r),
            Written::Cancel(r) => Outcome::Booking(r),
            Written::Lost => Outcome::Booking(Err(StoreError::Io)),
        }
    }
}

/// A read's outcome: known at once, or on its way from across the network.
pub enum Reading {
    /// Read on the calling thread.
    Now(Outcome),
    /// Comes when this finishes (the store answers across the network).
    Later(Pin<Box<dyn Future<Output = Outcome> + Send>>),
}

/// What a copy of a store holds (`redmark backup`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Bookings in it (cancelled ones too).
    pub bookings: u64,
    /// The highest booking id in it.
    pub newest: Option<BookingId>,
}

/// A store every connection shares: reads from any thread, writes applied in groups.
pub trait SharedStore: Send + Sync + 'static {
    /// [`redmark_core::booking::Store::get`].
    fn get(&self, id: BookingId) -> Result<Option<Booking>, StoreError>;
    /// [`redmark_core::booking::Store::made_by`].
    fn made_by(&self, holder: &Holder, nonce: &Nonce) -> Result<Option<Booking>, StoreError>;
    /// [`redmark_core::booking::Store::occupant`].
    fn occupant(&self, room: &str, slot: Slot) -> Result<Option<Booking>, StoreError>;
    /// [`redmark_core::booking::Store::next_held`].
    fn next_held(
        &self,
        holder: &Holder,
        slot: Slot,
        room: &str,
    ) -> Result<Option<Booking>, StoreError>;
    /// Applies `writes` in order, each decided as if alone after the ones before it, and makes
    /// them durable before returning; one outcome per write, in order.
    fn write_group(&self, writes: &[Write]) -> Vec<Written>;
    /// Reads what `op` asks (a read: [`StoreOp::is_write`] false). By default at once, on the
    /// calling thread; a store across the network answers [`Reading::Later`] instead of
    /// blocking the thread.
    fn read(&self, op: &StoreOp) -> Reading {
        Reading::Now(Outcome::Booking(match op {
            StoreOp::Get(id) => self.get(*id),
            StoreOp::MadeBy(holder, nonce) => self.made_by(holder, nonce),
            StoreOp::Occupant(room, slot) => self.occupant(room, *slot),
            StoreOp::NextHeld(holder, slot, room) => self.next_held(holder, *slot, room),
            StoreOp::Commit(_) | StoreOp::Cancel(..) => Err(StoreError::Io),
        }))
    }
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
