//! Days and one-hour slots.

use core::fmt;

use crate::wire::format;

/// A calendar day, checked (Gregorian, years 2000–2999).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day {
    /// Year.
    pub year: u16,
    /// Month, 1–12.
    pub month: u8,
    /// Day of month, 1–31.
    pub day: u8,
}

impl Day {
    /// Parses `YYYY-MM-DD` (the one date validator, [`format::date`]) within 2000–2999.
    pub fn parse(s: &str) -> Option<Day> {
        let d = format::date(s)?;
        (2000..3000).contains(&d.year).then_some(Day {
            year: d.year,
            month: d.month,
            day: d.day,
        })
    }
}

impl fmt::Display for Day {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// One bookable hour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot {
    /// The day.
    pub day: Day,
    /// Start hour, 0–23.
    pub hour: u8,
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {:02}:00–{:02}:00",
            self.day,
            self.hour,
            (self.hour + 1) % 24
        )
    }
}

/// Unix time (UTC) before which the server's clock is taken as not set: a panel without a
/// real-time clock counts seconds since boot, so no slot is refused as past. 2020-01-01.
pub const CLOCK_SET_FROM: u64 = 1_577_836_800;

impl Slot {
    /// Unix time (UTC) at which the slot starts.
    pub fn start(&self) -> u64 {
        let (y, m, d) = (
            u64::from(self.day.year),
            u64::from(self.day.month),
            u64::from(self.day.day),
        );
        // Days from civil (H. Hinnant), for years from 2000: nothing goes negative.
        let y = if m <= 2 { y - 1 } else { y };
        let (era, yoe) = (y / 400, y % 400);
        let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        days * 86_400 + u64::from(self.hour) * 3_600
    }

    /// The slot whose hour contains unix time `t` (`None` outside the years 2000–2999).
    pub fn containing(t: u64) -> Option<Slot> {
        // Civil from days (H. Hinnant).
        let z = t / 86_400 + 719_468;
        let (era, doe) = (z / 146_097, z % 146_097);
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + u64::from(month <= 2);
        let year = u16::try_from(year)
            .ok()
            .filter(|y| (2000..3000).contains(y))?;
        Some(Slot {
            day: Day {
                year,
                month: month as u8,
                day: day as u8,
            },
            hour: (t % 86_400 / 3_600) as u8,
        })
    }

    /// Whether the slot has started by unix time `now`; always `false` while the clock is
    /// not set (before [`CLOCK_SET_FROM`]).
    pub fn is_past(&self, now: u64) -> bool {
        now >= CLOCK_SET_FROM && self.start() < now
    }

    /// The first slot that starts at or after `now` (the earliest bookable one).
    pub fn earliest(now: u64) -> Option<Slot> {
        Slot::containing(now.saturating_add(3_599))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_times() {
        let slot = |d: &str, hour| Slot {
            day: Day::parse(d).unwrap(),
            hour,
        };
        assert_eq!(slot("2020-01-01", 0).start(), CLOCK_SET_FROM);
        assert_eq!(slot("2000-03-01", 1).start(), 951_868_800 + 3_600);
        // The core tests' clock: 2026-09-21 14:13:20 UTC.
        assert_eq!(
            Slot::containing(1_790_000_000),
            Some(slot("2026-09-21", 14))
        );
        assert_eq!(Slot::earliest(1_790_000_000), Some(slot("2026-09-21", 15)));
        assert_eq!(
            Slot::earliest(slot("2028-02-29", 23).start()),
            Some(slot("2028-02-29", 23))
        );
        assert_eq!(
            Slot::earliest(slot("2028-02-29", 23).start() + 1),
            Some(slot("2028-03-01", 0))
        );
        assert_eq!(Slot::containing(0), None);
        assert_eq!(Slot::containing(u64::MAX), None);
        for t in (946_684_800..32_503_680_000u64).step_by(86_400 * 7 + 3_601) {
            let s = Slot::containing(t).unwrap();
            assert!(s.start() <= t && t < s.start() + 3_600, "{t}");
        }
        assert!(slot("2026-09-21", 14).is_past(1_790_000_000));
        assert!(!slot("2026-09-21", 15).is_past(1_790_000_000));
        // A panel's clock counts from boot: nothing is past.
        assert!(!slot("2000-01-01", 0).is_past(CLOCK_SET_FROM - 1));
    }

    #[test]
    fn days() {
        assert_eq!(
            Day::parse("2026-09-17"),
            Some(Day {
                year: 2026,
                month: 9,
                day: 17
            })
        );
        assert!(Day::parse("2028-02-29").is_some());
        for bad in [
            "2026-02-29",
            "2026-13-01",
            "2026-9-17",
            "26-09-17x",
            "2026-04-31",
            "abcd-ef-gh",
            "1999-01-01",
        ] {
            assert_eq!(Day::parse(bad), None, "{bad}");
        }
        assert_eq!(
            format!("{}", Day::parse("2026-01-02").unwrap()),
            "2026-01-02"
        );
    }
}
