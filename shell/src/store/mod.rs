//! Where bookings are kept: the shell's store interface ([`SharedStore`]: reads from any
//! thread, writes applied in groups) and its two stores, redb in the data folder ([`redb`])
//! and PostgreSQL shared by many instances ([`pg`]).

pub mod outage;
pub mod pg;
pub mod redb;

use redmark_core::booking::{Booking, BookingId, Commit, Holder, NewBooking, Slot, StoreError};
use redmark_core::seal::Nonce;

/// A durable write a message asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// [`redmark_core::booking::Store::commit`].
    Book(NewBooking),
    /// [`redmark_core::booking::Store::cancel`] by a holder.
    Cancel(BookingId, Holder),
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

/// A store every connection shares: reads from any thread, writes applied in groups.
pub trait SharedStore: Send + Sync + 'static {
    /// [`redmark_core::booking::Store::get`].
    fn get(&self, id: BookingId) -> Result<Option<Booking>, StoreError>;
    /// [`redmark_core::booking::Store::made_by`].
    fn made_by(&self, holder: &Holder, nonce: &Nonce) -> Result<Option<Booking>, StoreError>;
    /// [`redmark_core::booking::Store::occupant`].
    fn occupant(&self, room: &str, slot: Slot) -> Result<Option<Booking>, StoreError>;
    /// Applies `writes` in order, each decided as if alone after the ones before it, and makes
    /// them durable before returning; one outcome per write, in order.
    fn write_group(&self, writes: &[Write]) -> Vec<Written>;
    /// Whether reads may block the calling thread for long (a network database): a
    /// [`View`](crate::host::group::View)
    /// then makes each read where blocking is allowed.
    fn reads_block(&self) -> bool {
        false
    }
}
