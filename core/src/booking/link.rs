//! How a booking tool reaches its store without calling it: the tool leaves a [`StoreOp`] on
//! a [`Link`] and awaits; the host performs it and resumes the same handling with the outcome.

use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use super::slot::Slot;
use super::store::{Booking, BookingId, Commit, Holder, NewBooking, RoomId, Store, StoreError};
use crate::seal::Nonce;

/// One store operation a tool waits for: a read, or one of the two irreversible writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreOp {
    /// [`Store::commit`]: book, unless this operation already did or the slot is taken.
    Commit(NewBooking),
    /// [`Store::cancel`]: release booking `id` if `holder` holds it.
    Cancel(BookingId, Holder),
    /// [`Store::get`].
    Get(BookingId),
    /// [`Store::made_by`].
    MadeBy(Holder, Nonce),
    /// [`Store::occupant`].
    Occupant(RoomId, Slot),
    /// [`Store::next_held`].
    #[cfg(feature = "list-bookings")]
    NextHeld(Holder, Slot, RoomId),
}

impl StoreOp {
    /// Whether this is an irreversible write (book, cancel) rather than a read.
    pub fn is_write(&self) -> bool {
        matches!(self, StoreOp::Commit(_) | StoreOp::Cancel(..))
    }

    /// Performs this operation on a synchronous `store`.
    pub fn perform<S: Store + ?Sized>(&self, store: &mut S) -> Outcome {
        match self {
            StoreOp::Commit(new) => Outcome::Commit(store.commit(new)),
            StoreOp::Cancel(id, holder) => Outcome::Booking(store.cancel(*id, holder)),
            StoreOp::Get(id) => Outcome::Booking(store.get(*id)),
            StoreOp::MadeBy(holder, nonce) => Outcome::Booking(store.made_by(holder, nonce)),
            StoreOp::Occupant(room, slot) => Outcome::Booking(store.occupant(room, *slot)),
            #[cfg(feature = "list-bookings")]
            StoreOp::NextHeld(holder, slot, room) => {
                Outcome::Booking(store.next_held(holder, *slot, room))
            }
        }
    }
}

/// What the store answered to a [`StoreOp`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Of [`StoreOp::Commit`].
    Commit(Result<Commit, StoreError>),
    /// Of every other operation: the booking it found or changed, if any.
    Booking(Result<Option<Booking>, StoreError>),
}

/// Where one handling's store operation and its outcome meet, one at a time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exchange {
    state: State,
    /// Counts the operations asked, so an answer can only resume the one it answers.
    asked: u16,
}

/// Where the exchange stands.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum State {
    /// Nothing asked.
    #[default]
    Idle,
    /// The tool asked; the host has not taken the operation yet.
    Asked(StoreOp),
    /// The host took the operation and owes its outcome.
    Taken,
    /// The host answered; the tool has not read the outcome yet.
    Answered(Outcome),
}

impl Exchange {
    /// An exchange with nothing asked.
    pub const fn new() -> Self {
        Exchange {
            state: State::Idle,
            asked: 0,
        }
    }

    /// Leaves `op` for the host.
    fn ask(&mut self, op: StoreOp) {
        self.asked = self.asked.wrapping_add(1);
        self.state = State::Asked(op);
    }

    /// The operation the tool left, for the host to perform (once).
    pub(super) fn take(&mut self) -> Option<(StoreOp, u16)> {
        match core::mem::replace(&mut self.state, State::Taken) {
            State::Asked(op) => Some((op, self.asked)),
            other => {
                self.state = other;
                None
            }
        }
    }

    /// The host's `outcome` of operation number `asked`: ignored unless it is the one waiting.
    pub(super) fn answer(&mut self, asked: u16, outcome: Outcome) {
        if self.asked == asked && self.state == State::Taken {
            self.state = State::Answered(outcome);
        }
    }

    /// The outcome for the tool, if the host gave one; `None` leaves the exchange as it was.
    fn outcome(&mut self) -> Option<Outcome> {
        match core::mem::replace(&mut self.state, State::Idle) {
            State::Answered(o) => Some(o),
            other => {
                self.state = other;
                None
            }
        }
    }
}

/// Where a tool leaves its store operations: shared by the app (which asks) and the host
/// (which answers). The core's own links are [`LocalLink`] (one thread, e.g. a panel) and
/// [`Immediate`] (a synchronous store answering at once); a threaded host implements it over
/// its own lock.
pub trait Link {
    /// Runs `f` on the exchange.
    fn with<R>(&self, f: impl FnOnce(&mut Exchange) -> R) -> R;

    /// Leaves `op` for the host, or answers it at once when this link holds the store.
    fn ask(&self, op: StoreOp) -> Option<Outcome> {
        self.with(|x| x.ask(op));
        None
    }
}

