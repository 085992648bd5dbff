//! A repeating booking's rule (daily or weekly on chosen weekdays, an interval, until a day or a
//! count) expanded into its occurrences at the same wall time in the floor's zone, without heap.

use core::fmt::{self, Write};

use heapless::Vec;

use super::span::{Day, Minute, Span, WEEKDAYS};
use super::time_of_day::TimeOfDay;
use super::zone::{wall_clock, Resolved, Zone};
use crate::limits::MAX_OCCURRENCES;
use crate::wire::write::Num;

/// How often a series repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Repeat {
    /// Every `every`th day.
    Daily,
    /// On its weekdays of every `every`th week.
    Weekly,
}

/// Where a series stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Until {
    /// After this many occurrences.
    Count(u16),
    /// On this day (included).
    Day(Day),
}

/// A series' rule, read from `book_room`'s arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Rule {
    /// Daily or weekly.
    pub(super) repeat: Repeat,
    /// Weekdays (bit 0 Monday … bit 6 Sunday), weekly only; 0: the first day's.
    pub(super) weekdays: u8,
    /// The interval in days or weeks (at least 1).
    pub(super) every: u16,
    /// Where it stops.
    pub(super) until: Until,
}

/// One occurrence: its span, or the day its wall time does not exist (the clocks skip it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Occ {
    /// The span it holds.
    At(Span),
    /// Its day: the wall time falls in the clocks' spring gap that night.
    Gap(Day),
}

/// A series' occurrences, in order. `MAX_OCCURRENCES` of 12 bytes each: 632 bytes with its
/// length, held across the store's awaits by `book_room`'s handling.
pub(super) type Occurrences = Vec<Occ, MAX_OCCURRENCES>;

/// Why a repeating booking's arguments name no series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SeriesError<'a> {
    /// `repeat` is neither `daily` nor `weekly`.
    Repeat(&'a str),
    /// `weekdays` names something that is not a weekday.
    Weekday(&'a str),
    /// `until` is not a date, or before the first day.
    Until(&'a str),
    /// Both `until` and `count`, or neither.
    End,
    /// More than [`MAX_OCCURRENCES`] occurrences.
    TooMany,
    /// `weekdays`, `every`, `until` or `count` without `repeat`.
    NoRepeat,
    /// Occurrences that overlap one another (a booking longer than its interval).
    Overlap,
    /// No date of the rule falls between the first day and `until` (none to book).
    NoDate,
}

impl fmt::Display for SeriesError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = super::answer::Text;
        match *self {
            SeriesError::Repeat(r) => write!(
                f,
                "'{}' is not a repeat: give repeat as daily or weekly.",
                text(r)
            ),
            SeriesError::Weekday(w) => write!(
                f,
                "'{}' is not a weekday: give weekdays as names, comma-separated (e.g. mon,thu).",
                text(w)
            ),
            SeriesError::Until(u) => write!(
                f,
                "'{}' is not a day on or after the first: give until as YYYY-MM-DD.",
                text(u)
            ),
            SeriesError::End => {
                f.write_str("A repeating booking ends: give until (YYYY-MM-DD) or count, not both.")
            }
            SeriesError::TooMany => write!(
                f,
                "A repeating booking has at most {} occurrences: give an earlier until or a \
                 smaller count.",
                Num(MAX_OCCURRENCES as i64)
            ),
            SeriesError::NoRepeat => {
                f.write_str("weekdays, every, until and count go with repeat (daily or weekly).")
            }
            SeriesError::Overlap => f.write_str(
                "The occurrences would overlap one another: make the booking shorter than its \
                 interval.",
            ),
            SeriesError::NoDate => f.write_str(
                "Nothing booked: no date of the series falls between the first day and until \
                 (give a later until, or other weekdays).",
            ),
        }
    }
}

