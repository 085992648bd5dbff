//! The rooms on a floor, and how a free-text hint resolves to candidates.

use core::fmt;

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
}

impl fmt::Display for Room<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)?;
        write!(f, " ({} seats)", Num(self.seats.into()))
    }
}

/// The rooms a panel or desktop server books (at most [`MAX_ROOMS`]).
#[derive(Clone, Copy)]
pub struct Floor<'r> {
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
    rooms: &[
        Room {
            id: "atrium",
            name: "The Atrium",
            seats: 24,
            aliases: &["the big room", "big room"],
        },
        Room {
            id: "studio-b",
            name: "Studio B",
            seats: 12,
            aliases: &["the big room", "big room"],
        },
        Room {
            id: "nook",
            name: "The Nook",
            seats: 4,
            aliases: &["the small room", "small room"],
        },
    ],
    grid: DEFAULT_GRID,
    max_minutes: DEFAULT_MAX_MINUTES,
    zone: &Utc,
    #[cfg(feature = "opening-hours")]
    open: None,
    #[cfg(feature = "public-titles")]
    public_titles: false,
};

/// A set of rooms on a floor, by index.
pub type Mask = u32;
const _: () = assert!(MAX_ROOMS <= Mask::BITS as usize);

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
            .fold(0, |m, (i, _)| m | 1 << i)
    }

    /// The rooms in `mask`, in floor order.
    pub fn iter(self, mask: Mask) -> impl Iterator<Item = &'r Room<'r>> {
        self.rooms
            .iter()
            .take(MAX_ROOMS)
            .enumerate()
            .filter(move |(i, _)| mask & 1 << i != 0)
            .map(|(_, r)| r)
    }
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
        assert_eq!(f.matching("the big room"), 0b011);
        assert_eq!(f.matching("  Big Room "), 0b011);
        assert_eq!(f.matching("atrium"), 0b001);
        assert_eq!(f.matching("The Atrium"), 0b001);
        assert_eq!(f.matching("studio b"), 0b010);
        assert_eq!(f.matching("the nook"), 0b100);
        assert_eq!(f.matching("ballroom"), 0);
        assert_eq!(
            f.iter(0b101).map(|r| r.id).collect::<heapless::Vec<_, 4>>(),
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
