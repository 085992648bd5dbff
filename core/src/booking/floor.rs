//! The rooms on a floor, and how a free-text hint resolves to candidates.

use core::fmt;

pub use super::room_set::Mask;
use super::room_set::RoomBits;
use super::span::{minute_of, Minute};
#[cfg(feature = "opening-hours")]
use super::time_of_day::TimeOfDay;
use super::zone::{wall, Utc, Zone};
use crate::limits::MAX_ROOMS;
use crate::wire::write::Num;

/// One bookable room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Room<'r> {
    /// Stable id used in arguments and answers.
    pub id: &'r str,
    /// Display name.
    pub name: &'r str,
    /// Seats.
    pub seats: u16,
    /// What people call it (lower-case match, leading "the " ignored).
    pub aliases: &'r [&'r str],
    /// The storey it is on, as people say it ("3", "Ground"); empty when the floor file names
    /// none.
    #[cfg(feature = "campus")]
    pub level: &'r str,
    /// What it has, e.g. `["video", "whiteboard"]` (matched ignoring case).
    #[cfg(feature = "campus")]
    pub equipment: &'r [&'r str],
}

impl fmt::Display for Room<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)?;
        write!(f, " ({} seats)", Num(self.seats.into()))
    }
}

/// The rooms a panel or desktop server books (at most [`MAX_ROOMS`]); on a desktop, one
/// building of a site (feature `campus`: a site is a slice of them).
#[derive(Clone, Copy)]
pub struct Floor<'r> {
    /// The building's id, unique on the site (the `building` argument names it or its name).
    #[cfg(feature = "campus")]
    pub id: &'r str,
    /// The building's name.
    #[cfg(feature = "campus")]
    pub name: &'r str,
    /// The rooms, in display order.
    pub rooms: &'r [Room<'r>],
    /// Bookings start and last whole steps of this many minutes (5, 10, 15, 30 or 60).
    pub grid: u16,
    /// The longest booking, in minutes.
    pub max_minutes: u16,
    /// The floor's wall clock: every time a person gives or reads is in it.
    pub zone: &'r dyn Zone,
    /// When bookings may start and must end, on that clock (`None`: any time of day).
    #[cfg(feature = "opening-hours")]
    pub open: Option<(TimeOfDay, TimeOfDay)>,
    /// Whether every principal sees the titles of others' bookings (else only "booked"); an
    /// organiser is never named either way.
    #[cfg(feature = "public-titles")]
    pub public_titles: bool,
    /// Minutes after a booking's start by which its holder must `check_in`, else it is
    /// released (`None`: no check-in, bookings are never released).
    #[cfg(feature = "meeting-life")]
    pub check_in_minutes: Option<u16>,
}

/// The rooms, the grid, the longest booking and the zone's name.
impl fmt::Debug for Floor<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Floor")
            .field("rooms", &self.rooms)
            .field("grid", &self.grid)
            .field("max_minutes", &self.max_minutes)
            .field("zone", &self.zone.name())
            .finish()
    }
}

/// The grid a floor has unless it chooses another, in minutes.
pub const DEFAULT_GRID: u16 = 15;
/// The longest booking a floor allows unless it chooses otherwise: 8 hours.
pub const DEFAULT_MAX_MINUTES: u16 = 8 * 60;

/// The default floor: The Atrium is genuinely the big room; Studio B is what the second-floor
/// design team call "the big room".
pub const DEFAULT_FLOOR: Floor<'static> = Floor {
    #[cfg(feature = "campus")]
    id: "main",
    #[cfg(feature = "campus")]
    name: "Main building",
    rooms: &[
        Room {
            id: "atrium",
            name: "The Atrium",
            seats: 24,
            aliases: &["the big room", "big room"],
            #[cfg(feature = "campus")]
            level: "",
            #[cfg(feature = "campus")]
            equipment: &[],
        },
        Room {
            id: "studio-b",
            name: "Studio B",
            seats: 12,
            aliases: &["the big room", "big room"],
            #[cfg(feature = "campus")]
            level: "",
            #[cfg(feature = "campus")]
            equipment: &[],
        },
        Room {
            id: "nook",
            name: "The Nook",
            seats: 4,
            aliases: &["the small room", "small room"],
            #[cfg(feature = "campus")]
            level: "",
            #[cfg(feature = "campus")]
            equipment: &[],
        },
    ],
    grid: DEFAULT_GRID,
    max_minutes: DEFAULT_MAX_MINUTES,
    zone: &Utc,
    #[cfg(feature = "opening-hours")]
    open: None,
    #[cfg(feature = "public-titles")]
    public_titles: false,
    #[cfg(feature = "meeting-life")]
    check_in_minutes: None,
};

