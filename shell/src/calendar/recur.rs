//! A series in a feed as one recurring event (RFC 5545 §3.8.5): the rule its occurrences follow (RRULE), the starts that rule gives which the feed does not hold (EXDATE), and the occurrences that differ from the series' first (each its own instance, RECURRENCE-ID).
//!
//! The stores keep a series as its occurrences (each an ordinary booking naming the series'
//! first), not as the rule it was booked with, so the rule is found again from the
//! occurrences the feed holds: the daily or weekly rule (with its interval and weekdays) that
//! gives all of them and the fewest others, on the floor's wall clock — as it was booked,
//! where a weekly 09:30 stays 09:30 across a clock change. The starts it gives that the feed
//! does not hold (cancelled, skipped as taken, booked in another room, outside the feed's
//! range) are its exceptions.

use std::collections::BTreeMap;

use jiff::civil::{Date, DateTime, Time, Weekday};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use redmark_core::booking::{Booking, BookingId, Minute, Status};

use super::ics::utc_time;

/// A feed's bookings as they are written: each alone, or a series' occurrences together.
#[derive(Debug)]
pub enum Entry<'a> {
    /// A booking of no series.
    Alone(&'a Booking),
    /// The occurrences of series `id` the feed holds, in start order.
    Series(BookingId, Vec<&'a Booking>),
}

/// `bookings` (in start order) as entries, each series once where its first occurrence is.
pub fn group(bookings: &[Booking]) -> Vec<Entry<'_>> {
    let mut series: BTreeMap<BookingId, Vec<&Booking>> = BTreeMap::new();
    for b in bookings {
        if let Some(id) = b.series {
            series.entry(id).or_default().push(b);
        }
    }
    let mut out = Vec::new();
    for b in bookings {
        match b.series {
            None => out.push(Entry::Alone(b)),
            Some(id) => {
                if let Some(all) = series.remove(&id) {
                    out.push(Entry::Series(id, all));
                }
            }
        }
    }
    out
}

/// How a series repeats on its floor's wall clock, with its exceptions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recurrence {
    /// The RRULE value, e.g. `FREQ=WEEKLY;INTERVAL=1;BYDAY=MO,TH;UNTIL=20270301T083000Z`.
    pub rule: String,
    /// The starts the rule gives that the series does not hold here (EXDATE), in order.
    pub excluded: Vec<Minute>,
    /// Each occurrence's start as the rule gives it (its RECURRENCE-ID), in the occurrences'
    /// order.
    pub instances: Vec<Minute>,
}

/// The recurrence of `occurrences` (in start order, at least one) on `tz`'s wall clock, kept
/// at the first one's time of day.
pub fn recurrence(occurrences: &[&Booking], tz: &TimeZone) -> Recurrence {
    let first = local(tz, occurrences[0].new.span.start);
    let (base, time) = (first.date(), first.time());
    let dates: Vec<Date> = occurrences
        .iter()
        .map(|b| local(tz, b.new.span.start).date())
        .collect();
    let last = dates.iter().copied().max().unwrap_or(base);
    let days: Vec<i64> = dates.iter().map(|d| days_between(base, *d)).collect();
    let daily_step = days.iter().fold(0, |g, &d| gcd(g, d)).max(1);
    let monday = base
        .checked_sub(i64::from(base.weekday().to_monday_zero_offset()).days())
        .unwrap_or(base);
    let weeks = dates.iter().map(|d| days_between(monday, *d) / 7);
    let weekly_step = weeks.fold(0, gcd).max(1);
    let mut weekdays: Vec<Weekday> = dates.iter().map(|d| d.weekday()).collect();
    weekdays.sort_by_key(|w| w.to_monday_zero_offset());
    weekdays.dedup();

    let daily: Vec<Date> = every(base, last, |d| days_between(base, d) % daily_step == 0);
    let weekly: Vec<Date> = every(base, last, |d| {
        days_between(monday, d) / 7 % weekly_step == 0 && weekdays.contains(&d.weekday())
    });
    let until = utc_time(at(tz, last, time));
    let (rule, given) = if daily_step % 7 != 0 && daily.len() <= weekly.len() {
        (
            format!("FREQ=DAILY;INTERVAL={daily_step};UNTIL={until}"),
            daily,
        )
    } else {
        let by: Vec<&str> = weekdays.iter().map(|w| byday(*w)).collect();
        let rule = format!(
            "FREQ=WEEKLY;INTERVAL={weekly_step};BYDAY={};UNTIL={until}",
            by.join(",")
        );
        (rule, weekly)
    };
    Recurrence {
        rule,
        excluded: given
            .into_iter()
            .filter(|d| !dates.contains(d))
            .map(|d| at(tz, d, time))
            .collect(),
        instances: dates.iter().map(|d| at(tz, *d, time)).collect(),
    }
}

