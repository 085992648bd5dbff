//! A floor's time zone, lent by the host: how its wall clock maps to UTC minutes and back. The
//! core holds no zone database; the desktop resolves a named zone at run time, a panel compiles
//! its one zone in.

use core::fmt::{self, Write};

use super::span::{Day, Minute, Span, WEEKDAYS};
use super::time_of_day::TimeOfDay;

/// What a wall-clock time names in UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// One instant.
    One(Minute),
    /// None: the clocks skip it (spring forward), from the wall time `from` to `to` that day.
    Skipped {
        /// The wall time the clocks leave.
        from: TimeOfDay,
        /// The wall time they jump to.
        to: TimeOfDay,
    },
    /// Two instants: the clocks repeat it (autumn), the earlier first.
    Twice(Minute, Minute),
}

/// A floor's wall clock. `wall` minutes count from 1970-01-01 00:00 on that clock.
pub trait Zone: Sync {
    /// The zone's name as people read it: `Europe/Berlin`, `UTC`.
    fn name(&self) -> &str;
    /// The wall clock's offset from UTC at UTC minute `at`, in minutes (east positive).
    fn offset(&self, at: Minute) -> i32;
    /// The UTC minute(s) wall time `wall` names.
    fn resolve(&self, wall: Minute) -> Resolved;
}

/// Coordinated Universal Time: a floor that names no zone, and a panel's default.
#[derive(Clone, Copy, Debug)]
pub struct Utc;

impl Zone for Utc {
    fn name(&self) -> &str {
        "UTC"
    }
    fn offset(&self, _: Minute) -> i32 {
        0
    }
    fn resolve(&self, wall: Minute) -> Resolved {
        Resolved::One(wall)
    }
}

/// The wall-clock minute of UTC minute `at` in `zone`.
pub fn wall(zone: &dyn Zone, at: Minute) -> Minute {
    at.saturating_add_signed(zone.offset(at))
}

/// The wall-clock day and time of UTC minute `at` in `zone`.
pub fn wall_clock(zone: &dyn Zone, at: Minute) -> (Day, TimeOfDay) {
    let w = wall(zone, at);
    let day = Day::containing(w).unwrap_or(Day::FIRST);
    (day, TimeOfDay((w % (24 * 60)) as u16))
}

/// The UTC minutes from the first wall minute of `day` up to that of the next (23 or 25 hours
/// when the clocks change that day).
pub fn day_span(zone: &dyn Zone, day: Day) -> Span {
    let first = |m: Minute| match zone.resolve(m) {
        Resolved::One(t) | Resolved::Twice(t, _) => t,
        // Midnight skipped: the day starts where the clocks jump to.
        Resolved::Skipped { from, to } => match zone.resolve(m + jump(from, to)) {
            Resolved::One(t) | Resolved::Twice(t, _) => t,
            Resolved::Skipped { .. } => m,
        },
    };
    let start = first(day.first_minute());
    let end = first(day.first_minute() + 24 * 60);
    Span {
        start,
        end: end.max(start + 1),
    }
}

/// How far the clocks jump forward from `from` to `to`, in minutes (across midnight too).
fn jump(from: TimeOfDay, to: TimeOfDay) -> Minute {
    (Minute::from(to.0) + 24 * 60 - Minute::from(from.0)) % (24 * 60)
}

/// A span as a person on the floor reads it: `Thursday 2026-09-24 at 09:30–10:15 (Europe/Berlin)`;
/// past midnight the end counts on (`23:00–24:30`).
pub struct Local<'z>(pub Span, pub &'z dyn Zone);

impl Local<'_> {
    /// The wall-clock day and time it starts.
    pub fn starts(&self) -> (Day, TimeOfDay) {
        wall_clock(self.1, self.0.start)
    }

    /// The wall-clock time it ends, counted from its first day's midnight.
    pub fn ends_at(&self) -> TimeOfDay {
        let (s, e) = (wall(self.1, self.0.start), wall(self.1, self.0.end));
        let midnight = s - s % (24 * 60);
        TimeOfDay(e.saturating_sub(midnight).min(u16::MAX.into()) as u16)
    }
}

/// Across a clock change each time shows its offset: `02:30+02:00–02:30+01:00`.
impl fmt::Display for Local<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (day, at) = self.starts();
        let name = WEEKDAYS[day.weekday()];
        f.write_char(name.as_bytes()[0].to_ascii_uppercase().into())?;
        f.write_str(&name[1..])?;
        let (from, to) = (self.1.offset(self.0.start), self.1.offset(self.0.end));
        if from == to {
            write!(f, " {day} at {at}–{} (", self.ends_at())?;
        } else {
            write!(
                f,
                " {day} at {at}{}–{}{} (",
                Offset(from),
                self.ends_at(),
                Offset(to)
            )?;
        }
        f.write_str(self.1.name())?;
        f.write_char(')')
    }
}

/// An offset from UTC in minutes, as RFC 3339 writes it: `+02:00`, `-03:30`.
struct Offset(i32);

impl fmt::Display for Offset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { '-' } else { '+' };
        let o = TimeOfDay(self.0.unsigned_abs().min(23 * 60 + 59) as u16);
        write!(f, "{sign}{o}")
    }
}

/// A UTC minute as RFC 3339 in `zone`'s wall time with its offset: `2026-09-24T09:30:00+02:00`.
pub struct Rfc3339<'z>(pub Minute, pub &'z dyn Zone);

impl fmt::Display for Rfc3339<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let offset = self.1.offset(self.0);
        let (day, at) = wall_clock(self.1, self.0);
        let (sign, o) = (if offset < 0 { '-' } else { '+' }, offset.unsigned_abs());
        let o = TimeOfDay((o.min(23 * 60 + 59)) as u16);
        write!(f, "{day}T{at}:00{sign}{o}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_shows_its_name_and_a_zero_offset() {
        let d = Day::parse("2026-09-24").unwrap();
        let s = Span {
            start: d.first_minute() + 7 * 60 + 30,
            end: d.first_minute() + 8 * 60 + 15,
        };
        assert_eq!(
            std::format!("{}", Local(s, &Utc)),
            "Thursday 2026-09-24 at 07:30–08:15 (UTC)"
        );
        assert_eq!(
            std::format!("{}", Rfc3339(s.start, &Utc)),
            "2026-09-24T07:30:00+00:00"
        );
        assert_eq!(day_span(&Utc, d).minutes(), 24 * 60);
    }

    #[test]
    fn a_jump_of_the_clocks_is_counted_across_midnight_too() {
        assert_eq!(jump(TimeOfDay(120), TimeOfDay(180)), 60);
        assert_eq!(jump(TimeOfDay(23 * 60 + 30), TimeOfDay(30)), 60);
    }
}