/// Which building of the site a `book_room` call books in, sealed with the time in every
/// question after the building is known (a panel's one floor: nothing).
#[cfg(feature = "campus")]
pub(super) type Here = u8;
/// Which building of the site a `book_room` call books in (a panel's one floor: nothing).
#[cfg(not(feature = "campus"))]
pub(super) type Here = ();

/// Where a booked room is: the room (while it is still served) and the clock its times are
/// read on (its building's; the first building's for a room no longer served).
pub(super) trait Locate<'r> {
    /// The room with id `id`, and its clock.
    fn locate(&self, id: &str) -> (Option<&'r Room<'r>>, &'r dyn Zone);
}

impl<'r> Locate<'r> for Floor<'r> {
    fn locate(&self, id: &str) -> (Option<&'r Room<'r>>, &'r dyn Zone) {
        (self.by_id(id), self.zone)
    }
}

#[cfg(any(feature = "campus", feature = "list-bookings"))]
impl<'r> Locate<'r> for [Floor<'r>] {
    fn locate(&self, id: &str) -> (Option<&'r Room<'r>>, &'r dyn Zone) {
        match self.iter().find_map(|b| Some((b.by_id(id)?, b.zone))) {
            Some((room, zone)) => (Some(room), zone),
            None => (None, self.first().map_or(&Utc, |b| b.zone)),
        }
    }
}

/// What a room must have to be offered or listed: enough seats (and, on a site, every piece
/// of equipment asked for).
#[derive(Clone, Copy, Debug)]
pub(super) struct Needs<'a> {
    /// People expected (0: any room).
    pub(super) people: u16,
    /// Comma-separated equipment, all required, ignoring case.
    #[cfg(feature = "campus")]
    pub(super) equipment: Option<&'a str>,
    #[cfg(not(feature = "campus"))]
    pub(super) equipment: core::marker::PhantomData<&'a str>,
}

impl Needs<'_> {
    /// At least `people` seats (and nothing else asked for).
    pub(super) fn seats(people: u16) -> Self {
        Needs {
            people,
            #[cfg(feature = "campus")]
            equipment: None,
            #[cfg(not(feature = "campus"))]
            equipment: core::marker::PhantomData,
        }
    }

    /// Whether `room` has all it needs.
    pub(super) fn fit(&self, room: &Room<'_>) -> bool {
        #[cfg(feature = "campus")]
        if !equipped(room, self.equipment) {
            return false;
        }
        room.seats >= self.people
    }
}

/// The default floor as a site of one building.
pub const DEFAULT_SITE: &[Floor<'static>] = &[DEFAULT_FLOOR];

impl Floor<'_> {
    /// Today's first start on the floor's grid and clock at or after unix time `now`, in UTC
    /// minutes.
    pub fn earliest_start(&self, now: u64) -> Option<Minute> {
        let m = minute_of(now.saturating_add(59))?;
        let grid = Minute::from(self.grid.max(1));
        let local = wall(self.zone, m);
        Some(m + (local.div_ceil(grid) * grid - local))
    }
}

impl<'r> Floor<'r> {
    /// The room with exactly this id.
    pub fn by_id(self, id: &str) -> Option<&'r Room<'r>> {
        self.rooms.iter().take(MAX_ROOMS).find(|r| r.id == id)
    }