/// Whether `b` is written as its own instance of a series whose first occurrence is `first`:
/// it no longer holds its room, or its time, length, room or title is not the first's.
pub fn differs(b: &Booking, first: &Booking, tz: &TimeZone) -> bool {
    let (s, f) = (b.new.span, first.new.span);
    b.status != Status::Active
        || local(tz, s.start).time() != local(tz, f.start).time()
        || s.end - s.start != f.end - f.start
        || b.new.room != first.new.room
        || b.new.title != first.new.title
}

/// Every date from `from` to `to` (both included) that `keep` keeps.
fn every(from: Date, to: Date, keep: impl Fn(Date) -> bool) -> Vec<Date> {
    from.series(1.day())
        .take_while(|d| *d <= to)
        .filter(|d| keep(*d))
        .collect()
}

/// Days from `a` to `b`.
fn days_between(a: Date, b: Date) -> i64 {
    a.until(b).map_or(0, |s| i64::from(s.get_days()))
}

/// The greatest common divisor of `a` and `b` (of their magnitudes).
fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `at` on `tz`'s wall clock.
fn local(tz: &TimeZone, at: Minute) -> DateTime {
    let t = Timestamp::from_second(i64::from(at) * 60).unwrap_or(Timestamp::UNIX_EPOCH);
    tz.to_datetime(t)
}

/// The UTC minute of `date` at `time` on `tz`'s wall clock (a time in a gap or repeated hour
/// resolved as RFC 5545 §3.3.5 says: the offset in force before the change).
fn at(tz: &TimeZone, date: Date, time: Time) -> Minute {
    let t = tz
        .to_ambiguous_timestamp(date.to_datetime(time))
        .compatible()
        .unwrap_or(Timestamp::UNIX_EPOCH);
    (t.as_second() / 60).clamp(0, i64::from(Minute::MAX)) as Minute
}

