//! A zone of the tz database as jiff holds it, lent to the core as a [`Zone`]: the desktop's
//! named in the floor file and read at start, a panel's compiled into its image.

use jiff::tz::{AmbiguousOffset, Offset, TimeZone};
use jiff::Timestamp;

use super::span::Minute;
use super::time_of_day::TimeOfDay;
use super::zone::{Resolved, Zone};

/// A tz database zone (`jiff::tz::get!("Europe/Berlin")` on a panel, `TimeZone::get` on the
/// desktop), named by its IANA name (a zone from elsewhere, such as a fixed offset, reads as
/// "unnamed zone").
#[derive(Clone, Debug)]
pub struct Tz(pub TimeZone);

/// Unix time of a minute (wall or UTC) as jiff's timestamp; every [`Minute`] is in range.
fn at(minute: Minute) -> Timestamp {
    Timestamp::from_second(i64::from(minute) * 60).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// An offset in whole minutes (east positive); the tz database's are whole minutes since 1972.
fn minutes(o: Offset) -> i32 {
    o.seconds() / 60
}

impl Zone for Tz {
    fn name(&self) -> &str {
        self.0.iana_name().unwrap_or("unnamed zone")
    }

    fn offset(&self, utc: Minute) -> i32 {
        minutes(self.0.to_offset(at(utc)))
    }

    fn resolve(&self, wall: Minute) -> Resolved {
        let civil = Offset::UTC.to_datetime(at(wall));
        let utc = |o: Offset| wall.saturating_add_signed(-minutes(o));
        match self.0.to_ambiguous_timestamp(civil).offset() {
            AmbiguousOffset::Unambiguous { offset } => Resolved::One(utc(offset)),
            AmbiguousOffset::Fold { before, after } => {
                let (a, b) = (utc(before), utc(after));
                Resolved::Twice(a.min(b), a.max(b))
            }
            AmbiguousOffset::Gap { before, after } => {
                // The clocks jumped at the last transition before the earliest instant this
                // wall time could be: from that instant's wall time under `before` to `after`.
                let latest = at(utc(before) + 1);
                let jump = self.0.preceding(latest).next().map_or(utc(before), |t| {
                    Minute::try_from(t.timestamp().as_second() / 60).unwrap_or(0)
                });
                let of_day = |o: Offset| {
                    TimeOfDay((jump.saturating_add_signed(minutes(o)) % (24 * 60)) as u16)
                };
                Resolved::Skipped {
                    from: of_day(before),
                    to: of_day(after),
                }
            }
        }
    }
}
