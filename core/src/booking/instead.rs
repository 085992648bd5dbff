//! "Find me a room": when the room asked for is taken, what fits instead — the rooms free for
//! that time with enough seats, and the nearest free starts in the room asked for — offered as
//! a form that says what clashed (or, to a client that cannot be asked, listed in words).

use core::fmt;
use core::ops::Range;

use heapless::{String, Vec};

use super::answer::{complete, fail};
use super::floor::Here;
use super::floor::{Floor, Mask, Needs, Room};
#[cfg(feature = "public-titles")]
use super::named::{InTheWay, Named, Reader};
use super::report::{NotBooked, Taken};
use super::room_set::RoomBits;
use super::span::{Minute, Span};
#[cfg(feature = "public-titles")]
use super::store::occupant;
use super::store::Store;
use super::vacancy::first_free;
use super::when::within_hours;
use super::zone::{day_span, Local};
use crate::engine::{Call, CallError, Done, Msg, Reply};
use crate::limits::MAX_OFFERED_ROOMS;
use crate::mrtr::Choice;
use crate::typed::{Elicited, Offer, Pick, Round, Sealed};
use redmark_macros::Question;

/// The most other starts in the room asked for that are offered.
pub const MAX_OTHER_STARTS: usize = 3;

/// What may be offered: the first rooms free, and the other starts.
const MAX_INSTEAD: usize = MAX_OFFERED_ROOMS + MAX_OTHER_STARTS;

/// What to book instead of a room that is taken: asked only then. No argument stands in (it
/// offers rooms and other starts at once); a client that cannot be asked is never asked it:
/// [`instead`] lists the same in words, the booking not made.
#[derive(Question)]
#[question(key = "instead")]
struct Instead {
    /// Free instead
    #[field(title = "Book instead")]
    choice: Pick<MAX_INSTEAD>,
}

/// What a taken room came to: a room and span to book (the reply still to be given), or the
/// call's answer.
pub(super) enum Settled<'r, 'w, 'b> {
    Book(&'r Room<'r>, Span, Reply<'w, 'b>),
    Answered(Done),
}

/// Other starts in `room`, the same length as `span`, on its day within the opening hours, not
/// past `now`: the nearest first, at most [`MAX_OTHER_STARTS`].
async fn other_starts<S: Store>(
    floor: Floor<'_>,
    store: &mut S,
    room: &str,
    span: Span,
    now: u64,
) -> Result<Vec<Span, MAX_OTHER_STARTS>, CallError> {
    let day = day_span(floor.zone, Local(span, floor.zone).starts().0);
    let (step, length) = (Minute::from(floor.grid.max(1)), span.minutes());
    let mut found = Vec::new();
    let mut seen = Seen::default();
    for k in 1..day.minutes() / step {
        for start in [
            span.start.checked_add(k * step),
            span.start.checked_sub(k * step),
        ] {
            let Some(s) = start.and_then(|s| Span::new(s, s + length)) else {
                continue;
            };
            let inside = s.start >= day.start
                && s.end <= day.end
                && !s.is_past(now)
                && within_hours(floor, s);
            if inside && seen.free(store, room, s).await? {
                let _ = found.push(s);
                if found.is_full() {
                    return Ok(found);
                }
            }
        }
    }
    Ok(found)
}

/// Most busy and most free stretches of a room [`Seen`] keeps each (more are read again).
const SEEN: usize = 8;

/// What the reads of one room have shown so far: stretches a booking holds, and stretches
/// free (from where a read began to the next booking's start), so a start they settle costs
/// no read.
#[derive(Default)]
struct Seen {
    busy: Vec<Span, SEEN>,
    free: Vec<Range<Minute>, SEEN>,
}

impl Seen {
    /// Whether nobody holds `room` for any of `s`: from what was seen, else read.
    async fn free<S: Store>(
        &mut self,
        store: &mut S,
        room: &str,
        s: Span,
    ) -> Result<bool, CallError> {
        if self.busy.iter().any(|b| b.overlaps(&s)) {
            return Ok(false);
        }
        if self
            .free
            .iter()
            .any(|f| f.start <= s.start && s.end <= f.end)
        {
            return Ok(true);
        }
        // The first booking ending after the start: none of the room is held before it.
        let next = store.next_in_room(room, s.start).await?;
        let until = next.as_ref().map_or(Minute::MAX, |b| b.new.span.start);
        if s.start < until {
            let _ = self.free.push(s.start..until);
        }
        if let Some(b) = &next {
            let _ = self.busy.push(b.new.span);
        }
        Ok(s.end <= until)
    }
}

/// An offered room (for the span asked for), or another start in the room asked for.
struct Alternative<'a, 'r>(Option<&'a Room<'r>>, Span, Floor<'r>);

impl fmt::Display for Alternative<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(room) => write!(f, "{room}"),
            None => write!(f, "{}", Local(self.1, self.2.zone)),
        }
    }
}

