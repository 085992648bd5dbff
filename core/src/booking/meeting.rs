//! A meeting's life after it is booked: `extend_booking` (a meeting that runs on, while the
//! room is free) and `end_booking` (one that ends early gives the rest back), each one
//! [`Store::set_end`].

use core::fmt;

use super::answer::{complete, fail, Text};
use super::floor::{Floor, Mask, Needs};
use super::read::yours;
use super::report::{list, named, write_booking, BookingRef, Described};
use super::room_set::RoomBits;
use super::span::{minute_of, Minute, Span};
use super::store::{holder, Booking, Resized, Status, Store};
use super::tools::{BookingArgs, ExtendArgs};
use super::trail::Actor;
use super::vacancy::free_at;
use super::zone::{wall, wall_clock, Local};
use crate::engine::{Call, CallError, Done, Msg, Reply, Report};
use crate::wire::write::{Num, Writer};

/// The caller's booking `id` and the building its room is in, or the call's answer.
pub(super) async fn booking_and_floor<'a, 'r, S: Store>(
    floors: &[Floor<'r>],
    store: &mut S,
    id: &'a str,
    call: &Call<'_>,
    what: &'a str,
) -> Result<Result<(Booking, Floor<'r>), Why<'a>>, CallError> {
    let b = yours(store, id, &holder(call.principal)).await?;
    let floor = b
        .as_ref()
        .and_then(|b| floors.iter().find(|f| f.by_id(&b.new.room).is_some()));
    Ok(match (b, floor) {
        (Some(b), Some(f)) if b.status == Status::Active => Ok((b, *f)),
        (Some(b), _) if b.status == Status::Cancelled => Err(Why::Cancelled(b.id, what)),
        (Some(b), _) if b.status == Status::Released => Err(Why::Released(b.id, what)),
        (Some(b), _) => Err(Why::Gone(b.new.room)),
        (None, _) => Err(Why::NotYours(Id(id), what)),
    })
}

/// A booking id as the caller gave it.
pub(super) struct Id<'a>(pub(super) &'a str);

/// Why a booking cannot be changed.
pub(super) enum Why<'a> {
    NotYours(Id<'a>, &'a str),
    Cancelled(u32, &'a str),
    Released(u32, &'a str),
    Gone(super::store::RoomId),
}

impl Report for Why<'_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        match self {
            Why::NotYours(id, what) => {
                write!(
                    f,
                    "There is no booking '{}' of yours to {what}.",
                    Text(id.0)
                )
            }
            Why::Cancelled(id, what) => write!(
                f,
                "bk_{} is cancelled: there is nothing to {what}.",
                Num((*id).into())
            ),
            Why::Released(id, what) => write!(
                f,
                "bk_{} was released (not checked in): there is nothing to {what}.",
                Num((*id).into())
            ),
            Why::Gone(room) => write!(
                f,
                "The room of that booking ({}) is no longer on this floor.",
                Text(room)
            ),
        }
    }
}

