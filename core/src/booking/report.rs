//! What the booking tools answer: each result's text and `structuredContent`, as
//! [`Report`]s written straight into the response.

use core::fmt;

use super::floor::{Floor, Mask, Room};
#[cfg(feature = "public-titles")]
use super::named::{InTheWay, Named};
use super::room_set::RoomBits;
use super::span::Span;
use super::store::{Booking, Status};
use super::zone::{wall_clock, Local, Rfc3339, Zone};
use crate::engine::Report;
#[cfg(all(feature = "public-titles", not(feature = "campus")))]
use crate::limits::MAX_NAMED;
#[cfg(feature = "campus")]
use crate::limits::MAX_OFFERED_ROOMS;
#[cfg(not(feature = "campus"))]
use crate::limits::MAX_ROOMS;
use crate::wire::write::{Num, Writer};

pub(super) struct BookingRef<'a>(pub(super) &'a Booking);

impl fmt::Display for BookingRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bk_{}", Num(self.0.id.into()))
    }
}

pub(super) struct Described<'a, 'r>(
    pub(super) &'a Booking,
    pub(super) Option<&'a Room<'r>>,
    pub(super) &'a dyn Zone,
);

impl fmt::Display for Described<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(r) => f.write_str(r.name)?,
            None => f.write_str(&self.0.new.room)?,
        }
        write!(f, " on {}", Local(self.0.new.span, self.2))?;
        title(f, self.0)
    }
}

/// `, "Design review"` when the booking has a title.
pub(super) fn title(f: &mut dyn fmt::Write, b: &Booking) -> fmt::Result {
    if b.new.title.is_empty() {
        return Ok(());
    }
    f.write_str(", \"")?;
    f.write_str(&b.new.title)?;
    f.write_char('"')
}

pub(super) struct RoomQuestion<'h> {
    pub(super) hint: Option<&'h str>,
    pub(super) named: bool,
    /// The time being booked, shown so the user sees what "thursday" became.
    pub(super) span: Span,
    pub(super) zone: &'h dyn Zone,
}

impl fmt::Display for RoomQuestion<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let span = Local(self.span, self.zone);
        match (self.hint, self.named) {
            (Some(h), true) => {
                f.write_str("'")?;
                f.write_str(h)?;
                write!(
                    f,
                    "' matches more than one room. Which did you mean, for {span}?"
                )
            }
            (Some(h), false) => {
                f.write_str("No room is called '")?;
                f.write_str(h)?;
                write!(f, "'. Which room did you mean, for {span}?")
            }
            (None, _) => write!(f, "Which room should be booked for {span}?"),
        }
    }
}

pub(super) fn write_booking(
    w: &mut Writer<'_>,
    b: &Booking,
    room: Option<&Room<'_>>,
    zone: &dyn Zone,
) {
    w.key("booking");
    write_booking_object(w, b, room, zone);
}

pub(super) fn write_booking_object(
    w: &mut Writer<'_>,
    b: &Booking,
    room: Option<&Room<'_>>,
    zone: &dyn Zone,
) {
    w.begin_object();
    booking_fields(w, b, room, zone);
    if let Some(series) = b.series {
        w.key("series")
            .string_fmt(format_args!("bk_{}", Num(series.into())));
    }
    w.end_object();
}

/// A booking object's members but its series.
pub(super) fn booking_fields(
    w: &mut Writer<'_>,
    b: &Booking,
    room: Option<&Room<'_>>,
    zone: &dyn Zone,
) {
    w.key("id").string_fmt(format_args!("{}", BookingRef(b)));
    w.key("room_id").string(&b.new.room);
    if let Some(r) = room {
        w.key("room_name").string(r.name);
    }
    let span = b.new.span;
    w.key("day")
        .string_fmt(format_args!("{}", Local(span, zone).starts().0));
    w.key("start")
        .string_fmt(format_args!("{}", Rfc3339(span.start, zone)));
    w.key("end")
        .string_fmt(format_args!("{}", Rfc3339(span.end, zone)));
    w.key("minutes").int(span.minutes().into());
    if !b.new.title.is_empty() {
        w.key("title").string(&b.new.title);
    }
    if b.new.attendees > 0 {
        w.key("attendees").int(b.new.attendees.into());
    }
    let status = match b.status {
        Status::Active => "active",
        Status::Cancelled => "cancelled",
        Status::Released => "released",
    };
    w.key("status").string(status);
    if b.checked_in {
        w.key("checked_in").bool(true);
    }
}

pub(super) struct Booked<'a, 'r> {
    pub(super) room: &'a Room<'r>,
    pub(super) booking: &'a Booking,
    pub(super) zone: &'a dyn Zone,
}

impl Report for Booked<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        let span = Local(self.booking.new.span, self.zone);
        write!(f, "Booked {} on {span}", self.room)?;
        title(f, self.booking)?;
        write!(f, " — booking {}.", BookingRef(self.booking))?;
        if self.booking.status == Status::Cancelled {
            f.write_str(
                " It has since been cancelled, so nothing is booked now: to book again, make a \
                 new book_room call.",
            )?;
        }
        Ok(())
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        w.begin_object().key("booked").bool(true);
        write_booking(w, self.booking, Some(self.room), self.zone);
        w.end_object();
    }
}

