//! What a booking tool's checked arguments name: a day as people say it (`2026-09-24`,
//! `today`, `tomorrow`, `thursday`) and the caller's booking of a `bk_N` id (the arguments themselves are read by their `#[derive(Args)]`
//! structs in `tools.rs`).

use super::span::{minute_of, Day, CLOCK_SET_FROM, WEEKDAYS};
use super::store::Store;
use super::store::{Booking, Holder, StoreError};
use super::zone::{wall, Zone};

/// What a `day` argument says: a day, or a word that needs a clock the server does not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DayArg {
    /// The day it names.
    Day(Day),
    /// A word (`today`, a weekday) while the clock is not set: only a date can be booked.
    NeedsClock,
    /// Not a day.
    Unknown,
}

/// The day `s` names, with `now` (unix time) on `zone`'s wall clock as today: an ISO date,
/// `today`, `tomorrow`, or a weekday (today if it is that day, else the next one); words are
/// case-blind.
pub(super) fn day(s: &str, now: u64, zone: &dyn Zone) -> DayArg {
    if let Some(d) = Day::parse(s) {
        return DayArg::Day(d);
    }
    let mut lower = [0u8; 9];
    let Some(word) = lower.get_mut(..s.len()) else {
        return DayArg::Unknown;
    };
    word.copy_from_slice(s.as_bytes());
    word.make_ascii_lowercase();
    let ahead = match &*word {
        b"today" => 0,
        b"tomorrow" => 1,
        w => match WEEKDAYS.iter().position(|d| d.as_bytes() == w) {
            Some(wanted) => {
                let Some(today) = today(now, zone) else {
                    return DayArg::NeedsClock;
                };
                (wanted + 7 - today.weekday()) as u32 % 7
            }
            None => return DayArg::Unknown,
        },
    };
    match today(now, zone).map(|t| t.first_minute() + ahead * 24 * 60) {
        Some(m) => Day::containing(m).map_or(DayArg::Unknown, DayArg::Day),
        None => DayArg::NeedsClock,
    }
}

/// Today on `zone`'s wall clock, if the clock is set.
pub(super) fn today(now: u64, zone: &dyn Zone) -> Option<Day> {
    (now >= CLOCK_SET_FROM)
        .then(|| minute_of(now))
        .flatten()
        .and_then(|m| Day::containing(wall(zone, m)))
}

/// The booking `id` (as `bk_N`) names, if `holder` holds it; anyone else's is `None` too.
pub(super) async fn yours<S: Store>(
    store: &mut S,
    id: &str,
    holder: &Holder,
) -> Result<Option<Booking>, StoreError> {
    let Some(id) = id.strip_prefix("bk_").and_then(|n| n.parse().ok()) else {
        return Ok(None);
    };
    Ok(store.get(id).await?.filter(|b| b.new.holder == *holder))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::booking::Utc;

    /// The core tests' clock: Monday 2026-09-21 14:13:20 UTC.
    const NOW: u64 = 1_790_000_000;

    #[test]
    fn days_as_people_say_them() {
        let d = |s: &str| DayArg::Day(Day::parse(s).unwrap());
        assert_eq!(day("2026-09-24", NOW, &Utc), d("2026-09-24"));
        assert_eq!(day("today", NOW, &Utc), d("2026-09-21"));
        assert_eq!(day("Tomorrow", NOW, &Utc), d("2026-09-22"));
        assert_eq!(day("monday", NOW, &Utc), d("2026-09-21"));
        assert_eq!(day("THURSDAY", NOW, &Utc), d("2026-09-24"));
        assert_eq!(day("sunday", NOW, &Utc), d("2026-09-27"));
        assert_eq!(
            day("thursday", CLOCK_SET_FROM - 1, &Utc),
            DayArg::NeedsClock
        );
        assert_eq!(day("today", 0, &Utc), DayArg::NeedsClock);
        for bad in [
            "",
            "thurs",
            "wednesdays",
            "2026-02-30",
            "yesterday",
            "ümonday",
        ] {
            assert_eq!(day(bad, NOW, &Utc), DayArg::Unknown, "{bad}");
        }
    }
}
