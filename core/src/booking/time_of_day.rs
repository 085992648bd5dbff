//! A time of day on a floor's or a panel's clock, to the minute: when a meeting starts or ends.

use core::fmt;
use core::ops::Add;

use crate::wire::write::ZeroPadded;
use redmark_macros::Sealed;

/// Minutes since midnight, shown `HH:MM`; 1440 (`24:00`) is the midnight that ends the day. A
/// [`Sealed`](crate::typed::Sealed) type: a tool may keep one in `requestState` (2 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Sealed)]
pub struct TimeOfDay(pub u16);

impl TimeOfDay {
    /// The midnight that ends the day (`24:00`): the latest a meeting ends.
    pub const END_OF_DAY: TimeOfDay = TimeOfDay(24 * 60);

    /// The time `s` says as people write it: `H`, `HH`, `H:MM` or `HH:MM` (00:00–23:59).
    pub fn parse(s: &str) -> Option<TimeOfDay> {
        let (h, m) = s.split_once(':').unwrap_or((s, "00"));
        let digits = |t: &str, max: usize| {
            (!t.is_empty() && t.len() <= max && t.bytes().all(|b| b.is_ascii_digit()))
                .then(|| t.bytes().fold(0u16, |n, b| n * 10 + u16::from(b - b'0')))
        };
        let (h, m) = (digits(h, 2)?, digits(m, 2).filter(|_| m.len() == 2)?);
        (h < 24 && m < 60).then_some(TimeOfDay(h * 60 + m))
    }
}

/// `minutes` later (past `24:00` it counts on, `24:30`; it never wraps to the small hours).
impl Add<u16> for TimeOfDay {
    type Output = TimeOfDay;
    fn add(self, minutes: u16) -> TimeOfDay {
        TimeOfDay(self.0.saturating_add(minutes))
    }
}

impl fmt::Display for TimeOfDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (h, m) = (self.0 / 60, self.0 % 60);
        write!(f, "{}:{}", ZeroPadded(h.into(), 2), ZeroPadded(m.into(), 2))
    }
}

#[cfg(test)]
mod tests {
    use super::TimeOfDay;

    #[test]
    fn reads_times_as_people_write_them() {
        let t = |h: u16, m: u16| Some(TimeOfDay(h * 60 + m));
        assert_eq!(TimeOfDay::parse("9"), t(9, 0));
        assert_eq!(TimeOfDay::parse("09"), t(9, 0));
        assert_eq!(TimeOfDay::parse("9:30"), t(9, 30));
        assert_eq!(TimeOfDay::parse("09:30"), t(9, 30));
        assert_eq!(TimeOfDay::parse("0"), t(0, 0));
        assert_eq!(TimeOfDay::parse("23:59"), t(23, 59));
        for bad in [
            "", "24", "9:3", "9:60", "009", ":30", "9:", "9.30", "-1", "9:30:00", "+9",
        ] {
            assert_eq!(TimeOfDay::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn shows_hours_and_minutes_and_counts_on_past_midnight() {
        let t = |m| std::format!("{}", TimeOfDay(m));
        assert_eq!(
            (t(0), t(9 * 60 + 5), t(24 * 60)),
            ("00:00".into(), "09:05".into(), "24:00".into())
        );
        assert_eq!(TimeOfDay(23 * 60 + 30) + 60, TimeOfDay(24 * 60 + 30));
        assert_eq!(TimeOfDay(u16::MAX) + 1, TimeOfDay(u16::MAX));
        assert!(TimeOfDay(600) < TimeOfDay::END_OF_DAY);
    }
}