/// The rule `book_room`'s series arguments name (`None` without `repeat`).
pub(super) fn rule<'a>(
    repeat: Option<&'a str>,
    weekdays: Option<&'a str>,
    every: Option<u16>,
    until: Option<&'a str>,
    count: Option<u16>,
) -> Result<Option<Rule>, SeriesError<'a>> {
    let Some(r) = repeat else {
        return match (weekdays, every, until, count) {
            (None, None, None, None) => Ok(None),
            _ => Err(SeriesError::NoRepeat),
        };
    };
    let repeat = if r.eq_ignore_ascii_case("daily") {
        Repeat::Daily
    } else if r.eq_ignore_ascii_case("weekly") {
        Repeat::Weekly
    } else {
        return Err(SeriesError::Repeat(r));
    };
    let mut days = 0u8;
    for w in weekdays.into_iter().flat_map(|w| w.split(',')) {
        let w = w.trim();
        let named =
            |d: &&str| w.len() >= 2 && d.len() >= w.len() && d[..w.len()].eq_ignore_ascii_case(w);
        match WEEKDAYS.iter().position(named) {
            Some(i) if repeat == Repeat::Weekly => days |= 1 << i,
            _ => return Err(SeriesError::Weekday(w)),
        }
    }
    let until = match (until, count) {
        (Some(u), None) => Until::Day(Day::parse(u).ok_or(SeriesError::Until(u))?),
        (None, Some(n)) if usize::from(n) > MAX_OCCURRENCES => return Err(SeriesError::TooMany),
        (None, Some(n)) => Until::Count(n),
        _ => return Err(SeriesError::End),
    };
    Ok(Some(Rule {
        repeat,
        weekdays: days,
        every: every.unwrap_or(1).max(1),
        until,
    }))
}

/// The occurrences of `rule` from the day of `first` (its wall time and length each day in
/// `zone`): the same wall time every day it falls on (across a clock change too), a day whose
/// wall time the clocks skip a [`Occ::Gap`], a repeated one its first time (but on the first
/// day `first` itself: the time the booking asked or picked). None to book is an error.
pub(super) fn expand<'a>(
    zone: &dyn Zone,
    first: Span,
    rule: &Rule,
    until_arg: &'a str,
) -> Result<Occurrences, SeriesError<'a>> {
    let (day0, at) = wall_clock(zone, first.start);
    let length = first.minutes();
    let weekdays = match rule.weekdays {
        0 => 1 << day0.weekday(),
        w => w,
    };
    let (wanted, last) = match rule.until {
        Until::Count(n) => (usize::from(n), None),
        Until::Day(d) if d < day0 => return Err(SeriesError::Until(until_arg)),
        Until::Day(d) => (MAX_OCCURRENCES + 1, Some(d)),
    };
    let monday0 = day0.first_minute() / DAY - day0.weekday() as Minute;
    let mut found = Occurrences::new();
    let mut day = Some(day0);
    while let Some(d) = day.filter(|d| last.is_none_or(|l| *d <= l)) {
        if found.len() == wanted {
            break;
        }
        let n = d.first_minute() / DAY;
        let on = match rule.repeat {
            Repeat::Daily => {
                (n - day0.first_minute() / DAY).is_multiple_of(Minute::from(rule.every))
            }
            Repeat::Weekly => {
                weekdays & (1 << d.weekday()) != 0
                    && ((n - monday0) / 7).is_multiple_of(Minute::from(rule.every))
            }
        };
        if on {
            let occ = match zone.resolve(d.first_minute() + Minute::from(at.0)) {
                // The first day's time is the one asked (or picked, where the clocks repeat it).
                _ if d == day0 => Occ::At(first),
                Resolved::One(t) | Resolved::Twice(t, _) => {
                    Occ::At(Span::new(t, t + length).ok_or(SeriesError::TooMany)?)
                }
                Resolved::Skipped { .. } => Occ::Gap(d),
            };
            if let (Some(Occ::At(prev)), Occ::At(this)) = (last_span(&found), occ) {
                if this.start < prev.end {
                    return Err(SeriesError::Overlap);
                }
            }
            found.push(occ).map_err(|_| SeriesError::TooMany)?;
        }
        day = d.next();
    }
    if !found.iter().any(|o| matches!(o, Occ::At(_))) {
        return Err(SeriesError::NoDate);
    }
    Ok(found)
}

