//! The host's side of a [`Link`]: run a handling until it finishes or waits for the store
//! ([`step`]), perform the typed [`Pending`] operation however it likes, and [`resume`] it.

use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use super::link::{Link, Outcome, StoreOp};
use super::slot::Slot;
use super::store::{Booking, BookingId, Commit, Holder, NewBooking, RoomId, Store, StoreError};
use crate::seal::Nonce;

/// Where a handling stands after a [`step`] or a [`resume`].
#[must_use = "a pending handling must be answered and resumed"]
pub enum Step<T> {
    /// Finished with this output (for the engine: the [`Handled`](crate::Handled)).
    Done(T),
    /// Waiting for this store operation.
    Pending(Pending),
}

/// The store operation a handling waits for, each with the type of its outcome.
#[must_use = "answer it, then resume the handling with the answer"]
#[derive(Debug)]
pub enum Pending {
    /// Book (irreversible).
    Commit(Ask<NewBooking, Result<Commit, StoreError>>),
    /// Cancel booking `.0` if holder `.1` holds it (irreversible).
    Cancel(Ask<(BookingId, Holder), Result<Option<Booking>, StoreError>>),
    /// Read one booking by id.
    Get(Ask<BookingId, Result<Option<Booking>, StoreError>>),
    /// Read the booking a holder's operation made.
    MadeBy(Ask<(Holder, Nonce), Result<Option<Booking>, StoreError>>),
    /// Read who holds a room at a slot.
    Occupant(Ask<(RoomId, Slot), Result<Option<Booking>, StoreError>>),
    /// Read a holder's first active booking after a slot and room.
    #[cfg(feature = "list-bookings")]
    NextHeld(Ask<(Holder, Slot, RoomId), Result<Option<Booking>, StoreError>>),
}

/// One operation `Q` waiting for its outcome `A`; only [`Ask::answer`] makes the [`Answered`]
/// that resumes the handling, so an outcome of the wrong type does not compile.
#[must_use = "answer it, then resume the handling with the answer"]
#[derive(Debug)]
pub struct Ask<Q, A> {
    op: Q,
    asked: u16,
    outcome: PhantomData<fn(A)>,
}

/// An outcome for the operation it was made from, to hand to [`resume`].
#[must_use = "resume the handling with it"]
#[derive(Debug)]
pub struct Answered {
    outcome: Outcome,
    asked: u16,
}

impl<Q, A: Into<Outcome>> Ask<Q, A> {
    fn new(op: Q, asked: u16) -> Self {
        Ask {
            op,
            asked,
            outcome: PhantomData,
        }
    }

    /// What is asked.
    pub fn op(&self) -> &Q {
        &self.op
    }

    /// The store's outcome of this operation.
    pub fn answer(self, outcome: A) -> Answered {
        Answered {
            outcome: outcome.into(),
            asked: self.asked,
        }
    }
}

impl From<Result<Commit, StoreError>> for Outcome {
    fn from(r: Result<Commit, StoreError>) -> Self {
        Outcome::Commit(r)
    }
}

impl From<Result<Option<Booking>, StoreError>> for Outcome {
    fn from(r: Result<Option<Booking>, StoreError>) -> Self {
        Outcome::Booking(r)
    }
}

impl Pending {
    fn new(op: StoreOp, asked: u16) -> Self {
        match op {
            StoreOp::Commit(new) => Pending::Commit(Ask::new(new, asked)),
            StoreOp::Cancel(id, h) => Pending::Cancel(Ask::new((id, h), asked)),
            StoreOp::Get(id) => Pending::Get(Ask::new(id, asked)),
            StoreOp::MadeBy(h, n) => Pending::MadeBy(Ask::new((h, n), asked)),
            StoreOp::Occupant(r, s) => Pending::Occupant(Ask::new((r, s), asked)),
            #[cfg(feature = "list-bookings")]
            StoreOp::NextHeld(h, s, r) => Pending::NextHeld(Ask::new((h, s, r), asked)),
        }
    }

