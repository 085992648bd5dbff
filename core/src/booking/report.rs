//! What the booking tools answer: each result's text and `structuredContent`, as
//! [`Report`]s written straight into the response.

use core::fmt;

use super::floor::{Floor, Mask, Room};
#[cfg(feature = "day-schedule")]
use super::slot::Day;
use super::slot::Slot;
use super::store::{Booking, Status};
use crate::engine::Report;
use crate::limits::MAX_ROOMS;
#[cfg(feature = "day-schedule")]
use crate::wire::write::ZeroPadded;
use crate::wire::write::{Num, Writer};

pub(super) struct BookingRef<'a>(pub(super) &'a Booking);

impl fmt::Display for BookingRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bk_{}", Num(self.0.id.into()))
    }
}

pub(super) struct Described<'a, 'r>(pub(super) &'a Booking, pub(super) Option<&'a Room<'r>>);

impl fmt::Display for Described<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(r) => f.write_str(r.name)?,
            None => f.write_str(&self.0.new.room)?,
        }
        write!(f, " on {}", self.0.new.slot)
    }
}

pub(super) struct RoomQuestion<'h> {
    pub(super) hint: Option<&'h str>,
    pub(super) named: bool,
}

impl fmt::Display for RoomQuestion<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.hint, self.named) {
            (Some(h), true) => {
                f.write_str("'")?;
                f.write_str(h)?;
                f.write_str("' matches more than one room. Which did you mean?")
            }
            (Some(h), false) => {
                f.write_str("No room is called '")?;
                f.write_str(h)?;
                f.write_str("'. Which room did you mean?")
            }
            (None, _) => f.write_str("Which room should be booked?"),
        }
    }
}

fn write_booking(w: &mut Writer<'_>, b: &Booking, room: Option<&Room<'_>>) {
    w.key("booking");
    write_booking_object(w, b, room);
}

fn write_booking_object(w: &mut Writer<'_>, b: &Booking, room: Option<&Room<'_>>) {
    w.begin_object();
    w.key("id").string_fmt(format_args!("{}", BookingRef(b)));
    w.key("room_id").string(&b.new.room);
    if let Some(r) = room {
        w.key("room_name").string(r.name);
    }
    w.key("day")
        .string_fmt(format_args!("{}", b.new.slot.day))
        .key("hour")
        .int(b.new.slot.hour.into());
    if b.new.attendees > 0 {
        w.key("attendees").int(b.new.attendees.into());
    }
    let status = if b.status == Status::Active {
        "active"
    } else {
        "cancelled"
    };
    w.key("status").string(status).end_object();
}

pub(super) struct Booked<'a, 'r> {
    pub(super) room: &'a Room<'r>,
    pub(super) booking: &'a Booking,
}

impl Report for Booked<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        write!(
            f,
            "Booked {} on {} — booking {}.",
            self.room,
            self.booking.new.slot,
            BookingRef(self.booking)
        )?;
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
        write_booking(w, self.booking, Some(self.room));
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
            Described(self.booking, self.room)
        )?;
        f.write_str(how)?;
        f.write_char('.')
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        w.begin_object();
        write_booking(w, self.booking, self.room);
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
        list(f, self.floor.rooms.iter().map(|r| r.id))
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
        for r in self.floor.iter(self.pool) {
            if !first {
                f.write_str(", ")?;
            }
            write!(f, "{r}")?;
            first = false;
        }
        let bigger = self.floor.mask(|r| r.seats >= self.people);
        if bigger == 0 {
            f.write_str(". No room on this floor is that large.")
        } else {
            f.write_str(". Rooms large enough: ")?;
            list(f, self.floor.iter(bigger).map(|r| r.name))
        }
    }
}

pub(super) struct Taken<'a, 'r> {
    pub(super) floor: Floor<'r>,
    pub(super) room: &'a Room<'r>,
    pub(super) slot: Slot,
    pub(super) free: Mask,
}

impl Report for Taken<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        f.write_str(self.room.name)?;
        write!(f, " is already booked on {}. ", self.slot)?;
        if self.free == 0 {
            f.write_str("No suitable room is free at that hour; try another hour.")
        } else {
            f.write_str("Free at that hour: ")?;
            list(f, self.floor.iter(self.free).map(|r| r.id))
        }
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
        w.key("free_rooms").begin_array();
        self.floor.iter(self.free).for_each(|r| {
            w.string(r.id);
        });
        w.end_array().end_object();
    }
}

pub(super) struct RoomList<'r> {
    pub(super) floor: Floor<'r>,
    pub(super) shown: Mask,
    pub(super) free: Mask,
    pub(super) slot: Option<Slot>,
    /// The clock, when the slot asked about has already started.
    pub(super) past: Option<u64>,
}

impl Report for RoomList<'_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        if self.shown == 0 {
            return f.write_str("No room has that many seats.");
        }
        for (i, r) in self.floor.rooms.iter().take(MAX_ROOMS).enumerate() {
            if self.shown & 1 << i == 0 {
                continue;
            }
            f.write_str(r.id)?;
            write!(f, " — {r}")?;
            if let (Some(s), None) = (self.slot, self.past) {
                let state = if self.free & 1 << i != 0 {
                    "free"
                } else {
                    "booked"
                };
                f.write_str(", ")?;
                f.write_str(state)?;
                write!(f, " on {s}")?;
            }
            f.write_char('\n')?;
        }
        match (self.slot, self.past) {
            (Some(s), Some(now)) => {
                write!(
                    f,
                    "None is free on {s}: it has already started. {}",
                    Earliest(now)
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
            if self.shown & 1 << i == 0 {
                continue;
            }
            room_object(w, r);
            if self.slot.is_some() {
                w.key("free").bool(self.free & 1 << i != 0);
            }
            w.end_object();
        }
        w.end_array().end_object();
    }
}

