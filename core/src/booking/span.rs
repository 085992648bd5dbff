//! Days, and the spans of time a booking holds (UTC minutes).

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

/// Minutes since 1970-01-01 00:00 UTC: when a booking starts or ends.
pub type Minute = u32;

/// Minutes in a day.
const DAY: Minute = 24 * 60;

/// The longest any booking may be, in minutes: a day (a floor may allow less).
pub const MAX_MINUTES: Minute = DAY;

impl Day {
    /// The first day a minute names: 2000-01-01.
    pub const FIRST: Day = Day {
        year: 2000,
        month: 1,
        day: 1,
    };

    /// Parses `YYYY-MM-DD` (the one date validator, [`format::date`]) within 2000–2999.
    pub fn parse(s: &str) -> Option<Day> {
        let d = format::date(s)?;
        (2000..3000).contains(&d.year).then_some(Day {
            year: d.year,
            month: d.month,
            day: d.day,
        })
    }

    /// The day (UTC) that holds `minute` (`None` outside the years 2000–2999).
    pub fn containing(minute: Minute) -> Option<Day> {
        // Civil from days (H. Hinnant), in 32 bits: days since 1970 fit until the year 11 million.
        let z = (minute / DAY).checked_add(719_468)?;
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
        Some(Day {
            year,
            month: month as u8,
            day: day as u8,
        })
    }

    /// Its first minute (midnight UTC).
    pub fn first_minute(self) -> Minute {
        // Days from civil (H. Hinnant); a checked day (2000–2999) cannot overflow.
        let y = u32::from(self.year) - u32::from(self.month <= 2);
        let (era, yoe) = (y / 400, y % 400);
        let m = u32::from(self.month);
        let doy = (153 * if m > 2 { m - 3 } else { m + 9 } + 2) / 5 + u32::from(self.day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        (era * 146_097 + doe - 719_468) * DAY
    }

    /// Its weekday, Monday 0 to Sunday 6 (1970-01-01 was a Thursday).
    pub fn weekday(self) -> usize {
        ((self.first_minute() / DAY + 3) % 7) as usize
    }

    /// The day after.
    pub fn next(self) -> Option<Day> {
        Day::containing(self.first_minute() + DAY)
    }
}

/// A booking's time: from `start` up to `end` (not included), in UTC minutes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    /// The first minute.
    pub start: Minute,
    /// The minute after the last.
    pub end: Minute,
}

impl Span {
    /// The span from `start` to `end`, if it is one (`start < end`, both in 2000–2999).
    pub fn new(start: Minute, end: Minute) -> Option<Span> {
        let in_range = |m| Day::containing(m).is_some();
        (start < end && in_range(start) && in_range(end - 1)).then_some(Span { start, end })
    }

    /// The whole hour `hour` (0–23) of `day`: what a booking was before it had minutes.
    pub fn hour(day: Day, hour: u8) -> Span {
        let start = day.first_minute() + Minute::from(hour) * 60;
        Span {
            start,
            end: start + 60,
        }
    }

    /// Whether the two share a minute.
    pub fn overlaps(&self, other: &Span) -> bool {
        self.start < other.end && other.start < self.end
    }

    /// How long it is, in minutes.
    pub fn minutes(&self) -> Minute {
        self.end - self.start
    }

    /// The day (UTC) it starts on.
    pub fn day(&self) -> Day {
        Day::containing(self.start).unwrap_or(Day::FIRST)
    }

    /// Whether the span has started by unix time `now`; always `false` while the clock is
    /// not set (before [`CLOCK_SET_FROM`]).
    pub fn is_past(&self, now: u64) -> bool {
        now >= CLOCK_SET_FROM && u64::from(self.start) * 60 < now
    }
}

/// Weekday names, Monday first, as arguments spell them.
pub(super) const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// The minute that holds unix time `t`, if it is in the years 2000–2999.
pub fn minute_of(t: u64) -> Option<Minute> {
    let m = Minute::try_from(t / 60).ok()?;
    Day::containing(m).map(|_| m)
}

/// Unix time (UTC) before which the server's clock is taken as not set: a panel without a
/// real-time clock counts seconds since boot, so no span is refused as past. 2020-01-01.
pub const CLOCK_SET_FROM: u64 = 1_577_836_800;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_minutes_agree_for_a_thousand_years() {
        let day = |d: &str| Day::parse(d).unwrap();
        let at = |t: u64| Day::containing(minute_of(t).unwrap()).unwrap();
        assert_eq!(at(CLOCK_SET_FROM), day("2020-01-01"));
        assert_eq!(at(951_868_800 + 3_600), day("2000-03-01"));
        // The core tests' clock: 2026-09-21 14:13:20 UTC.
        assert_eq!(at(1_790_000_000), day("2026-09-21"));
        assert_eq!(minute_of(0), None);
        assert_eq!(minute_of(u64::MAX), None);
        // Every day from 2000 to 2999: consecutive, valid, and its first minute maps back.
        let mut last = day("2000-01-01");
        assert_eq!(u64::from(last.first_minute()) * 60, 946_684_800);
        for t in (946_684_800 + 86_400..32_503_680_000u64).step_by(86_400) {
            let d = at(t + 7_200);
            assert_eq!(u64::from(d.first_minute()) * 60, t, "{t}");
            assert_eq!(last.next(), Some(d), "{t}");
            assert!(Day::parse(&d.to_string()).is_some(), "{t}");
            last = d;
        }
        assert_eq!(last, day("2999-12-31"));
        assert_eq!(last.next(), None);
    }

    #[test]
    fn spans_overlap_show_and_start() {
        let d = Day::parse("2026-09-21").unwrap();
        let nine = Span::hour(d, 9);
        let m = d.first_minute();
        let half_past = Span::new(m + 9 * 60 + 30, m + 10 * 60 + 15).unwrap();
        assert!(nine.overlaps(&half_past) && half_past.overlaps(&nine));
        assert!(
            !nine.overlaps(&Span::hour(d, 10)),
            "touching is not overlapping"
        );
        let shown = |s| crate::booking::Local(s, &crate::booking::Utc).to_string();
        assert_eq!(shown(half_past), "Monday 2026-09-21 at 09:30–10:15 (UTC)");
        assert_eq!(
            shown(Span::hour(d, 23)),
            "Monday 2026-09-21 at 23:00–24:00 (UTC)"
        );
        assert_eq!(half_past.minutes(), 45);
        assert_eq!(Span::new(m, m), None);
        assert_eq!(Span::new(m + 1, m), None);
        assert!(Span::hour(d, 14).is_past(1_790_000_000));
        assert!(!Span::hour(d, 15).is_past(1_790_000_000));
        // A panel's clock counts from boot: nothing is past.
        assert!(!Span::hour(Day::parse("2000-01-01").unwrap(), 0).is_past(CLOCK_SET_FROM - 1));
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
