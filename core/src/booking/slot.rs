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

#[cfg(test)]
mod tests {
    use super::*;

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