/// A weekday as BYDAY names it.
fn byday(w: Weekday) -> &'static str {
    match w {
        Weekday::Monday => "MO",
        Weekday::Tuesday => "TU",
        Weekday::Wednesday => "WE",
        Weekday::Thursday => "TH",
        Weekday::Friday => "FR",
        Weekday::Saturday => "SA",
        Weekday::Sunday => "SU",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redmark_core::booking::{holder, NewBooking, Span};
    use redmark_core::seal::Nonce;

    fn berlin() -> TimeZone {
        TimeZone::get("Europe/Berlin").unwrap()
    }

    /// A booking of series 1 in room `r1` on `date` at `hh:mm` Berlin time for 45 minutes.
    fn occurrence(id: u32, date: &str, hh: i8, mm: i8) -> Booking {
        let start = at(
            &berlin(),
            date.parse().unwrap(),
            Time::constant(hh, mm, 0, 0),
        );
        Booking {
            id,
            new: NewBooking {
                room: "r1".try_into().unwrap(),
                span: Span::new(start, start + 45).unwrap(),
                title: "Design review".try_into().unwrap(),
                holder: holder(b"alice"),
                nonce: Nonce::default(),
                attendees: 4,
            },
            status: Status::Active,
            checked_in: false,
            series: Some(1),
        }
    }

    fn recur(dates: &[(&str, i8, i8)]) -> Recurrence {
        let b: Vec<Booking> = (1..)
            .zip(dates)
            .map(|(i, (d, h, m))| occurrence(i, d, *h, *m))
            .collect();
        let refs: Vec<&Booking> = b.iter().collect();
        recurrence(&refs, &berlin())
    }

    fn on(date: &str, hh: i8, mm: i8) -> Minute {
        at(
            &berlin(),
            date.parse().unwrap(),
            Time::constant(hh, mm, 0, 0),
        )
    }

    #[test]
    fn a_weekly_series_across_the_clock_change_keeps_its_wall_time_and_names_its_gap() {
        // Thursdays 09:30 from 2027-03-18 to 2027-04-08; 03-25 cancelled; Berlin moves to
        // summer time on 03-28.
        let r = recur(&[
            ("2027-03-18", 9, 30),
            ("2027-04-01", 9, 30),
            ("2027-04-08", 9, 30),
        ]);
        assert_eq!(
            r.rule,
            "FREQ=WEEKLY;INTERVAL=1;BYDAY=TH;UNTIL=20270408T073000Z"
        );
        assert_eq!(r.excluded, vec![on("2027-03-25", 9, 30)]);
        assert_eq!(utc_time(r.excluded[0]), "20270325T083000Z");
    }

    #[test]
    fn two_weekdays_every_other_week_is_one_weekly_rule() {
        let r = recur(&[
            ("2027-01-04", 10, 0), // Monday
            ("2027-01-07", 10, 0), // Thursday
            ("2027-01-18", 10, 0),
            ("2027-01-21", 10, 0),
        ]);
        assert_eq!(
            r.rule,
            "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH;UNTIL=20270121T090000Z"
        );
        assert!(r.excluded.is_empty());
    }

    #[test]
    fn every_other_day_is_daily_with_its_interval() {
        let r = recur(&[
            ("2027-01-04", 8, 0),
            ("2027-01-06", 8, 0),
            ("2027-01-08", 8, 0),
            ("2027-01-12", 8, 0),
            ("2027-01-14", 8, 0),
            ("2027-01-16", 8, 0),
        ]);
        assert_eq!(r.rule, "FREQ=DAILY;INTERVAL=2;UNTIL=20270116T070000Z");
        assert_eq!(r.excluded, vec![on("2027-01-10", 8, 0)]);
    }

    #[test]
    fn one_occurrence_is_a_rule_of_one() {
        let r = recur(&[("2027-01-04", 8, 0)]);
        assert_eq!(r.rule, "FREQ=DAILY;INTERVAL=1;UNTIL=20270104T070000Z");
        assert!(r.excluded.is_empty());
        assert_eq!(r.instances, vec![on("2027-01-04", 8, 0)]);
    }

    #[test]
    fn an_occurrence_differs_by_status_time_length_room_or_title() {
        let tz = berlin();
        let first = occurrence(1, "2027-01-04", 9, 30);
        let same = occurrence(2, "2027-01-11", 9, 30);
        assert!(!differs(&same, &first, &tz));
        let mut released = same.clone();
        released.status = Status::Released;
        let mut longer = same.clone();
        longer.new.span = Span::new(same.new.span.start, same.new.span.end + 15).unwrap();
        let mut elsewhere = same.clone();
        elsewhere.new.room = "r2".try_into().unwrap();
        for b in [
            released,
            longer,
            elsewhere,
            occurrence(3, "2027-01-18", 10, 0),
        ] {
            assert!(differs(&b, &first, &tz), "{b:?}");
        }
    }

    #[test]
    fn a_series_is_grouped_once_where_it_first_occurs() {
        let alone = Booking {
            series: None,
            ..occurrence(9, "2027-01-05", 12, 0)
        };
        let a = occurrence(1, "2027-01-04", 9, 30);
        let b = occurrence(2, "2027-01-11", 9, 30);
        let list = [a, alone, b];
        let g = group(&list);
        assert_eq!(g.len(), 2);
        assert!(matches!(&g[0], Entry::Series(1, v) if v.len() == 2));
        assert!(matches!(&g[1], Entry::Alone(x) if x.id == 9));
    }
}