    /// Rooms whose id, name or an alias matches `hint` (case-insensitive, "the " ignored).
    pub fn matching(self, hint: &str) -> Mask {
        let hint = normalize(hint);
        self.mask(|r| {
            [r.id, r.name]
                .iter()
                .chain(r.aliases)
                .any(|n| normalize(n).eq_ignore_ascii_case(hint))
        })
    }

    /// Rooms for which `keep` holds.
    pub fn mask(self, keep: impl Fn(&Room<'r>) -> bool) -> Mask {
        self.rooms
            .iter()
            .take(MAX_ROOMS)
            .enumerate()
            .filter(|(_, r)| keep(r))
            .fold(Mask::NONE, |m, (i, _)| m.with(i))
    }

    /// The rooms in `mask`, in floor order.
    pub fn iter(self, mask: Mask) -> impl Iterator<Item = &'r Room<'r>> {
        self.rooms
            .iter()
            .take(MAX_ROOMS)
            .enumerate()
            .filter(move |(i, _)| mask.has(*i))
            .map(|(_, r)| r)
    }
}

/// Whether `room` has every piece of `wanted` (comma-separated, ignoring case and spaces).
#[cfg(feature = "campus")]
pub(super) fn equipped(room: &Room<'_>, wanted: Option<&str>) -> bool {
    wanted.unwrap_or("").split(',').map(str::trim).all(|w| {
        w.is_empty()
            || room
                .equipment
                .iter()
                .any(|e| e.trim().eq_ignore_ascii_case(w))
    })
}

/// Whether `room` is on `level` (any level when not given).
#[cfg(feature = "campus")]
pub(super) fn on_level(room: &Room<'_>, level: Option<&str>) -> bool {
    level.is_none_or(|l| room.level.trim().eq_ignore_ascii_case(l.trim()))
}

fn normalize(s: &str) -> &str {
    let s = s.trim();
    match (s.get(..4), s.get(4..)) {
        (Some(p), Some(rest)) if p.eq_ignore_ascii_case("the ") => rest.trim_start(),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_resolve() {
        let f = DEFAULT_FLOOR;
        let ids = |hint: &str| {
            f.iter(f.matching(hint))
                .map(|r| r.id)
                .collect::<heapless::Vec<_, 4>>()
        };
        assert_eq!(ids("the big room"), ["atrium", "studio-b"]);
        assert_eq!(ids("  Big Room "), ["atrium", "studio-b"]);
        assert_eq!(ids("atrium"), ["atrium"]);
        assert_eq!(ids("The Atrium"), ["atrium"]);
        assert_eq!(ids("studio b"), ["studio-b"]);
        assert_eq!(ids("the nook"), ["nook"]);
        assert!(f.matching("ballroom").is_none());
        let ends = Mask::NONE.with(0).with(2);
        assert_eq!(
            f.iter(ends).map(|r| r.id).collect::<heapless::Vec<_, 4>>(),
            ["atrium", "nook"]
        );
    }
}

#[cfg(test)]
mod earliest_tests {
    use super::*;
    use crate::booking::Day;

    #[test]
    fn the_earliest_start_is_the_next_step_of_the_grid() {
        let day = |d: &str, h: u32, m: u32| Day::parse(d).unwrap().first_minute() + h * 60 + m;
        let floor = |grid| Floor {
            grid,
            ..DEFAULT_FLOOR
        };
        let now = 1_790_000_000; // 2026-09-21 14:13:20 UTC
        assert_eq!(
            floor(60).earliest_start(now),
            Some(day("2026-09-21", 15, 0))
        );
        assert_eq!(
            floor(15).earliest_start(now),
            Some(day("2026-09-21", 14, 15))
        );
        let leap_day_23h = 1_835_478_000; // 2028-02-29T23:00:00Z
        assert_eq!(
            floor(15).earliest_start(leap_day_23h),
            Some(day("2028-02-29", 23, 0))
        );
        assert_eq!(
            floor(60).earliest_start(leap_day_23h + 1),
            Some(day("2028-03-01", 0, 0))
        );
    }
}
