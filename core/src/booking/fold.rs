//! A series in `list_bookings`, shown once: whether an occurrence is the one a listing shows,
//! and the series as one line (its rule, dates and exceptions), read with
//! [`Store::next_in_series`].

use core::fmt;

use heapless::Vec;

use super::floor::{Floor, Locate, Room};
use super::report::title;
use super::series::{Repeat, Rule, Summary, Until};
use super::span::{Day, Minute};
use super::store::{Booking, BookingId, RoomId, Status, Store, StoreError};
use super::zone::{wall_clock, Zone};
use crate::limits::{MAX_EXCEPTIONS_NAMED, MAX_ID_RUNS};
use crate::wire::write::{Num, Writer};

/// How an occurrence differs from its series.
#[derive(Clone, Copy, Debug)]
enum Differs<'r> {
    Cancelled,
    Released,
    /// In another room (`None`: one the floor no longer serves).
    Elsewhere(Option<&'r Room<'r>>),
}

/// An occurrence that differs from its series.
#[derive(Clone, Copy, Debug)]
struct Exception<'r> {
    id: BookingId,
    start: Minute,
    how: Differs<'r>,
}

/// A series' exceptions: the first [`MAX_EXCEPTIONS_NAMED`], in id order, and how many more.
#[derive(Debug, Default)]
struct Exceptions<'r> {
    named: Vec<Exception<'r>, MAX_EXCEPTIONS_NAMED>,
    unnamed: u8,
}

impl<'r> Exceptions<'r> {
    fn add(&mut self, e: Exception<'r>) {
        if self.named.push(e).is_err() {
            self.unnamed = self.unnamed.saturating_add(1);
        }
    }
}

/// A series as `list_bookings` shows it, on the line of its first occurrence listed: 208
/// bytes on a 64-bit host, kept for each series of a page
/// ([`MAX_SERIES_LISTED`](crate::limits::MAX_SERIES_LISTED)) while the page is read.
#[derive(Debug)]
pub(super) struct Fold<'r> {
    /// The series' id (its first booking's).
    pub(super) series: BookingId,
    /// Daily or weekly, read from the occurrences' days.
    rule: Rule,
    /// Its occurrences, every status.
    count: u8,
    /// The first and last occurrence's start.
    first: Minute,
    last: Minute,
    /// The series' own room: the one most of its occurrences are in.
    room: RoomId,
    exceptions: Exceptions<'r>,
    /// Its bookings' ids as runs of consecutive ids (first, how many).
    ids: Vec<(BookingId, u8), MAX_ID_RUNS>,
    /// Ids past those runs, not named.
    ids_unnamed: u8,
}

/// The days and weeks between a series' occurrences, gathered while it is walked.
struct Cadence {
    /// The first occurrence's day and Monday (days since 1970-01-01).
    day0: u32,
    monday0: u32,
    /// The greatest common divisor of the days (and weeks) from the first occurrence.
    days: u32,
    weeks: u32,
    /// The weekdays met (bit 0 Monday).
    weekdays: u8,
}

impl Cadence {
    fn new() -> Self {
        Cadence {
            day0: u32::MAX,
            monday0: 0,
            days: 0,
            weeks: 0,
            weekdays: 0,
        }
    }

    /// Adds an occurrence on `day`.
    fn add(&mut self, day: Day) {
        let n = day.first_minute() / DAY;
        let monday = n - day.weekday() as u32;
        if self.day0 == u32::MAX {
            (self.day0, self.monday0) = (n, monday);
        }
        self.days = gcd(self.days, n.abs_diff(self.day0));
        self.weeks = gcd(self.weeks, monday.abs_diff(self.monday0) / 7);
        self.weekdays |= 1 << day.weekday();
    }

    /// The rule of `count` occurrences from `first` to `last`: daily when they fall every n
    /// days (each such day booked, or every weekday met), else weekly on the weekdays met.
    fn rule(&self, count: u8, first: Day, last: Day) -> Rule {
        let span = (last.first_minute() - first.first_minute()) / DAY;
        let every_nth = self.days > 0 && span / self.days + 1 == u32::from(count);
        let daily = !self.days.is_multiple_of(7) && (every_nth || self.weekdays == 0x7f);
        let (repeat, every) = match daily {
            true => (Repeat::Daily, self.days),
            false => (Repeat::Weekly, self.weeks.max(1)),
        };
        Rule {
            repeat,
            weekdays: self.weekdays,
            every: u16::try_from(every).unwrap_or(u16::MAX),
            until: Until::Count(count.into()),
        }
    }
}

/// Minutes in a day.
const DAY: Minute = 24 * 60;

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// What a listing does with an occurrence of a series it meets.
// Returned once per series met and moved into the page: without a heap there is no box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(super) enum Met<'r> {
    /// An earlier occurrence is the one the listing shows (on this page or an earlier one).
    Skip,
    /// Listed as it is: the store finds no series (a store without series).
    AsIs,
    /// Listed for the whole series.
    Fold(Fold<'r>),
}

