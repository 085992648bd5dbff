//! Days and one-hour slots.

use core::fmt;

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
    /// Parses `YYYY-MM-DD`.
    pub fn parse(s: &str) -> Option<Day> {
        let b = s.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let num = |r: core::ops::Range<usize>| -> Option<u16> {
            b[r].iter().try_fold(0u16, |n, c| {
                c.is_ascii_digit().then(|| n * 10 + u16::from(c - b'0'))
            })
        };
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        let days = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        ((2000..3000).contains(&year) && (1..=days).contains(&day)).then_some(Day {
            year,
            month: month as u8,
            day: day as u8,
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
