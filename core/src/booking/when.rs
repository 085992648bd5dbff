//! The time a booking call names: its day, start and length on the floor's grid and wall
//! clock, resolved to UTC minutes (refused in a clock change's gap, two answers in its repeat).

use core::fmt;

use super::answer::{complete, fail, Text};
use super::floor::Floor;
use super::read::{day, time, DayArg};
use super::report::NotBooked;
use super::span::{Minute, Span};
use super::time_of_day::TimeOfDay;
use super::tools::BookArgs;
use super::zone::{wall, Local, Resolved, Rfc3339, Zone};
use crate::engine::{Call, CallError, Done, Msg, Reply};
use crate::mrtr::Choice;
use crate::typed::{Elicited, Offer, Pick, Round, Sealed};
use crate::wire::write::Num;
use redmark_macros::Question;

/// What a call's time is in UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Times {
    /// One span.
    One(Span),
    /// Two: the start is a wall time the clocks repeat (autumn); the earlier first.
    Twice(Span, Span),
}

/// Why the arguments name no time to book.
pub(super) enum BadTime<'a> {
    /// `day` names no day.
    Day(&'a str),
    /// `day` is a word and the server's clock is not set.
    NeedsClock(&'a str),
    /// Neither `start` nor `hour`, or both.
    Start,
    /// `start` is not a time of day.
    Time(&'a str),
    /// Off the floor's grid (its step in minutes).
    Grid(u16),
    /// Longer than the floor allows (its limit in minutes).
    Long(u16),
    /// A wall time the clocks skip: the day, the time asked, and the jump.
    Skipped(crate::booking::Day, TimeOfDay, TimeOfDay, TimeOfDay),
    /// In a zone whose offset may not apply to this day (outside 2000–2999).
    OutOfRange,
}

impl core::fmt::Display for BadTime<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            BadTime::Day(d) => write!(
                f,
                "'{}' is not a day: give day as YYYY-MM-DD, today, tomorrow or a weekday.",
                Text(d)
            ),
            BadTime::NeedsClock(d) => write!(
                f,
                "The server's clock is not set, so '{}' names no day yet: give day as YYYY-MM-DD.",
                Text(d)
            ),
            BadTime::Start => f.write_str(
                "Give the start time as start (e.g. 9:30), or the whole hour as hour (0-23), \
                 not both.",
            ),
            BadTime::Time(t) => write!(
                f,
                "'{}' is not a time of day: give start as H, HH, H:MM or HH:MM (e.g. 9:30).",
                Text(t)
            ),
            BadTime::Grid(g) => write!(
                f,
                "This floor books in steps of {} minutes: start on one (e.g. 09:00 or 09:{}) and \
                 give minutes as a multiple of {}.",
                Num(g.into()),
                Num((g % 60).into()),
                Num(g.into())
            ),
            BadTime::Long(m) => write!(
                f,
                "A booking lasts at most {} minutes on this floor.",
                Num(m.into())
            ),
            BadTime::Skipped(day, at, from, to) => write!(
                f,
                "{at} does not exist on {day} on this floor's clock: the clocks go forward from \
                 {from} to {to} that night. Give another start (e.g. {to})."
            ),
            BadTime::OutOfRange => f.write_str("Give a day in the years 2000-2999."),
        }
    }
}

/// The span a `day`, a `start` or `hour`, and `minutes` (default 60) name on `floor`'s grid
/// and wall clock, `now` being today's clock.
pub(super) fn when<'a>(
    floor: Floor<'_>,
    day_arg: &'a str,
    start: Option<&'a str>,
    hour: Option<i64>,
    minutes: Option<u16>,
    now: u64,
) -> Result<Times, BadTime<'a>> {
    let day = match day(day_arg, now, floor.zone) {
        DayArg::Day(d) => d,
        DayArg::NeedsClock => return Err(BadTime::NeedsClock(day_arg)),
        DayArg::Unknown => return Err(BadTime::Day(day_arg)),
    };
    let start = match (start, hour) {
        (Some(s), None) => time(s).ok_or(BadTime::Time(s))?.0,
        // The schema bounds `hour` to 0-23.
        (None, Some(h)) => u16::try_from(h).map_err(|_| BadTime::Start)? * 60,
        _ => return Err(BadTime::Start),
    };
    let minutes = minutes.unwrap_or(60);
    let grid = floor.grid.max(1);
    if !start.is_multiple_of(grid) || !minutes.is_multiple_of(grid) {
        return Err(BadTime::Grid(grid));
    }
    if minutes > floor.max_minutes {
        return Err(BadTime::Long(floor.max_minutes));
    }
    let length = Minute::from(minutes);
    let span = |from: Minute| Span::new(from, from + length).ok_or(BadTime::OutOfRange);
    match floor.zone.resolve(day.first_minute() + Minute::from(start)) {
        Resolved::One(from) => Ok(Times::One(span(from)?)),
        Resolved::Twice(a, b) => Ok(Times::Twice(span(a)?, span(b)?)),
        Resolved::Skipped { from, to } => Err(BadTime::Skipped(day, TimeOfDay(start), from, to)),
    }
}