/// What a listing from `from` does with `b`, an occurrence of series `series` it met. Walks
/// the series once, in id order (at most [`MAX_OCCURRENCES`](crate::limits::MAX_OCCURRENCES)
/// reads), stopping at an earlier occurrence the listing shows.
pub(super) async fn fold<'r, S: Store>(
    store: &mut S,
    site: &[Floor<'r>],
    b: &Booking,
    series: BookingId,
    from: Minute,
) -> Result<Met<'r>, StoreError> {
    let zone = site.locate(&b.new.room).1;
    let shown_at = (b.new.span.start, b.new.room.as_str());
    let mut fold = Fold {
        series,
        rule: Cadence::new().rule(0, Day::FIRST, Day::FIRST),
        count: 0,
        first: Minute::MAX,
        last: 0,
        room: b.new.room.clone(),
        exceptions: Exceptions::default(),
        ids: Vec::new(),
        ids_unnamed: 0,
    };
    let mut cadence = Cadence::new();
    // A series is in at most two rooms (its own and, for some dates, another): the
    // exceptions as they are with either as its own, until it is known which most are in.
    let mut other: Option<RoomId> = None;
    let (mut in_first, mut in_other) = (0u8, 0u8);
    let mut if_other = Exceptions::default();
    let mut after = series.saturating_sub(1);
    while let Some(o) = store.next_in_series(series, after).await? {
        after = o.id;
        let listed = o.status != Status::Cancelled && o.new.span.end > from;
        if listed && (o.new.span.start, o.new.room.as_str()) < shown_at {
            return Ok(Met::Skip);
        }
        if fold.count == 0 {
            fold.room = o.new.room.clone();
        }
        fold.count = fold.count.saturating_add(1);
        fold.first = fold.first.min(o.new.span.start);
        fold.last = fold.last.max(o.new.span.start);
        cadence.add(wall_clock(zone, o.new.span.start).0);
        fold.add_id(o.id);
        let in_own = o.new.room == fold.room;
        if !in_own && other.is_none() {
            other = Some(o.new.room.clone());
        }
        let in_second = other.as_ref() == Some(&o.new.room);
        let elsewhere = Differs::Elsewhere(site.locate(&o.new.room).0);
        let at = |how| Exception {
            id: o.id,
            start: o.new.span.start,
            how,
        };
        match o.status {
            Status::Active if in_own => {
                in_first = in_first.saturating_add(1);
                if_other.add(at(elsewhere));
            }
            Status::Active => {
                in_other = in_other.saturating_add(u8::from(in_second));
                fold.exceptions.add(at(elsewhere));
                if !in_second {
                    if_other.add(at(elsewhere));
                }
            }
            status => {
                let how = match status {
                    Status::Released => Differs::Released,
                    _ => Differs::Cancelled,
                };
                fold.exceptions.add(at(how));
                if_other.add(at(how));
            }
        }
    }
    if fold.count == 0 {
        return Ok(Met::AsIs);
    }
    if let Some(room) = other.filter(|_| in_other > in_first) {
        (fold.room, fold.exceptions) = (room, if_other);
    }
    let day = |m| wall_clock(zone, m).0;
    fold.rule = cadence.rule(fold.count, day(fold.first), day(fold.last));
    Ok(Met::Fold(fold))
}

impl<'r> Fold<'r> {
    /// Adds booking `id` to the runs of ids.
    fn add_id(&mut self, id: BookingId) {
        if let Some((first, n)) = self.ids.last_mut() {
            if first.checked_add(u32::from(*n)) == Some(id) && *n < u8::MAX {
                *n += 1;
                return;
            }
        }
        if self.ids.push((id, 1)).is_err() {
            self.ids_unnamed = self.ids_unnamed.saturating_add(1);
        }
    }

