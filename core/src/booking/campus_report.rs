//! What a site answers (feature `campus`): `list_rooms` grouped by building and level, an
//! unknown building, and the buildings and levels a `day_schedule` grid chooses among.

use core::fmt::{self, Write as _};

use super::floor::{Floor, Needs};
#[cfg(feature = "public-titles")]
use super::named::{InTheWay, Named};
use super::report::{room_object, Earliest};
use super::span::Span;
use super::zone::Local;
use crate::engine::Report;
use crate::limits::MAX_BUILDINGS;
use crate::wire::write::{Num, Writer};

/// A building as a choice: `Berlin HQ (Europe/Berlin)`.
pub(super) struct BuildingTitle<'a, 'r>(pub(super) &'a Floor<'r>);

impl fmt::Display for BuildingTitle<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)?;
        f.write_str(" (")?;
        f.write_str(self.0.zone.name())?;
        f.write_char(')')
    }
}

/// A `building` argument that names no building of the site.
pub(super) struct UnknownBuilding<'a, 'r> {
    pub(super) site: &'a [Floor<'r>],
    pub(super) name: &'a str,
}

impl Report for UnknownBuilding<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        f.write_str("There is no building '")?;
        f.write_str(self.name)?;
        f.write_str("'. Buildings: ")?;
        for (i, b) in self.site.iter().take(MAX_BUILDINGS).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(b.id)?;
            f.write_str(" (")?;
            f.write_str(b.name)?;
            f.write_char(')')?;
        }
        f.write_char('.')
    }
}

/// No room asked for has the equipment asked for.
pub(super) struct Unequipped<'a> {
    pub(super) needs: Needs<'a>,
}

impl Report for Unequipped<'_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        f.write_str("No room asked for has all of: ")?;
        f.write_str(self.needs.equipment.unwrap_or(""))?;
        if self.needs.people > 0 {
            write!(f, " (for {} people)", Num(self.needs.people.into()))?;
        }
        f.write_str(". list_rooms with the same equipment shows the rooms that have it.")
    }
}

/// The time a `list_rooms` call asks about, on one building's clock.
#[derive(Clone, Copy, Debug)]
pub(super) enum Time {
    /// None asked.
    Any,
    /// This span, still to come.
    At(Span),
    /// This span, already started.
    Past(Span),
}

/// One listed room: its building and index there, and whether it is free then.
#[derive(Clone, Copy, Debug)]
pub(super) struct Listed {
    pub(super) building: u8,
    pub(super) room: u16,
    pub(super) free: bool,
}

/// `list_rooms` on a site.
pub(super) struct SiteList<'a, 'r> {
    pub(super) site: &'a [Floor<'r>],
    pub(super) listed: &'a [Listed],
    /// Entry `b`: the time asked, on building `b`'s clock.
    pub(super) times: &'a [Time; MAX_BUILDINGS],
    /// Rooms that fit but are not listed.
    pub(super) more: u32,
    /// Whether a level or equipment was asked for (not only seats).
    pub(super) narrowed: bool,
    pub(super) now: u64,
    /// The meetings in the way the caller may read, by room id.
    #[cfg(feature = "public-titles")]
    pub(super) in_the_way: &'a [(&'r str, InTheWay)],
}

impl SiteList<'_, '_> {
    /// The meeting in room `id`'s way that the caller may read.
    #[cfg(feature = "public-titles")]
    fn in_the_way(&self, id: &str) -> Option<&InTheWay> {
        self.in_the_way
            .iter()
            .find(|(r, _)| *r == id)
            .map(|(_, m)| m)
    }

    /// The listed rooms with their building.
    fn rooms(&self) -> impl Iterator<Item = (usize, &Floor<'_>, &super::floor::Room<'_>, bool)> {
        self.listed.iter().filter_map(|l| {
            let b = self.site.get(usize::from(l.building))?;
            let r = b.rooms.get(usize::from(l.room))?;
            Some((usize::from(l.building), b, r, l.free))
        })
    }
}

impl Report for SiteList<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        match (self.listed.is_empty(), self.narrowed) {
            (true, false) => return f.write_str("No room has that many seats."),
            (true, true) => {
                return f.write_str("No room has those seats, that level and that equipment.")
            }
            _ => {}
        }
        let mut at: Option<(usize, &str)> = None;
        for (i, b, r, free) in self.rooms() {
            if self.site.len() > 1 && at.is_none_or(|(j, _)| j != i) {
                writeln!(f, "{}, {}:", BuildingTitle(b), b.id)?;
            }
            if !r.level.is_empty() && at.is_none_or(|(j, l)| j != i || l != r.level) {
                f.write_str("Level ")?;
                f.write_str(r.level)?;
                f.write_str(":\n")?;
            }
            at = Some((i, r.level));
            f.write_str(r.id)?;
            write!(f, " — {r}")?;
            if let Time::At(s) = self.times[i] {
                f.write_str(if free { ", free" } else { ", booked" })?;
                write!(f, " on {}", Local(s, b.zone))?;
                #[cfg(feature = "public-titles")]
                write!(f, "{}", Named(self.in_the_way(r.id)))?;
            }
            f.write_char('\n')?;
        }
        for (b, t) in self.site.iter().zip(self.times) {
            if let Time::Past(s) = t {
                write!(
                    f,
                    "None is free on {}: it has already started. {}",
                    Local(*s, b.zone),
                    Earliest(*b, self.now)
                )?;
            }
        }
        if self.more > 0 {
            write!(
                f,
                "{} more: narrow by building, level, attendees or equipment.",
                Num(self.more.into())
            )?;
        }
        Ok(())
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        w.begin_object().key("rooms").begin_array();
        for (i, b, r, free) in self.rooms() {
            room_object(w, r);
            if self.site.len() > 1 {
                w.key("building").string(b.id);
            }
            if !matches!(self.times[i], Time::Any) {
                w.key("free").bool(free);
            }
            #[cfg(feature = "public-titles")]
            if let Some(m) = self.in_the_way(r.id) {
                m.write(w);
            }
            w.end_object();
        }
        w.end_array();
        if self.more > 0 {
            w.key("more").int(self.more.into());
        }
        w.end_object();
    }
}

/// `day_schedule`'s place on a site: the building shown, and (when there is a choice) every
/// building with its levels, so a grid offers the choice without a second read.
pub(super) fn write_place(w: &mut Writer<'_>, site: &[Floor<'_>], shown: &Floor<'_>, more: u32) {
    if more > 0 {
        w.key("more").int(more.into());
    }
    let levels = site
        .iter()
        .flat_map(|b| b.rooms)
        .any(|r| !r.level.is_empty());
    if site.len() < 2 && !levels && more == 0 {
        return;
    }
    w.key("building").begin_object();
    w.key("id").string(shown.id);
    w.key("name").string(shown.name).end_object();
    w.key("buildings").begin_array();
    for b in site.iter().take(MAX_BUILDINGS) {
        w.begin_object().key("id").string(b.id);
        w.key("name").string(b.name);
        w.key("time_zone").string(b.zone.name());
        w.key("levels").begin_array();
        for (i, r) in b.rooms.iter().enumerate() {
            let seen = b.rooms[..i].iter().any(|o| o.level == r.level);
            if !r.level.is_empty() && !seen {
                w.string(r.level);
            }
        }
        w.end_array().end_object();
    }
    w.end_array();
}
