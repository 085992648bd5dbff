//! Days and one-hour slots.

use core::fmt;

use crate::wire::format;
use crate::wire::write::ZeroPadded;

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
        let (y, m, d) = (self.year.into(), self.month.into(), self.day.into());
        write!(
            f,
            "{}-{}-{}",
            ZeroPadded(y, 4),
            ZeroPadded(m, 2),
            ZeroPadded(d, 2)
        )
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
            "{} at {}:00–{}:00",
            self.day,
            ZeroPadded(self.hour.into(), 2),
            ZeroPadded(((self.hour + 1) % 24).into(), 2)
        )
    }
}

/// Unix time (UTC) before which the server's clock is taken as not set: a panel without a
/// real-time clock counts seconds since boot, so no slot is refused as past. 2020-01-01.
pub const CLOCK_SET_FROM: u64 = 1_577_836_800;

impl Slot {
    /// The slot whose hour contains unix time `t` (`None` outside the years 2000–2999).
    pub fn containing(t: u64) -> Option<Slot> {
        // Civil from days (H. Hinnant), in 32 bits: days since 1970 fit until the year 11 million.
        let z = u32::try_from(t / 86_400).ok()?.checked_add(719_468)?;
        let (era, doe) = (z / 146_097, z % 146_097);
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + u32::from(month <= 2);
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
        // Slots start on the hour: one starts before `now` iff it is before the earliest.
        now >= CLOCK_SET_FROM && Slot::earliest(now).is_some_and(|e| *self < e)
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
        assert_eq!(
            Slot::containing(CLOCK_SET_FROM),
            Some(slot("2020-01-01", 0))
        );
        assert_eq!(
            Slot::containing(951_868_800 + 3_600),
            Some(slot("2000-03-01", 1))
        );
        let leap_day_23h = 1_835_478_000; // 2028-02-29T23:00:00Z
                                          // The core tests' clock: 2026-09-21 14:13:20 UTC.
        assert_eq!(
            Slot::containing(1_790_000_000),
            Some(slot("2026-09-21", 14))
        );
        assert_eq!(Slot::earliest(1_790_000_000), Some(slot("2026-09-21", 15)));
        assert_eq!(Slot::earliest(leap_day_23h), Some(slot("2028-02-29", 23)));
        assert_eq!(
            Slot::earliest(leap_day_23h + 1),
            Some(slot("2028-03-01", 0))
        );
        assert_eq!(Slot::containing(0), None);
        assert_eq!(Slot::containing(u64::MAX), None);
        // Every day from 2000 to 2999, against chrono-free arithmetic: consecutive and valid.
        let mut last = Slot::containing(946_684_800).unwrap();
        assert_eq!(last, slot("2000-01-01", 0));
        for t in (946_684_800 + 86_400..32_503_680_000u64).step_by(86_400) {
            let s = Slot::containing(t + 7_200).unwrap();
            assert_eq!(s.hour, 2);
            assert!(s.day > last.day, "{t}");
            assert!(Day::parse(&s.day.to_string()).is_some(), "{t}");
            last = s;
        }
        assert_eq!(last, slot("2999-12-31", 2));
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
