//! The time a booking call names: its day, start and length on the floor's grid and wall
//! clock, resolved to UTC minutes (refused in a clock change's gap, two answers in its repeat).

use super::answer::{fail, Text};
use super::floor::{Floor, Here};
use super::read::{day, DayArg};
use super::span::{Minute, Span};
use super::time_of_day::TimeOfDay;
use super::tools::BookArgs;
use super::zone::Resolved;
use crate::engine::{Call, CallError, Done, Msg, Reply};
use crate::typed::Sealed;
use crate::wire::write::Num;

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
    /// Outside the floor's opening hours (they open, they close).
    #[cfg(feature = "opening-hours")]
    Closed(TimeOfDay, TimeOfDay),
    /// A wall time the clocks skip: the day, the time asked, and the jump.
    Skipped(crate::booking::Day, TimeOfDay, TimeOfDay, TimeOfDay),
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
            #[cfg(feature = "opening-hours")]
            BadTime::Closed(open, close) => write!(
                f,
                "This floor is open {open}–{close}: a booking starts and ends within those hours."
            ),
            BadTime::Skipped(day, at, from, to) => {
                write!(f, "{at} does not exist on {day} on this floor's clock")?;
                // (A panel's zone has no clock changes: it leaves the why out.)
                #[cfg(feature = "clock-changes")]
                write!(
                    f,
                    ": the clocks go forward from {from} to {to} that night. Give another start \
                     (e.g. {to})"
                )?;
                #[cfg(not(feature = "clock-changes"))]
                let _ = (from, to);
                f.write_str(".")
            }
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
        (Some(s), None) => TimeOfDay::parse(s).ok_or(BadTime::Time(s))?.0,
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
    #[cfg(feature = "opening-hours")]
    if let Some((open, close)) = floor.open {
        if start < open.0 || start.saturating_add(minutes) > close.0 {
            return Err(BadTime::Closed(open, close));
        }
    }
    let length = Minute::from(minutes);
    let span = |from: Minute| Span::new(from, from + length).ok_or(BadTime::Day(day_arg));
    match floor.zone.resolve(day.first_minute() + Minute::from(start)) {
        Resolved::One(from) => Ok(Times::One(span(from)?)),
        Resolved::Twice(a, b) => Ok(Times::Twice(span(a)?, span(b)?)),
        Resolved::Skipped { from, to } => Err(BadTime::Skipped(day, TimeOfDay(start), from, to)),
    }
}

/// Whether `span` starts and ends within `floor`'s opening hours on its wall clock (always on
/// a floor without them).
#[cfg(feature = "offer-instead")]
pub(super) fn within_hours(floor: Floor<'_>, span: Span) -> bool {
    #[cfg(feature = "opening-hours")]
    if let Some((open, close)) = floor.open {
        let local = super::zone::Local(span, floor.zone);
        return local.starts().1 .0 >= open.0 && local.ends_at().0 <= close.0;
    }
    let _ = (floor, span);
    true
}

/// The building a `book_room` question's state carries, if it carries one (the room, time and
/// instead questions' states: the span or the repeated times, then the building).
#[cfg(feature = "campus")]
pub(super) fn sealed_building(call: &Call<'_>) -> Option<u8> {
    let p = call.payload();
    let sizes = [
        <(Minute, Minute, Here)>::SIZE,
        <(Minute, Minute, Minute, Here)>::SIZE,
        #[cfg(feature = "series")]
        <((Minute, Minute), u64, u16, Here)>::SIZE,
    ];
    p.last().copied().filter(|_| sizes.contains(&p.len()))
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
    here: Here,
) -> Result<Timed<'w, 'b>, CallError> {
    // Asked before: book the time the question showed (a `thursday` asked before midnight is
    // still that Thursday).
    if let Some(s) = <(Minute, Minute, Here)>::unseal(call).and_then(|(a, b, _)| Span::new(a, b)) {
        return Ok(Timed::Span(s, reply));
    }
    // Asked about a series' clashes: its first time, as the question showed it.
    #[cfg(feature = "series")]
    if let Some((s, _)) = super::series_book::sealed_series(floor, call) {
        return Ok(Timed::Span(s, reply));
    }
    // Asked which of a repeated time: the two it offered.
    #[cfg(feature = "clock-changes")]
    let repeat = <(Minute, Minute, Minute, Here)>::unseal(call).and_then(|(a, b, length, _)| {
        Some(Times::Twice(
            Span::new(a, a + length)?,
            Span::new(b, b + length)?,
        ))
    });
    #[cfg(not(feature = "clock-changes"))]
    let repeat = None;
    let (day, start, hour, minutes) = (args.day, args.start, args.hour, args.minutes);
    let times = match repeat.map_or_else(|| when(floor, day, start, hour, minutes, call.now), Ok) {
        Ok(t) => t,
        Err(why) => return Ok(Timed::Answered(fail(reply, &Msg(format_args!("{why}"))))),
    };
    let (a, b) = match times {
        Times::One(s) => return Ok(Timed::Span(s, reply)),
        Times::Twice(a, b) => (a, b),
    };
    #[cfg(feature = "clock-changes")]
    return Ok(
        match super::repeat::ask_which(floor, call, reply, a, b, here)? {
            Ok((span, reply)) => Timed::Span(span, reply),
            Err(done) => Timed::Answered(done),
        },
    );
    // Without asking, the first of the two.
    #[cfg(not(feature = "clock-changes"))]
    {
        let _ = (b, here);
        Ok(Timed::Span(a, reply))
    }
}