/// Why nothing was booked: the user said no, or dismissed the whole operation.
pub(super) enum NotBooked {
    Declined,
    Cancelled,
}

impl Report for NotBooked {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        f.write_str(match self {
            NotBooked::Declined => "Not booked: you declined to choose a room.",
            NotBooked::Cancelled => "Cancelled: nothing was booked.",
        })
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        let reason = match self {
            NotBooked::Declined => "declined",
            NotBooked::Cancelled => "cancelled",
        };
        w.begin_object()
            .key("booked")
            .bool(false)
            .key("reason")
            .string(reason)
            .end_object();
    }
}

pub(super) struct Cancelled<'a, 'r> {
    pub(super) booking: &'a Booking,
    pub(super) room: Option<&'a Room<'r>>,
    pub(super) already: bool,
    pub(super) zone: &'a dyn Zone,
}

impl Report for Cancelled<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        let how = if self.already {
            "was already cancelled"
        } else {
            "is cancelled"
        };
        write!(
            f,
            "{} ({}) ",
            BookingRef(self.booking),
            Described(self.booking, self.room, self.zone)
        )?;
        f.write_str(how)?;
        f.write_char('.')
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        w.begin_object();
        write_booking(w, self.booking, self.room, self.zone);
        w.end_object();
    }
}

pub(super) struct UnknownRoom<'a, 'r> {
    pub(super) floor: Floor<'r>,
    pub(super) id: &'a str,
}

impl Report for UnknownRoom<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        f.write_str("There is no room '")?;
        f.write_str(self.id)?;
        f.write_str("'. Room ids: ")?;
        #[cfg(feature = "campus")]
        let rooms = named(self.floor, Mask::ALL);
        #[cfg(not(feature = "campus"))]
        let rooms = self.floor.rooms.iter();
        list(f, rooms.map(|r| r.id))
    }
}

pub(super) struct TooSmall<'r> {
    pub(super) floor: Floor<'r>,
    pub(super) pool: Mask,
    pub(super) people: u16,
}

impl Report for TooSmall<'_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        write!(f, "Too small for {} people: ", Num(self.people.into()))?;
        let mut first = true;
        for r in named(self.floor, self.pool) {
            if !first {
                f.write_str(", ")?;
            }
            write!(f, "{r}")?;
            first = false;
        }
        let bigger = self.floor.mask(|r| r.seats >= self.people);
        if bigger.is_none() {
            f.write_str(". No room on this floor is that large.")
        } else {
            f.write_str(". Rooms large enough: ")?;
            list(f, named(self.floor, bigger).map(|r| r.name))
        }
    }
}

pub(super) struct Taken<'a, 'r> {
    pub(super) floor: Floor<'r>,
    pub(super) room: &'a Room<'r>,
    pub(super) span: Span,
    pub(super) free: Mask,
    /// Other starts free in `room`, the nearest first.
    #[cfg(feature = "offer-instead")]
    pub(super) starts: &'a [Span],
    /// The meeting in the way, when the caller may read its title.
    #[cfg(feature = "public-titles")]
    pub(super) clash: Option<InTheWay>,
}

impl Report for Taken<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        f.write_str(self.room.name)?;
        let span = Local(self.span, self.floor.zone);
        #[cfg(not(feature = "public-titles"))]
        write!(f, " is already booked for some of {span}. ")?;
        #[cfg(feature = "public-titles")]
        write!(
            f,
            " is already booked for some of {span}{}. ",
            Named(self.clash.as_ref())
        )?;
        #[cfg(feature = "offer-instead")]
        let starts = self.starts;
        #[cfg(not(feature = "offer-instead"))]
        let starts: &[Span] = &[];
        if self.free.is_none() && starts.is_empty() {
            return f.write_str("No suitable room is free then; try another time.");
        }
        if !self.free.is_none() {
            f.write_str("Free then: ")?;
            list(f, named(self.floor, self.free).map(|r| r.id))?;
        }
        #[cfg(feature = "offer-instead")]
        other_starts(f, self.room, self.floor, starts)?;
        Ok(())
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        w.begin_object()
            .key("booked")
            .bool(false)
            .key("reason")
            .string("taken");
        #[cfg(feature = "public-titles")]
        if let Some(clash) = &self.clash {
            clash.write(w);
        }
        w.key("free_rooms").begin_array();
        named(self.floor, self.free).for_each(|r| {
            w.string(r.id);
        });
        w.end_array();
        #[cfg(feature = "offer-instead")]
        if !self.starts.is_empty() {
            w.key("free_starts").begin_array();
            for s in self.starts {
                let (_, at) = Local(*s, self.floor.zone).starts();
                w.string_fmt(format_args!("{at}"));
            }
            w.end_array();
        }
        w.end_object();
    }
}