/// The hours of one day each room is booked (`day_schedule`).
#[cfg(feature = "day-schedule")]
pub(super) struct RoomDay<'r> {
    pub(super) floor: Floor<'r>,
    pub(super) shown: Mask,
    pub(super) day: Day,
    /// Bit `h` of entry `i`: room `i` is booked at hour `h`.
    pub(super) hours: [u32; MAX_ROOMS],
}

#[cfg(feature = "day-schedule")]
impl RoomDay<'_> {
    /// The shown rooms with their booked hours.
    fn rooms(&self) -> impl Iterator<Item = (&Room<'_>, u32)> {
        let shown = self.shown;
        self.floor
            .rooms
            .iter()
            .zip(self.hours)
            .enumerate()
            .filter(move |(i, _)| shown & 1 << i != 0)
            .map(|(_, (r, h))| (r, h))
    }
}

#[cfg(feature = "day-schedule")]
impl Report for RoomDay<'_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        if self.shown == 0 {
            return f.write_str("No room has that many seats.");
        }
        for (r, hours) in self.rooms() {
            f.write_str(r.id)?;
            write!(f, " — {r}, ")?;
            f.write_str(if hours == 0 {
                "free all day on "
            } else {
                "booked on "
            })?;
            write!(f, "{}", self.day)?;
            if hours != 0 {
                f.write_str(" at")?;
                for h in (0..24).filter(|h| hours & 1 << h != 0) {
                    write!(f, " {}:00", ZeroPadded(h, 2))?;
                }
            }
            f.write_char('\n')?;
        }
        Ok(())
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        w.begin_object()
            .key("day")
            .string_fmt(format_args!("{}", self.day));
        w.key("rooms").begin_array();
        for (r, hours) in self.rooms() {
            room_object(w, r);
            w.key("booked").begin_array();
            for h in (0..24).filter(|h| hours & 1 << h != 0) {
                w.int(h);
            }
            w.end_array().end_object();
        }
        w.end_array().end_object();
    }
}

/// Opens a room's object in a structured list: its id, name and seats (the caller adds more and
/// closes it).
fn room_object(w: &mut Writer<'_>, r: &Room<'_>) {
    w.begin_object()
        .key("id")
        .string(r.id)
        .key("name")
        .string(r.name);
    w.key("seats").int(r.seats.into());
}

/// A page of the caller's bookings (`list_bookings`).
#[cfg(feature = "list-bookings")]
pub(super) struct Mine<'a, 'r> {
    pub(super) floor: Floor<'r>,
    pub(super) page: &'a [Booking],
    /// The one day asked about.
    pub(super) day: Option<super::slot::Day>,
    /// Whether this page continues an earlier one (`after`).
    pub(super) continued: bool,
    /// Whether more bookings follow the page.
    pub(super) more: bool,
}

#[cfg(feature = "list-bookings")]
impl Report for Mine<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        match (self.page.is_empty(), self.day, self.continued) {
            (true, _, true) => return f.write_str("You have no more bookings."),
            (true, Some(d), _) => return write!(f, "You have no bookings on {d}."),
            (true, None, _) => return f.write_str("You have no bookings still to come."),
            (false, _, true) => f.write_str("More of your bookings:")?,
            (false, Some(d), _) => write!(f, "Your bookings on {d}:")?,
            (false, None, _) => f.write_str("Your bookings still to come:")?,
        }
        for b in self.page {
            let room = self.floor.by_id(&b.new.room);
            write!(f, "\n{} — {}", BookingRef(b), Described(b, room))?;
        }
        match self.page.last() {
            Some(last) if self.more => write!(
                f,
                "\nMore follow: call list_bookings again with after={}{}.",
                BookingRef(last),
                if self.day.is_some() {
                    " and the same day"
                } else {
                    ""
                }
            ),
            _ => Ok(()),
        }
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        w.begin_object().key("bookings").begin_array();
        for b in self.page {
            write_booking_object(w, b, self.floor.by_id(&b.new.room));
        }
        w.end_array();
        if let Some(last) = self.page.last().filter(|_| self.more) {
            w.key("next")
                .string_fmt(format_args!("{}", BookingRef(last)));
        }
        w.end_object();
    }
}

/// "The earliest bookable hour is day=… hour=… (UTC)."
pub(super) struct Earliest(pub(super) u64);

impl fmt::Display for Earliest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match Slot::earliest(self.0) {
            Some(e) => write!(
                f,
                "The earliest bookable hour is day={} hour={} (UTC).",
                e.day,
                Num(e.hour.into())
            ),
            None => Ok(()),
        }
    }
}

fn list<'s>(f: &mut dyn fmt::Write, items: impl Iterator<Item = &'s str>) -> fmt::Result {
    for (i, s) in items.enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        f.write_str(s)?;
    }
    f.write_char('.')
}
