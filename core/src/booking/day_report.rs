//! What `day_schedule` answers: each room of the floor with the times it is booked on one day,
//! and what a grid needs to draw it (the floor's zone, grid, longest booking and hours).

use core::fmt;

use super::floor::{Floor, Mask, Room};
use super::named::Meetings;
use super::report::room_object;
use super::room_set::RoomBits;
use super::span::Day;
use super::time_of_day::TimeOfDay;
use super::vacancy::{Busy, CELL};
use crate::engine::Report;
use crate::limits::MAX_SCHEDULE_ROOMS;
use crate::wire::write::Writer;

/// When each room is booked on one day (`day_schedule`).
pub(super) struct RoomDay<'r> {
    pub(super) floor: Floor<'r>,
    pub(super) shown: Mask,
    pub(super) day: Day,
    /// Entry `k`: when the `k`-th shown room is booked.
    pub(super) busy: [Busy; MAX_SCHEDULE_ROOMS],
    /// The site it is a building of, and how many rooms that fit are not shown.
    #[cfg(feature = "campus")]
    pub(super) place: (&'r [Floor<'r>], u32),
    /// The meetings the caller may read (its own; others' titles on a public floor).
    pub(super) named: Meetings<'r>,
}

/// The runs of set cells of a [`Busy`] day, as times of day: `(09:30, 10:15)`, …
fn runs(busy: Busy) -> impl Iterator<Item = (TimeOfDay, TimeOfDay)> {
    let cells = (24 * 60 / CELL) as usize;
    let set = move |c: usize| c < cells && busy[c / 32] & 1 << (c % 32) != 0;
    let mut c = 0;
    core::iter::from_fn(move || {
        while c < cells && !set(c) {
            c += 1;
        }
        let from = c;
        while set(c) {
            c += 1;
        }
        let at = |c: usize| TimeOfDay((c as u32 * CELL) as u16);
        (from < cells).then(|| (at(from), at(c)))
    })
}

impl RoomDay<'_> {
    /// The shown rooms with when they are booked.
    fn rooms(&self) -> impl Iterator<Item = (&Room<'_>, Busy)> {
        self.floor.iter(self.shown).zip(self.busy)
    }
}

impl Report for RoomDay<'_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        if self.shown.is_none() {
            return f.write_str("No room has that many seats.");
        }
        for (r, busy) in self.rooms() {
            f.write_str(r.id)?;
            write!(f, " — {r}, ")?;
            let free = busy.iter().all(|w| *w == 0);
            f.write_str(if free {
                "free all day on "
            } else {
                "booked on "
            })?;
            write!(f, "{}", self.day)?;
            for (i, (from, to)) in runs(busy).enumerate() {
                f.write_str(if i == 0 { " " } else { ", " })?;
                write!(f, "{from}–{to}")?;
            }
            f.write_char('\n')?;
            self.named.text(f, r.id)?;
        }
        self.named.unnamed_text(f)?;
        #[cfg(feature = "campus")]
        if self.place.1 > 0 {
            let more = crate::wire::write::Num(self.place.1.into());
            writeln!(
                f,
                "{more} more: narrow by building, level, attendees or equipment."
            )?;
        }
        f.write_str("Times are on the floor's clock, ")?;
        f.write_str(self.floor.zone.name())?;
        f.write_char('.')
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        w.begin_object()
            .key("day")
            .string_fmt(format_args!("{}", self.day));
        w.key("time_zone").string(self.floor.zone.name());
        w.key("grid_minutes").int(self.floor.grid.into());
        w.key("max_minutes").int(self.floor.max_minutes.into());
        #[cfg(feature = "opening-hours")]
        if let Some((open, close)) = self.floor.open {
            w.key("opening_hours").begin_object();
            w.key("open").string_fmt(format_args!("{open}"));
            w.key("close")
                .string_fmt(format_args!("{close}"))
                .end_object();
        }
        #[cfg(feature = "campus")]
        super::campus_report::write_place(w, self.place.0, &self.floor, self.place.1);
        w.key("rooms").begin_array();
        for (r, busy) in self.rooms() {
            room_object(w, r);
            w.key("booked").begin_array();
            for (from, to) in runs(busy) {
                w.begin_object()
                    .key("start")
                    .string_fmt(format_args!("{from}"));
                w.key("end").string_fmt(format_args!("{to}")).end_object();
            }
            w.end_array();
            self.named.structured(w, r.id);
            w.end_object();
        }
        w.end_array();
        if self.named.unnamed > 0 {
            w.key("unnamed").int(self.named.unnamed.into());
        }
        w.end_object();
    }
}