    /// The line of `b`, the occurrence listed: `Weekly on Thu 09:30–10:15 (UTC) in The Atrium,
    /// "Sync", 12 from 2026-10-01 to 2026-12-17 — series bk_1; except 2026-10-15 in Studio B,
    /// 2026-10-22 cancelled`.
    pub(super) fn text(
        &self,
        f: &mut dyn fmt::Write,
        b: &Booking,
        site: &[Floor<'r>],
    ) -> fmt::Result {
        let (room, zone) = site.locate(&self.room);
        let summary = Summary {
            rule: self.rule,
            first: b.new.span,
            zone,
        };
        write!(f, "{summary} in ")?;
        f.write_str(room.map_or(self.room.as_str(), |r| r.name))?;
        title(f, b)?;
        let day = |m| wall_clock(zone, m).0;
        write!(
            f,
            ", {} from {} to {} — series bk_{}",
            Num(self.count.into()),
            day(self.first),
            day(self.last),
            Num(self.series.into())
        )?;
        for (i, e) in self.exceptions.named.iter().enumerate() {
            let sep = if i == 0 { "; except " } else { ", " };
            write!(f, "{sep}{} ", day(e.start))?;
            match e.how {
                Differs::Cancelled => f.write_str("cancelled")?,
                Differs::Released => f.write_str("released (not checked in)")?,
                Differs::Elsewhere(Some(r)) => write!(f, "in {}", r.name)?,
                Differs::Elsewhere(None) => f.write_str("in another room")?,
            }
        }
        if self.exceptions.unnamed > 0 {
            write!(f, ", and {} more", Num(self.exceptions.unnamed.into()))?;
        }
        Ok(())
    }

    /// The `series` object of the booking listed: `{id, count, first, last, exceptions: [{id,
    /// day, status | room_id}], occurrences: [{first, last}]}`, its bookings' ids as runs of
    /// consecutive ids (52 ids a line would not fit a full page in `OUT`); `more_exceptions`
    /// and `more_occurrences` count those not named.
    pub(super) fn write(&self, w: &mut Writer<'_>, zone: &dyn Zone) {
        let day = |m| wall_clock(zone, m).0;
        w.key("series").begin_object();
        w.key("id")
            .string_fmt(format_args!("bk_{}", Num(self.series.into())));
        w.key("count").int(self.count.into());
        w.key("first")
            .string_fmt(format_args!("{}", day(self.first)));
        w.key("last").string_fmt(format_args!("{}", day(self.last)));
        w.key("exceptions").begin_array();
        for e in &self.exceptions.named {
            w.begin_object();
            w.key("id")
                .string_fmt(format_args!("bk_{}", Num(e.id.into())));
            w.key("day").string_fmt(format_args!("{}", day(e.start)));
            match e.how {
                Differs::Cancelled => w.key("status").string("cancelled"),
                Differs::Released => w.key("status").string("released"),
                Differs::Elsewhere(Some(r)) => w.key("room_id").string(r.id),
                Differs::Elsewhere(None) => w.key("status").string("elsewhere"),
            };
            w.end_object();
        }
        w.end_array();
        if self.exceptions.unnamed > 0 {
            w.key("more_exceptions").int(self.exceptions.unnamed.into());
        }
        w.key("occurrences").begin_array();
        for (first, n) in &self.ids {
            let last = first.saturating_add(u32::from(*n) - 1);
            w.begin_object();
            w.key("first")
                .string_fmt(format_args!("bk_{}", Num((*first).into())));
            w.key("last")
                .string_fmt(format_args!("bk_{}", Num(last.into())));
            w.end_object();
        }
        w.end_array();
        if self.ids_unnamed > 0 {
            w.key("more_occurrences").int(self.ids_unnamed.into());
        }
        w.end_object();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule read from occurrences on `days`.
    fn read(days: &[&str]) -> (Repeat, u8, u16) {
        let mut c = Cadence::new();
        let days: std::vec::Vec<Day> = days.iter().map(|d| Day::parse(d).unwrap()).collect();
        days.iter().for_each(|d| c.add(*d));
        let (first, last) = (days[0], days[days.len() - 1]);
        let r = c.rule(days.len() as u8, first, last);
        (r.repeat, r.weekdays, r.every)
    }

    #[test]
    fn the_rule_is_read_from_the_days() {
        // Thursdays, one skipped: weekly on Thursday.
        let thursdays = ["2026-10-01", "2026-10-08", "2026-10-22"];
        assert_eq!(read(&thursdays), (Repeat::Weekly, 1 << 3, 1));
        // Monday and Thursday every other week.
        let two = ["2026-09-28", "2026-10-01", "2026-10-12", "2026-10-15"];
        assert_eq!(read(&two), (Repeat::Weekly, 1 | 1 << 3, 2));
        // Every day, and every third day.
        let daily = ["2026-10-01", "2026-10-02", "2026-10-03"];
        assert_eq!(read(&daily).0, Repeat::Daily);
        let third = ["2026-10-01", "2026-10-04", "2026-10-07"];
        assert_eq!((read(&third).0, read(&third).2), (Repeat::Daily, 3));
        // Weekdays only: weekly on Monday to Friday, not daily.
        let week = [
            "2026-09-28",
            "2026-09-29",
            "2026-09-30",
            "2026-10-01",
            "2026-10-02",
        ];
        let next = ["2026-10-05"];
        let days: std::vec::Vec<&str> = week.iter().chain(&next).copied().collect();
        assert_eq!(read(&days), (Repeat::Weekly, 0x1f, 1));
        // One occurrence: weekly on its day.
        assert_eq!(read(&["2026-10-01"]), (Repeat::Weekly, 1 << 3, 1));
    }
}
