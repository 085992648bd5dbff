//! `book_room`: asks which room only when the hint fits more than one, and books last.

use heapless::String;

use super::answer::{complete, fail, Text};
#[cfg(feature = "campus")]
use super::campus_report::Unequipped;
use super::floor::{Floor, Here, Mask, Needs, Room};
#[cfg(feature = "offer-instead")]
use super::instead::{instead, Settled};
#[cfg(feature = "public-titles")]
use super::named::{InTheWay, Reader};
use super::report::{Booked, Earliest, NotBooked, RoomQuestion, Taken, TooSmall, UnknownRoom};
use super::room_set::RoomBits;
use super::span::Span;
use super::store::Store;
use super::store::{holder, Commit, NewBooking, StoreError};
use super::tools::BookArgs;
use super::trail::Actor;
use super::vacancy::first_free;
#[cfg(feature = "offer-instead")]
use super::vacancy::free_at;
use super::when::{time_of, Timed};
use super::zone::Local;
use crate::engine::{Call, CallError, Done, Msg, Reply};
use crate::limits::MAX_OFFERED_ROOMS;
use crate::mrtr::Choice;
use crate::typed::{Elicited, Offer, Pick, Round, Sealed};
use redmark_macros::Question;

/// Books the room `call` names or hints at for the time it names, asking which room first if
/// the hint fits more than one.
pub(super) async fn book_room<S: Store>(
    floor: Floor<'_>,
    store: &mut S,
    args: BookArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
    here: Here,
) -> Result<Done, CallError> {
    let (span, reply) = match time_of(floor, &args, call, reply, here)? {
        Timed::Span(span, reply) => (span, reply),
        Timed::Answered(done) => return Ok(done),
    };
    if span.is_past(call.now) {
        // A replayed final retry of a booking this operation made is reported, even once
        // it has started: at most once means the same answer every time.
        if let Some(b) = store
            .made_by(&holder(call.principal), &call.operation())
            .await?
        {
            let room = floor
                .by_id(&b.new.room)
                .ok_or(CallError::Internal("booked room not on the floor"))?;
            return Ok(complete(
                reply,
                &Booked {
                    room,
                    booking: &b,
                    zone: floor.zone,
                },
            ));
        }
        return Ok(fail(
            reply,
            &Msg(format_args!(
                "Not booked: {} has already started. {}",
                Local(span, floor.zone),
                Earliest(floor, call.now)
            )),
        ));
    }
    let title = args.title.unwrap_or("").trim();
    if title.chars().any(char::is_control) {
        return Ok(fail(
            reply,
            &Text("A title is one line of text: no line breaks or control characters."),
        ));
    }
    #[cfg(feature = "series")]
    let rule = match super::series::rule(
        args.repeat,
        args.weekdays,
        args.every,
        args.until,
        args.count,
    ) {
        Ok(rule) => rule,
        Err(why) => return Ok(fail(reply, &Msg(format_args!("{why}")))),
    };
    let people = args.attendees.unwrap_or(0);
    #[cfg(feature = "campus")]
    let needs = Needs {
        people,
        equipment: args.equipment,
    };
    #[cfg(not(feature = "campus"))]
    let needs = Needs::seats(people);
    let fits = floor.mask(|r| needs.fit(r));
    // A series' question answered: the room it asked about.
    #[cfg(feature = "series")]
    let room_id = super::series_book::sealed_series(floor, call)
        .map(|(_, r)| r.id)
        .or(args.room_id);
    #[cfg(not(feature = "series"))]
    let room_id = args.room_id;
    let (room, reply) = match (room_id, args.room_hint) {
        (Some(id), _) => match floor.by_id(id) {
            Some(room) => (room, reply),
            None => return Ok(fail(reply, &UnknownRoom { floor, id })),
        },
        (None, hint) => {
            let named = hint.map_or(Mask::NONE, |h| floor.matching(h));
            // An unknown hint, or none, offers every room that fits.
            let pool = if named.is_none() {
                floor.mask(|_| true)
            } else {
                named
            };
            #[cfg_attr(not(feature = "offer-instead"), allow(unused_mut))]
            let mut candidates = pool.and(fits);
            // Only the candidates free then are offered; all taken, the first is the one
            // whose clash is shown (with what fits instead). Not when this call answers the
            // question: the room picked is booked or refused by the store as it is now, never
            // swapped for the one left free meanwhile (nor read for again).
            #[cfg(feature = "offer-instead")]
            if candidates.count() > 1
                && call
                    .response(<WhichRoom as crate::typed::Question>::KEY)
                    .is_none()
            {
                let free = free_at(floor, store, span, needs, candidates).await?;
                candidates = if free.is_none() {
                    candidates.lowest()
                } else {
                    free
                };
            }
            match candidates.count() {
                #[cfg(feature = "campus")]
                0 if needs.equipment.is_some()
                    && !pool.and(floor.mask(|r| r.seats >= people)).is_none() =>
                {
                    return Ok(fail(reply, &Unequipped { needs }))
                }
                0 => {
                    return Ok(fail(
                        reply,
                        &TooSmall {
                            floor,
                            pool,
                            people,
                        },
                    ))
                }
                1 => match floor.iter(candidates).next() {
                    Some(room) => (room, reply),
                    None => return Err(CallError::Internal("empty candidate set")),
                },
                _ => match choose_room(
                    floor,
                    call,
                    reply,
                    hint,
                    !named.is_none(),
                    candidates,
                    span,
                    here,
                )? {
                    Chosen::Room(room, reply) => (room, reply),
                    Chosen::Answered(done) => return Ok(done),
                },
            }
        }
    };
    #[cfg(feature = "campus")]
    if !super::floor::equipped(room, needs.equipment) {
        return Ok(fail(reply, &Unequipped { needs }));
    }
    if room.seats < people {
        let pool = floor.mask(|r| r.id == room.id);
        return Ok(fail(
            reply,
            &TooSmall {
                floor,
                pool,
                people,
            },
        ));
    }
    #[cfg_attr(not(feature = "offer-instead"), allow(unused_mut))]
    let mut new = NewBooking {
        room: String::try_from(room.id).map_err(|_| CallError::Internal("room id too long"))?,
        span,
        title: String::try_from(title).map_err(|_| CallError::Internal("title too long"))?,
        attendees: people,
        holder: holder(call.principal),
        nonce: call.operation(),
    };
    #[cfg(feature = "series")]
    if let Some(rule) = rule {
        let until = args.until.unwrap_or("");
        return super::series_book::book_series(
            floor, store, call, reply, room, new, rule, until, needs, here,
        )
        .await;
    }
    // The store decides (no read first: a pipelined booking waits for no earlier commit).
    let committed = store.commit_by(&new, &Actor::of_call(call)).await;
    // Taken: offer what fits instead (another room then, another start in this one), and book
    // the pick under the same operation.
    #[cfg(feature = "offer-instead")]
    let (room, span, reply, committed) = match committed {
        Ok(Commit::Taken(_)) => {
            match instead(floor, store, call, reply, room, span, needs, here).await? {
                Settled::Book(other, at, reply) => {
                    new.room = String::try_from(other.id)
                        .map_err(|_| CallError::Internal("room id too long"))?;
                    new.span = at;
                    (
                        other,
                        at,
                        reply,
                        store.commit_by(&new, &Actor::of_call(call)).await,
                    )
                }
                Settled::Answered(done) => return Ok(done),
            }
        }
        other => (room, span, reply, other),
    };
    match committed {
        Ok(Commit::Created(b)) => Ok(complete(
            reply,
            &Booked {
                room,
                booking: &b,
                zone: floor.zone,
            },
        )),
        // The operation had already booked: report that booking, whatever room this
        // replay names.
        Ok(Commit::Replayed(b)) => {
            let room = floor.by_id(&b.new.room).unwrap_or(room);
            Ok(complete(
                reply,
                &Booked {
                    room,
                    booking: &b,
                    zone: floor.zone,
                },
            ))
        }
        #[cfg_attr(not(feature = "public-titles"), allow(unused_variables))]
        Ok(Commit::Taken(ref clash)) => {
            // Only the first offered are named (`report::named`).
            let free = first_free(floor, store, span, needs, Mask::ALL, MAX_OFFERED_ROOMS).await?;
            Ok(fail(
                reply,
                &Taken {
                    floor,
                    room,
                    span,
                    free,
                    #[cfg(feature = "offer-instead")]
                    starts: &[],
                    #[cfg(feature = "public-titles")]
                    clash: InTheWay::of(&floor, clash, &Reader::of(call)),
                },
            ))
        }
        Err(StoreError::Full) => Ok(fail(
            reply,
            &Text("The booking store is full: cancel a booking first."),
        )),
        Err(e) => Err(e.into()),
    }
}