impl<L: Link + ?Sized> Link for &L {
    fn with<R>(&self, f: impl FnOnce(&mut Exchange) -> R) -> R {
        (**self).with(f)
    }
    fn ask(&self, op: StoreOp) -> Option<Outcome> {
        (**self).ask(op)
    }
}

/// A link for one thread: the host answers between two steps of the handling.
pub type LocalLink = RefCell<Exchange>;

impl Link for RefCell<Exchange> {
    fn with<R>(&self, f: impl FnOnce(&mut Exchange) -> R) -> R {
        f(&mut self.borrow_mut())
    }
}

/// A synchronous [`Store`] as a link: every operation is performed when the tool asks, so a
/// handling never waits (the adapter for RAM and flash stores, and for tests).
#[derive(Debug, Default)]
pub struct Immediate<S>(RefCell<S>);

impl<S: Store> Immediate<S> {
    /// `store`, answering at once.
    pub const fn new(store: S) -> Self {
        Immediate(RefCell::new(store))
    }

    /// The store (e.g. to read its bookings between messages).
    pub fn store(&self) -> core::cell::Ref<'_, S> {
        self.0.borrow()
    }
}

impl<S: Store> Link for Immediate<S> {
    fn with<R>(&self, f: impl FnOnce(&mut Exchange) -> R) -> R {
        f(&mut Exchange::new())
    }
    fn ask(&self, op: StoreOp) -> Option<Outcome> {
        Some(op.perform(&mut *self.0.borrow_mut()))
    }
}

/// A tool's way to its store: every method returns what [`Store`]'s would, once the host has
/// answered.
#[derive(Debug, Default)]
pub struct Desk<L> {
    link: L,
}

impl<L: Link> Desk<L> {
    /// Operations go out over `link`.
    pub const fn new(link: L) -> Self {
        Desk { link }
    }

    /// The link (for a host that answers through it).
    pub fn link(&self) -> &L {
        &self.link
    }

    /// [`Store::commit`].
    pub async fn commit(&self, new: &NewBooking) -> Result<Commit, StoreError> {
        match self.ask(StoreOp::Commit(new.clone())).await {
            Outcome::Commit(r) => r,
            Outcome::Booking(_) => Err(StoreError::Io),
        }
    }

    /// [`Store::cancel`].
    pub async fn cancel(
        &self,
        id: BookingId,
        holder: &Holder,
    ) -> Result<Option<Booking>, StoreError> {
        self.booking(StoreOp::Cancel(id, *holder)).await
    }

    /// [`Store::get`].
    pub async fn get(&self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        self.booking(StoreOp::Get(id)).await
    }

    /// [`Store::made_by`].
    pub async fn made_by(
        &self,
        holder: &Holder,
        nonce: &Nonce,
    ) -> Result<Option<Booking>, StoreError> {
        self.booking(StoreOp::MadeBy(*holder, *nonce)).await
    }

    /// [`Store::occupant`].
    pub async fn occupant(&self, room: &str, slot: Slot) -> Result<Option<Booking>, StoreError> {
        let room = RoomId::try_from(room).map_err(|_| StoreError::Io)?;
        self.booking(StoreOp::Occupant(room, slot)).await
    }

    /// [`Store::next_held`].
    #[cfg(feature = "list-bookings")]
    pub async fn next_held(
        &self,
        holder: &Holder,
        slot: Slot,
        room: &str,
    ) -> Result<Option<Booking>, StoreError> {
        let room = RoomId::try_from(room).map_err(|_| StoreError::Io)?;
        self.booking(StoreOp::NextHeld(*holder, slot, room)).await
    }

    async fn booking(&self, op: StoreOp) -> Result<Option<Booking>, StoreError> {
        match self.ask(op).await {
            Outcome::Booking(r) => r,
            Outcome::Commit(_) => Err(StoreError::Io),
        }
    }

    fn ask(&self, op: StoreOp) -> Asking<'_, L> {
        Asking {
            link: &self.link,
            op: Some(op),
        }
    }
}

/// One operation on its way: asked at the first poll, read at the next.
struct Asking<'l, L> {
    link: &'l L,
    op: Option<StoreOp>,
}

impl<L: Link> Future for Asking<'_, L> {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Outcome> {
        if let Some(op) = self.op.take() {
            return match self.link.ask(op) {
                Some(outcome) => Poll::Ready(outcome),
                None => Poll::Pending,
            };
        }
        // Polled again without an answer, the host broke the contract: the operation fails
        // (nothing was done by this handling) rather than waiting forever.
        Poll::Ready(
            self.link
                .with(Exchange::outcome)
                .unwrap_or(Outcome::Booking(Err(StoreError::Io))),
        )
    }
}
