//! One store call for a worker ([`Op`]) and what it returned ([`Reply`]).

use redmark_core::booking::{
    Actor, Booking, BookingId, Commit, Holder, Minute, NewBooking, Occurrence, Resized, RoomId,
    SeriesCommit, SeriesIds, Trail,
};
use redmark_core::seal::Nonce;

/// One store call for a worker.
#[derive(Clone, Debug)]
pub(super) enum Op {
    Commit(NewBooking, Actor),
    Get(BookingId),
    MadeBy(Holder, Nonce),
    NextHeld(Holder, Minute, RoomId),
    NextInRoom(RoomId, Minute),
    Cancel(BookingId, Actor),
    SetEnd(BookingId, Actor, Minute, Minute),
    CheckIn(BookingId, Actor),
    Release(Minute, u16, Actor),
    Trail(BookingId),
    Series(NewBooking, RoomId, Vec<Occurrence>, Actor),
    CancelSeries(BookingId, Minute, Actor),
    NextInSeries(BookingId, BookingId),
}

/// What a call returned.
#[derive(Debug)]
pub(super) enum Reply {
    Commit(Commit),
    Booking(Option<Booking>),
    Resized(Option<Resized>),
    Trail(Trail),
    Series(SeriesCommit),
    Ids(Option<SeriesIds>),
}