/// Minutes in a day.
const DAY: Minute = 24 * 60;

/// The last occurrence that holds a span.
fn last_span(found: &Occurrences) -> Option<Occ> {
    found
        .iter()
        .rev()
        .find(|o| matches!(o, Occ::At(_)))
        .copied()
}

/// The day an occurrence falls on, in `zone`.
pub(super) fn day_of(zone: &dyn Zone, o: &Occ) -> Day {
    match *o {
        Occ::At(s) => wall_clock(zone, s.start).0,
        Occ::Gap(d) => d,
    }
}

/// A series as people read it: `Weekly on Thu 09:30–10:15 (Europe/Berlin)`.
pub(super) struct Summary<'z> {
    /// Its rule.
    pub(super) rule: Rule,
    /// Its first occurrence's span (its wall time and weekday).
    pub(super) first: Span,
    /// The floor's zone.
    pub(super) zone: &'z dyn Zone,
}

impl fmt::Display for Summary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let local = super::zone::Local(self.first, self.zone);
        let (day, at) = local.starts();
        let every = self.rule.every;
        match (self.rule.repeat, every) {
            (Repeat::Daily, 1) => f.write_str("Daily")?,
            (Repeat::Daily, n) => write!(f, "Every {} days", Num(n.into()))?,
            (Repeat::Weekly, 1) => f.write_str("Weekly on ")?,
            (Repeat::Weekly, n) => write!(f, "Every {} weeks on ", Num(n.into()))?,
        }
        if self.rule.repeat == Repeat::Weekly {
            let days = match self.rule.weekdays {
                0 => 1 << day.weekday(),
                w => w,
            };
            let mut sep = "";
            for (i, name) in WEEKDAYS.iter().enumerate() {
                if days & (1 << i) != 0 {
                    f.write_str(sep)?;
                    f.write_char(char::from(name.as_bytes()[0].to_ascii_uppercase()))?;
                    f.write_str(&name[1..3])?;
                    sep = ", ";
                }
            }
        }
        let end: TimeOfDay = local.ends_at();
        write!(f, " {at}–{end} ({})", self.zone.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::booking::zone::Utc;

    /// Berlin around the spring change of 2027 (2027-03-28 01:00 UTC: 02:00 becomes 03:00).
    struct Spring;

    fn change() -> Minute {
        Day::parse("2027-03-28").unwrap().first_minute() + 60
    }

    impl Zone for Spring {
        fn name(&self) -> &str {
            "Europe/Berlin"
        }
        fn offset(&self, at: Minute) -> i32 {
            if at < change() {
                60
            } else {
                120
            }
        }
        fn resolve(&self, wall: Minute) -> Resolved {
            let (gap_from, gap_to) = (change() + 60, change() + 120);
            if wall < gap_from {
                Resolved::One(wall - 60)
            } else if wall < gap_to {
                Resolved::Skipped {
                    from: TimeOfDay(120),
                    to: TimeOfDay(180),
                }
            } else {
                Resolved::One(wall - 120)
            }
        }
    }

    fn span(zone: &dyn Zone, day: &str, at: u16, minutes: u32) -> Span {
        let Resolved::One(t) =
            zone.resolve(Day::parse(day).unwrap().first_minute() + Minute::from(at))
        else {
            panic!("no such time")
        };
        Span::new(t, t + minutes).unwrap()
    }

    fn weekly(count: u16) -> Rule {
        rule(Some("weekly"), None, None, None, Some(count))
            .unwrap()
            .unwrap()
    }

    #[test]
    fn a_weekly_series_of_twelve_falls_on_the_same_weekday_and_time() {
        let first = span(&Utc, "2026-12-10", 9 * 60 + 30, 45);
        let occ = expand(&Utc, first, &weekly(12), "").unwrap();
        assert_eq!(occ.len(), 12);
        assert_eq!(occ[0], Occ::At(first));
        assert_eq!(day_of(&Utc, &occ[11]), Day::parse("2027-02-25").unwrap());
        for o in &occ {
            assert_eq!(day_of(&Utc, o).weekday(), 3);
        }
    }

    #[test]
    fn a_weekly_wall_time_stays_across_the_clock_change_and_a_gap_is_marked() {
        let first = span(&Spring, "2027-03-18", 9 * 60 + 30, 45);
        let occ = expand(&Spring, first, &weekly(3), "").unwrap();
        let wall = |o: &Occ| match o {
            Occ::At(s) => wall_clock(&Spring, s.start).1,
            Occ::Gap(_) => panic!("gap"),
        };
        assert!(occ.iter().all(|o| wall(o) == TimeOfDay(9 * 60 + 30)));
        // In UTC the later two start an hour earlier.
        let Occ::At(last) = occ[2] else { panic!() };
        assert_eq!(last.start - first.start, 14 * DAY - 60);
        // 02:30 on the Sunday of the change does not exist.
        let night = span(&Spring, "2027-03-21", 2 * 60 + 30, 30);
        let occ = expand(&Spring, night, &weekly(2), "").unwrap();
        assert_eq!(occ[1], Occ::Gap(Day::parse("2027-03-28").unwrap()));
    }

    #[test]
    fn weekdays_an_interval_and_until_pick_the_days() {
        let r = rule(
            Some("weekly"),
            Some("mon, Thursday"),
            Some(2),
            Some("2026-12-31"),
            None,
        )
        .unwrap()
        .unwrap();
        // Monday 2026-11-30: that week's Mon and Thu, then the week after next's.
        let first = span(&Utc, "2026-11-30", 600, 60);
        let days: std::vec::Vec<_> = expand(&Utc, first, &r, "")
            .unwrap()
            .iter()
            .map(|o| std::format!("{}", day_of(&Utc, o)))
            .collect();
        assert_eq!(
            days,
            [
                "2026-11-30",
                "2026-12-03",
                "2026-12-14",
                "2026-12-17",
                "2026-12-28",
                "2026-12-31"
            ]
        );
        let daily = rule(Some("daily"), None, Some(3), None, Some(3))
            .unwrap()
            .unwrap();
        let occ = expand(&Utc, first, &daily, "").unwrap();
        assert_eq!(day_of(&Utc, &occ[2]), Day::parse("2026-12-06").unwrap());
    }

    #[test]
    fn a_rule_past_the_bound_or_malformed_is_refused_with_its_reason() {
        assert_eq!(
            rule(Some("weekly"), None, None, None, Some(53)),
            Err(SeriesError::TooMany)
        );
        let r = rule(Some("daily"), None, None, Some("2027-12-31"), None)
            .unwrap()
            .unwrap();
        let first = span(&Utc, "2026-12-10", 600, 60);
        assert_eq!(expand(&Utc, first, &r, ""), Err(SeriesError::TooMany));
        assert_eq!(
            rule(Some("monthly"), None, None, None, Some(2)),
            Err(SeriesError::Repeat("monthly"))
        );
        assert_eq!(
            rule(Some("weekly"), Some("mon,xx"), None, None, Some(2)),
            Err(SeriesError::Weekday("xx"))
        );
        assert_eq!(
            rule(Some("weekly"), None, None, None, None),
            Err(SeriesError::End)
        );
        assert_eq!(
            rule(None, None, None, None, Some(3)),
            Err(SeriesError::NoRepeat)
        );
        assert_eq!(rule(None, None, None, None, None), Ok(None));
        let long = span(&Utc, "2026-12-10", 600, 1440);
        let daily = rule(Some("daily"), None, None, None, Some(2))
            .unwrap()
            .unwrap();
        assert!(expand(&Utc, long, &daily, "").is_ok());
    }

    #[test]
    fn a_series_reads_as_its_rule() {
        let first = span(&Utc, "2026-12-10", 9 * 60 + 30, 45);
        let s = Summary {
            rule: weekly(12),
            first,
            zone: &Utc,
        };
        assert_eq!(std::format!("{s}"), "Weekly on Thu 09:30–10:15 (UTC)");
    }
}