/// Offers what fits instead of `room`, which is taken for some of `span`: the free rooms with
/// what `needs` asks, and the nearest free starts in `room` (and the meeting in the way, when
/// the caller may read its title).
#[allow(clippy::too_many_arguments)] // the call's, the room's and what it needs, each needed
pub(super) async fn instead<'r, 'w, 'b, S: Store>(
    floor: Floor<'r>,
    store: &mut S,
    call: &Call<'_>,
    reply: Reply<'w, 'b>,
    room: &'r Room<'r>,
    span: Span,
    needs: Needs<'_>,
    here: Here,
) -> Result<Settled<'r, 'w, 'b>, CallError> {
    // The meeting in the way, read first (while the least is held across the read).
    #[cfg(feature = "public-titles")]
    let in_the_way = match occupant(store, room.id, span).await? {
        Some(b) => InTheWay::of(&floor, &b, &Reader::of(call)),
        None => None,
    };
    // Only the first offered are named, in the form or in words (`report::named`).
    let rooms: Mask = first_free(floor, store, span, needs, Mask::ALL, MAX_OFFERED_ROOMS).await?;
    let starts = other_starts(floor, store, room.id, span, call.now).await?;
    let mut values: Vec<String<6>, MAX_OTHER_STARTS> = Vec::new();
    for s in &starts {
        let mut v = String::new();
        let at = Local(*s, floor.zone).starts().1;
        let _ = fmt::write(&mut v, format_args!("@{at}"));
        let _ = values.push(v);
    }
    let shown: Vec<Alternative<'_, 'r>, MAX_INSTEAD> = floor
        .iter(rooms)
        .take(MAX_OFFERED_ROOMS)
        .map(|r| Alternative(Some(r), span, floor))
        .chain(starts.iter().map(|s| Alternative(None, *s, floor)))
        .collect();
    if shown.is_empty() || !call.caps.elicitation_form {
        let taken = Taken {
            floor,
            room,
            span,
            free: rooms,
            starts: &starts,
            #[cfg(feature = "public-titles")]
            clash: in_the_way,
        };
        return Ok(Settled::Answered(fail(reply, &taken)));
    }
    #[cfg(feature = "public-titles")]
    let named = Named(in_the_way.as_ref());
    #[cfg(not(feature = "public-titles"))]
    let named = "";
    let clash = Msg(format_args!(
        "{} is already booked for some of {}{named}.",
        room.name,
        Local(span, floor.zone)
    ));
    let offer: Offer<'_, MAX_INSTEAD> = shown
        .iter()
        .enumerate()
        .map(|(i, o)| Choice {
            value: match o.0 {
                Some(r) => r.id,
                None => values
                    .get(i - (shown.len() - starts.len()))
                    .map_or("", |v| v.as_str()),
            },
            title: o as &dyn fmt::Display,
        })
        .collect();
    let message = Msg(format_args!("{clash} Book one of these instead?"));
    let state = (span.start, span.end, here).seal();
    match reply.question_offering::<Instead>(call, &message, &state, &offer)? {
        Round::Sent(done) => Ok(Settled::Answered(done)),
        Round::Answer(Elicited::Accepted(Instead { choice }), reply) => {
            match shown.get(choice.index()) {
                Some(Alternative(Some(other), s, _)) => Ok(Settled::Book(other, *s, reply)),
                Some(Alternative(None, s, _)) => Ok(Settled::Book(room, *s, reply)),
                None => Err(CallError::Internal("validated answer names no option")),
            }
        }
        Round::Answer(Elicited::Declined, reply) => {
            Ok(Settled::Answered(complete(reply, &NotBooked::Declined)))
        }
        Round::Answer(Elicited::Cancelled, reply) => {
            Ok(Settled::Answered(complete(reply, &NotBooked::Cancelled)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::booking::{Actor, BookingId, MemStore, NewBooking};
    use crate::engine::poll_once;

    /// The atrium's booking from `start` to `end` (minutes), operation `n`.
    fn booking(start: Minute, end: Minute, n: u8) -> NewBooking {
        NewBooking {
            room: String::try_from("atrium").unwrap(),
            span: Span::new(start, end).unwrap(),
            title: String::new(),
            attendees: 0,
            holder: [1; 8],
            nonce: [n; 8],
        }
    }

    fn book(store: &mut MemStore<8>, new: &NewBooking) -> BookingId {
        let by = Actor::holder(new.holder);
        match poll_once(store.commit_by(new, &by)).unwrap().unwrap() {
            crate::booking::Commit::Created(b) => b.id,
            other => panic!("not booked: {other:?}"),
        }
    }

    fn free(seen: &mut Seen, store: &mut MemStore<8>, start: Minute, end: Minute) -> bool {
        let s = Span::new(start, end).unwrap();
        poll_once(seen.free(store, "atrium", s)).unwrap().unwrap()
    }

    #[test]
    fn a_start_settled_by_what_was_read_is_not_read_again() {
        const T: Minute = 29_000_000;
        let mut store = MemStore::<8>::new();
        let id = book(&mut store, &booking(T + 60, T + 120, 1));
        let mut seen = Seen::default();
        // Read: free up to T+60, then the booking.
        assert!(free(&mut seen, &mut store, T, T + 30));
        assert!(!free(&mut seen, &mut store, T + 45, T + 75));
        // What the store holds now is not read again: the booking cancelled still holds its
        // stretch, and one made in the stretch read as free does not take it.
        poll_once(store.cancel(id, &Actor::holder([1; 8])))
            .unwrap()
            .unwrap();
        book(&mut store, &booking(T + 15, T + 30, 2));
        assert!(!free(&mut seen, &mut store, T + 90, T + 100));
        assert!(free(&mut seen, &mut store, T + 15, T + 45));
        // A start neither covers is read.
        assert!(free(&mut seen, &mut store, T + 120, T + 150));
        assert!(!free(&mut seen, &mut store, T - 15, T + 20));
    }
}