/// Extends the caller's booking by `minutes`, if the room is free for them.
pub(super) async fn extend_booking<S: Store>(
    floors: &[Floor<'_>],
    store: &mut S,
    args: ExtendArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    let (b, floor) = match booking_and_floor(floors, store, args.booking_id, call, "extend").await?
    {
        Ok(found) => found,
        Err(why) => return Ok(fail(reply, &why)),
    };
    let (span, zone) = (b.new.span, floor.zone);
    if minute_of(call.now).is_some_and(|now| span.end <= now) {
        let end = Local(span, zone).ends_at();
        let why = Msg(format_args!(
            "{} ended at {end}: book the room again instead.",
            BookingRef(&b)
        ));
        return Ok(fail(reply, &why));
    }
    let grid = floor.grid.max(1);
    if !args.minutes.is_multiple_of(grid) {
        let why = Msg(format_args!(
            "This floor books in steps of {} minutes: give minutes as a multiple of {}.",
            Num(grid.into()),
            Num(grid.into())
        ));
        return Ok(fail(reply, &why));
    }
    let to = span.end + Minute::from(args.minutes);
    let most = Minute::from(floor.max_minutes);
    if to - span.start > most {
        let why = Msg(format_args!(
            "A booking lasts at most {} minutes on this floor: {} may grow by {} more at most.",
            Num(most.into()),
            BookingRef(&b),
            Num(most.saturating_sub(span.minutes()).into())
        ));
        return Ok(fail(reply, &why));
    }
    #[cfg(feature = "opening-hours")]
    if let Some((_, close)) = floor.open {
        let starts = wall(zone, span.start);
        if wall(zone, to) > starts - starts % (24 * 60) + Minute::from(close.0) {
            let why = Msg(format_args!(
                "This floor closes at {close}: {} may run until then at the latest.",
                BookingRef(&b)
            ));
            return Ok(fail(reply, &why));
        }
    }
    match store
        .set_end(b.id, &Actor::of_call(call), span.end, to)
        .await?
    {
        Some(Resized::Moved(now)) => Ok(complete(reply, &Changed(&now, floor, How::Extended))),
        Some(Resized::Taken(other)) => {
            let added = Span::new(span.end, to).ok_or(CallError::Internal("empty extension"))?;
            let others = floor.mask(|r| r.id != b.new.room.as_str());
            let free = free_at(floor, store, added, Needs::seats(0), others).await?;
            let refused = NotExtended {
                booking: &b,
                next_start: other.new.span.start,
                floor,
                free,
            };
            Ok(fail(reply, &refused))
        }
        Some(Resized::Changed(now)) => Ok(fail(reply, &Moved(&now, floor))),
        None => Ok(fail(reply, &Why::NotYours(Id(args.booking_id), "extend"))),
    }
}

/// Ends the caller's booking now (at the floor's next step), giving the rest of it back.
pub(super) async fn end_booking<S: Store>(
    floors: &[Floor<'_>],
    store: &mut S,
    args: BookingArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    let (b, floor) = match booking_and_floor(floors, store, args.booking_id, call, "end").await? {
        Ok(found) => found,
        Err(why) => return Ok(fail(reply, &why)),
    };
    let (span, zone) = (b.new.span, floor.zone);
    let Some(now) = minute_of(call.now) else {
        let why = Text("The server's clock is not set, so it cannot tell what \"now\" is.");
        return Ok(fail(reply, &why));
    };
    if now < span.start {
        let why = Msg(format_args!(
            "{} has not started yet (it starts at {}): to give it back, cancel it with \
             cancel_booking.",
            BookingRef(&b),
            Local(span, zone).starts().1
        ));
        return Ok(fail(reply, &why));
    }
    if now >= span.end {
        return Ok(complete(reply, &Changed(&b, floor, How::Over)));
    }
    // The next step of the floor's grid on its wall clock, and never before the first.
    let grid = Minute::from(floor.grid.max(1));
    let w = wall(zone, now);
    let to = (now + (grid - w % grid) % grid).max(span.start + grid);
    if to >= span.end {
        return Ok(complete(reply, &Changed(&b, floor, How::Over)));
    }
    match store
        .set_end(b.id, &Actor::of_call(call), span.end, to)
        .await?
    {
        Some(Resized::Moved(now)) => Ok(complete(reply, &Changed(&now, floor, How::Ended))),
        Some(Resized::Changed(now)) => Ok(fail(reply, &Moved(&now, floor))),
        Some(Resized::Taken(_)) => Err(CallError::Internal("an earlier end was taken")),
        None => Ok(fail(reply, &Why::NotYours(Id(args.booking_id), "end"))),
    }
}

/// How a booking came to end where it does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum How {
    /// Later, as asked.
    Extended,
    /// Earlier, the rest given back.
    Ended,
    /// Unchanged: it is over by then anyway.
    Over,
}

/// A booking as a change left it, and how.
struct Changed<'a, 'r>(&'a Booking, Floor<'r>, How);

impl Report for Changed<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        let Changed(b, floor, how) = self;
        let (room, zone) = (floor.by_id(&b.new.room), floor.zone);
        let end = Local(b.new.span, zone).ends_at();
        write!(f, "{} ({}) ", BookingRef(b), Described(b, room, zone))?;
        match how {
            How::Extended => write!(f, "is extended: it now ends at {end}."),
            How::Ended => write!(f, "ends at {end}: the room is free from then."),
            How::Over => write!(f, "ends at {end} anyway: there is nothing to give back."),
        }
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        let Changed(b, floor, how) = self;
        w.begin_object().key("changed").bool(*how != How::Over);
        write_booking(w, b, floor.by_id(&b.new.room), floor.zone);
        w.end_object();
    }
}

/// The booking changed since the caller read it: as it now stands.
struct Moved<'a, 'r>(&'a Booking, Floor<'r>);

impl Report for Moved<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        let Moved(b, floor) = self;
        let (room, zone) = (floor.by_id(&b.new.room), floor.zone);
        write!(
            f,
            "{} changed meanwhile and is now {}: nothing was changed; ask again for the end you \
             want.",
            BookingRef(b),
            Described(b, room, zone)
        )
    }
}

/// An extension the room has no time for: until when it is free, and the rooms free then.
struct NotExtended<'a, 'r> {
    booking: &'a Booking,
    next_start: Minute,
    floor: Floor<'r>,
    free: Mask,
}

impl Report for NotExtended<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        let (b, floor) = (self.booking, self.floor);
        let span = b.new.span;
        let room = floor
            .by_id(&b.new.room)
            .map_or(b.new.room.as_str(), |r| r.name);
        write!(
            f,
            "Not extended: {room} is booked from {}. ",
            wall_clock(floor.zone, self.next_start).1
        )?;
        let spare = self.next_start.saturating_sub(span.end);
        if spare > 0 {
            write!(
                f,
                "{} may run until then (extend by up to {} minutes). ",
                BookingRef(b),
                Num(spare.into())
            )?;
        }
        if !self.free.is_none() {
            f.write_str("Free for the added time: ")?;
            list(f, named(floor, self.free).map(|r| r.id))?;
        }
        Ok(())
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        let (b, floor) = (self.booking, self.floor);
        w.begin_object()
            .key("changed")
            .bool(false)
            .key("reason")
            .string("taken");
        w.key("free_minutes")
            .int(self.next_start.saturating_sub(b.new.span.end).into());
        w.key("free_rooms").begin_array();
        named(floor, self.free).for_each(|r| {
            w.string(r.id);
        });
        w.end_array();
        write_booking(w, b, floor.by_id(&b.new.room), floor.zone);
        w.end_object();
    }
}