    /// Whether the operation is an irreversible write (book, cancel) rather than a read.
    pub fn is_write(&self) -> bool {
        matches!(self, Pending::Commit(_) | Pending::Cancel(_))
    }

    /// The operation, as one value (e.g. to send to another thread), and the key that
    /// turns its outcome back into an [`Answered`] ([`Asked::answer`]).
    pub fn into_op(self) -> (StoreOp, Asked) {
        let (op, asked) = match self {
            Pending::Commit(a) => (StoreOp::Commit(a.op), a.asked),
            Pending::Cancel(a) => (StoreOp::Cancel(a.op.0, a.op.1), a.asked),
            Pending::Get(a) => (StoreOp::Get(a.op), a.asked),
            Pending::MadeBy(a) => (StoreOp::MadeBy(a.op.0, a.op.1), a.asked),
            Pending::Occupant(a) => (StoreOp::Occupant(a.op.0, a.op.1), a.asked),
            #[cfg(feature = "list-bookings")]
            Pending::NextHeld(a) => (StoreOp::NextHeld(a.op.0, a.op.1, a.op.2), a.asked),
        };
        let write = op.is_write();
        (op, Asked { asked, write })
    }

    /// Performs the operation on a synchronous `store` at once.
    pub fn answer_with<S: Store + ?Sized>(self, store: &mut S) -> Answered {
        let (op, asked) = self.into_op();
        Answered {
            outcome: op.perform(store),
            asked: asked.asked,
        }
    }
}

/// The key of an operation taken with [`Pending::into_op`]: it answers that operation only.
#[must_use = "answer the operation it was taken from"]
#[derive(Debug)]
pub struct Asked {
    asked: u16,
    write: bool,
}

impl Asked {
    /// The `outcome` of the operation, which must be of its kind: a [`Outcome::Commit`] for a
    /// commit, a [`Outcome::Booking`] for anything else (a mismatch fails the operation with
    /// [`StoreError::Io`] rather than resume it with the wrong value).
    pub fn answer(self, outcome: Outcome) -> Answered {
        let fits = matches!(
            (&outcome, self.write),
            (Outcome::Booking(_), _) | (Outcome::Commit(_), true)
        );
        Answered {
            outcome: if fits {
                outcome
            } else {
                Outcome::Booking(Err(StoreError::Io))
            },
            asked: self.asked,
        }
    }
}

/// Runs `handling` until it finishes or waits for the store operation it left on `link`.
pub fn step<F: Future, L: Link + ?Sized>(mut handling: Pin<&mut F>, link: &L) -> Step<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    match handling.as_mut().poll(&mut cx) {
        Poll::Ready(out) => Step::Done(out),
        Poll::Pending => match link.with(|x| x.take()) {
            Some((op, asked)) => Step::Pending(Pending::new(op, asked)),
            // Waiting for nothing the host can give: polled again, the handling's store call
            // fails and it finishes.
            None => step_again(handling),
        },
    }
}

/// Hands `answered` to the handling waiting on `link` and runs it to its next step.
pub fn resume<F: Future, L: Link + ?Sized>(
    handling: Pin<&mut F>,
    link: &L,
    answered: Answered,
) -> Step<F::Output> {
    link.with(|x| x.answer(answered.asked, answered.outcome));
    step(handling, link)
}

/// Drives `handling` to its end, answering every operation from the synchronous `store`: the
/// whole host of a panel whose store is in its own flash.
pub fn run<F: Future, L: Link + ?Sized, S: Store + ?Sized>(
    mut handling: Pin<&mut F>,
    link: &L,
    store: &mut S,
) -> F::Output {
    let mut at = step(handling.as_mut(), link);
    loop {
        match at {
            Step::Done(out) => return out,
            Step::Pending(p) => at = resume(handling.as_mut(), link, p.answer_with(store)),
        }
    }
}

/// A handling that waited with nothing asked, polled until it ends (its store calls fail).
fn step_again<F: Future>(mut handling: Pin<&mut F>) -> Step<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = handling.as_mut().poll(&mut cx) {
            return Step::Done(out);
        }
    }
}