#[cfg(not(feature = "campus"))]
pub(super) struct RoomList<'r> {
    pub(super) floor: Floor<'r>,
    pub(super) shown: Mask,
    pub(super) free: Mask,
    pub(super) span: Option<Span>,
    /// The clock, when the time asked about has already started.
    pub(super) past: Option<u64>,
    /// The meetings in the way the caller may read, by room id.
    #[cfg(feature = "public-titles")]
    pub(super) in_the_way: heapless::Vec<(&'r str, InTheWay), MAX_NAMED>,
}

#[cfg(all(feature = "public-titles", not(feature = "campus")))]
impl RoomList<'_> {
    /// The meeting in room `id`'s way that the caller may read.
    fn in_the_way(&self, id: &str) -> Option<&InTheWay> {
        self.in_the_way
            .iter()
            .find(|(r, _)| *r == id)
            .map(|(_, m)| m)
    }
}

#[cfg(not(feature = "campus"))]
impl Report for RoomList<'_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        if self.shown.is_none() {
            return f.write_str("No room has that many seats.");
        }
        for (i, r) in self.floor.rooms.iter().take(MAX_ROOMS).enumerate() {
            if !self.shown.has(i) {
                continue;
            }
            f.write_str(r.id)?;
            write!(f, " — {r}")?;
            if let (Some(s), None) = (self.span, self.past) {
                let s = Local(s, self.floor.zone);
                let state = if self.free.has(i) { "free" } else { "booked" };
                f.write_str(", ")?;
                f.write_str(state)?;
                write!(f, " on {s}")?;
                #[cfg(feature = "public-titles")]
                write!(f, "{}", Named(self.in_the_way(r.id)))?;
            }
            f.write_char('\n')?;
        }
        match (self.span, self.past) {
            (Some(s), Some(now)) => {
                write!(
                    f,
                    "None is free on {}: it has already started. {}",
                    Local(s, self.floor.zone),
                    Earliest(self.floor, now)
                )
            }
            _ => Ok(()),
        }
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        w.begin_object().key("rooms").begin_array();
        for (i, r) in self.floor.rooms.iter().take(MAX_ROOMS).enumerate() {
            if !self.shown.has(i) {
                continue;
            }
            room_object(w, r);
            if self.span.is_some() {
                w.key("free").bool(self.free.has(i));
            }
            #[cfg(feature = "public-titles")]
            if let Some(m) = self.in_the_way(r.id) {
                m.write(w);
            }
            w.end_object();
        }
        w.end_array().end_object();
    }
}

/// ` Studio B is free from 10:00, 08:00 (give it as start).`, when there are such starts.
#[cfg(feature = "offer-instead")]
fn other_starts(
    f: &mut dyn fmt::Write,
    room: &Room<'_>,
    floor: Floor<'_>,
    starts: &[Span],
) -> fmt::Result {
    for (i, s) in starts.iter().enumerate() {
        let (_, at) = Local(*s, floor.zone).starts();
        if i == 0 {
            write!(f, " {} is free from", room.name)?;
        }
        write!(f, "{} {at}", if i == 0 { "" } else { "," })?;
    }
    if !starts.is_empty() {
        f.write_str(" (give it as start).")?;
    }
    Ok(())
}

/// Opens a room's object in a structured list: its id, name and seats (the caller adds more and
/// closes it).
pub(super) fn room_object(w: &mut Writer<'_>, r: &Room<'_>) {
    w.begin_object()
        .key("id")
        .string(r.id)
        .key("name")
        .string(r.name);
    w.key("seats").int(r.seats.into());
    #[cfg(feature = "campus")]
    room_extras(w, r);
}

/// A room's level and equipment in its structured object, when it has them.
#[cfg(feature = "campus")]
fn room_extras(w: &mut Writer<'_>, r: &Room<'_>) {
    if !r.level.is_empty() {
        w.key("level").string(r.level);
    }
    if !r.equipment.is_empty() {
        w.key("equipment").begin_array();
        for e in r.equipment {
            w.string(e);
        }
        w.end_array();
    }
}

/// The rooms of `mask` an answer names: on a site, the first [`MAX_OFFERED_ROOMS`].
pub(super) fn named<'r>(floor: Floor<'r>, mask: Mask) -> impl Iterator<Item = &'r Room<'r>> {
    #[cfg(feature = "campus")]
    return floor.iter(mask).take(MAX_OFFERED_ROOMS);
    #[cfg(not(feature = "campus"))]
    floor.iter(mask)
}

/// "The earliest bookable start is day=… start=… (Europe/Berlin).", from the floor and the
/// clock.
pub(super) struct Earliest<'r>(pub(super) Floor<'r>, pub(super) u64);

impl fmt::Display for Earliest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(m) = self.0.earliest_start(self.1) else {
            return Ok(());
        };
        let (day, at) = wall_clock(self.0.zone, m);
        write!(f, "The earliest bookable start is day={day} start={at} (")?;
        f.write_str(self.0.zone.name())?;
        f.write_str(").")
    }
}

pub(super) fn list<'s>(
    f: &mut dyn fmt::Write,
    items: impl Iterator<Item = &'s str>,
) -> fmt::Result {
    for (i, s) in items.enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        f.write_str(s)?;
    }
    f.write_char('.')
}