/// Which of the two times a repeated wall time names: asked only then.
#[derive(Question)]
#[question(key = "time")]
struct WhichTime {
    /// The clocks show this time twice that night
    #[field(title = "Start")]
    start: Pick<2>,
}

/// One of a repeated wall time's two spans, as offered: `02:30–03:30, the first time
/// (2026-10-25T02:30:00+02:00)`.
struct Repeat<'z>(Span, &'z dyn Zone, &'static str);

impl fmt::Display for Repeat<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let local = Local(self.0, self.1);
        let (_, at) = local.starts();
        write!(
            f,
            "{at}–{}, {} ({})",
            local.ends_at(),
            self.2,
            Rfc3339(self.0.start, self.1)
        )
    }
}

/// What [`time_of`] came to: the span (with the reply still to be given), or the call's answer.
pub(super) enum Timed<'w, 'b> {
    Span(Span, Reply<'w, 'b>),
    Answered(Done),
}

/// The span a `book_room` call books: the one its question showed (sealed in its state), else
/// the one its arguments name; a wall time the clocks repeat is asked about first.
pub(super) fn time_of<'w, 'b>(
    floor: Floor<'_>,
    args: &BookArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'w, 'b>,
) -> Result<Timed<'w, 'b>, CallError> {
    // Asked before: book the time the question showed (a `thursday` asked before midnight is
    // still that Thursday).
    if let Some(s) = <(Minute, Minute)>::unseal(call).and_then(|(a, b)| Span::new(a, b)) {
        return Ok(Timed::Span(s, reply));
    }
    let repeat = <(Minute, Minute, Minute)>::unseal(call).and_then(|(a, b, length)| {
        Some(Times::Twice(
            Span::new(a, a + length)?,
            Span::new(b, b + length)?,
        ))
    });
    let (day, start, hour, minutes) = (args.day, args.start, args.hour, args.minutes);
    let times = match repeat.map_or_else(|| when(floor, day, start, hour, minutes, call.now), Ok) {
        Ok(t) => t,
        Err(why) => return Ok(Timed::Answered(fail(reply, &Msg(format_args!("{why}"))))),
    };
    let (a, b) = match times {
        Times::One(s) => return Ok(Timed::Span(s, reply)),
        Times::Twice(a, b) => (a, b),
    };
    let zone = floor.zone;
    let (first, second) = (
        Repeat(a, zone, "the first time"),
        Repeat(b, zone, "the second time"),
    );
    let offer: Offer<'_, 2> = [("first", &first), ("second", &second)]
        .into_iter()
        .map(|(value, title)| Choice {
            value,
            title: title as &dyn fmt::Display,
        })
        .collect();
    let (on, at) = Local(a, zone).starts();
    let message = Msg(format_args!(
        "{at} comes twice on {on} on this floor's clock ({}): the clocks go back that night. \
         Which do you mean?",
        Text(zone.name())
    ));
    let state = (a.start, b.start, a.minutes()).seal();
    Ok(
        match reply.question_offering::<WhichTime>(call, &message, &state, &offer)? {
            Round::Sent(done) => Timed::Answered(done),
            Round::Answer(Elicited::Accepted(WhichTime { start }), reply) => {
                Timed::Span(if start.index() == 0 { a } else { b }, reply)
            }
            Round::Answer(Elicited::Declined, reply) => {
                Timed::Answered(complete(reply, &NotBooked::Declined))
            }
            Round::Answer(Elicited::Cancelled, reply) => {
                Timed::Answered(complete(reply, &NotBooked::Cancelled))
            }
        },
    )
}

/// Today's first start on the floor's grid at or after unix time `now`, in UTC minutes.
pub(super) fn earliest(floor: Floor<'_>, now: u64) -> Option<Minute> {
    let m = crate::booking::minute_of(now.saturating_add(59))?;
    let grid = Minute::from(floor.grid.max(1));
    let local = wall(floor.zone, m);
    let aligned = local.div_ceil(grid) * grid;
    Some(m + (aligned - local))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::booking::{Day, DEFAULT_FLOOR};

    #[test]
    fn the_earliest_start_is_the_next_step_of_the_grid() {
        let day = |d: &str, h: u32, m: u32| Day::parse(d).unwrap().first_minute() + h * 60 + m;
        let floor = |grid| Floor {
            grid,
            ..DEFAULT_FLOOR
        };
        let now = 1_790_000_000; // 2026-09-21 14:13:20 UTC
        assert_eq!(earliest(floor(60), now), Some(day("2026-09-21", 15, 0)));
        assert_eq!(earliest(floor(15), now), Some(day("2026-09-21", 14, 15)));
        let leap_day_23h = 1_835_478_000; // 2028-02-29T23:00:00Z
        assert_eq!(
            earliest(floor(15), leap_day_23h),
            Some(day("2028-02-29", 23, 0))
        );
        assert_eq!(
            earliest(floor(60), leap_day_23h + 1),
            Some(day("2028-03-01", 0, 0))
        );
    }
}