/// Which of the rooms that fit the hint: asked only when more than one does. `room_id` names
/// a room exactly, so a client that cannot be asked is told the candidates and to call again
/// with it.
#[derive(Question)]
#[question(key = "room", stand_in = "room_id")]
struct WhichRoom {
    /// The room to book
    #[field(title = "Room")]
    room_id: Pick<MAX_OFFERED_ROOMS>,
}

/// Asks which room, or reads the answer. The form offers exactly `candidates`.
#[inline(never)]
#[allow(clippy::too_many_arguments)] // the call's, the floor's and the question's, each needed
fn choose_room<'r, 'w, 'b>(
    floor: Floor<'r>,
    call: &Call<'_>,
    reply: Reply<'w, 'b>,
    hint: Option<&str>,
    named: bool,
    candidates: Mask,
    span: Span,
    here: Here,
) -> Result<Chosen<'r, 'w, 'b>, CallError> {
    let rooms: Offer<'_, MAX_OFFERED_ROOMS> = floor
        .iter(candidates)
        .map(|r| Choice {
            value: r.id,
            title: r,
        })
        .collect();
    let message = RoomQuestion {
        hint,
        named,
        span,
        zone: floor.zone,
    };
    let state = (span.start, span.end, here).seal();
    let round = reply.question_offering::<WhichRoom>(call, &message, &state, &rooms)?;
    let (picked, reply) = match round {
        Round::Sent(done) => return Ok(Chosen::Answered(done)),
        Round::Answer(Elicited::Accepted(WhichRoom { room_id }), reply) => (room_id, reply),
        Round::Answer(Elicited::Declined, reply) => {
            return Ok(Chosen::Answered(complete(reply, &NotBooked::Declined)))
        }
        Round::Answer(Elicited::Cancelled, reply) => {
            return Ok(Chosen::Answered(complete(reply, &NotBooked::Cancelled)))
        }
    };
    match floor.iter(candidates).nth(picked.index()) {
        Some(room) => Ok(Chosen::Room(room, reply)),
        None => Err(CallError::Internal("validated answer names no candidate")),
    }
}

/// What [`choose_room`] came to: the room (with the reply still to be given), or the call's
/// answer already.
enum Chosen<'r, 'w, 'b> {
    Room(&'r Room<'r>, Reply<'w, 'b>),
    Answered(Done),
}
