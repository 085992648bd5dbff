//! "Find me a room": when the room asked for is taken, what fits instead — the rooms free for
//! that time with enough seats, and the nearest free starts in the room asked for — offered as
//! a form that says what clashed (or, to a client that cannot be asked, listed in words).

use core::fmt;

use heapless::{String, Vec};

use super::answer::{complete, fail};
use super::floor::Here;
use super::floor::{Floor, Mask, Needs, Room};
#[cfg(feature = "public-titles")]
use super::named::{InTheWay, Named, Reader};
use super::report::{NotBooked, Taken};
use super::room_set::RoomBits;
use super::span::{Minute, Span};
use super::store::{occupant, Store};
use super::vacancy::free_at;
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

/// Other starts in `room`, the same length as `span`, on its day, not past `now`: the nearest
/// first, at most [`MAX_OTHER_STARTS`].
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
    for k in 1..day.minutes() / step {
        for start in [
            span.start.checked_add(k * step),
            span.start.checked_sub(k * step),
        ] {
            let Some(s) = start.and_then(|s| Span::new(s, s + length)) else {
                continue;
            };
            let inside = s.start >= day.start && s.end <= day.end && !s.is_past(now);
            if inside && occupant(store, room, s).await?.is_none() {
                let _ = found.push(s);
                if found.is_full() {
                    return Ok(found);
                }
            }
        }
    }
    Ok(found)
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
    let rooms: Mask = free_at(floor, store, span, needs, Mask::ALL).await?;
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
