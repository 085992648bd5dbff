//! The floor's time zone on the desktop: an IANA zone named in the floor file (`time_zone =
//! "Europe/Berlin"`), resolved at start from the system's zone database (or jiff's bundled
//! copy where there is none), lent to the core as its [`Zone`].

use jiff::tz::{AmbiguousOffset, Offset, TimeZone};
use jiff::Timestamp;
use redmark_core::booking::{Minute, Resolved, TimeOfDay, Zone};

/// A zone of the tz database, with the name the floor file gave it.
#[derive(Debug)]
pub struct NamedZone {
    name: String,
    tz: TimeZone,
}

impl NamedZone {
    /// The zone `name` (`Europe/Berlin`, `UTC`), or why there is none.
    pub fn get(name: &str) -> Result<NamedZone, String> {
        let tz = TimeZone::get(name).map_err(|e| {
            format!("time_zone = {name:?}: not a time zone of the tz database ({e}); e.g. \"Europe/Berlin\"")
        })?;
        Ok(NamedZone {
            name: name.to_owned(),
            tz,
        })
    }
}

/// Unix time of a minute (wall or UTC) as jiff's timestamp; every [`Minute`] is in range.
fn at(minute: Minute) -> Timestamp {
    Timestamp::from_second(i64::from(minute) * 60).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// An offset in whole minutes (east positive); the tz database's are whole minutes since 1972.
fn minutes(o: Offset) -> i32 {
    o.seconds() / 60
}

impl Zone for NamedZone {
    fn name(&self) -> &str {
        &self.name
    }

    fn offset(&self, utc: Minute) -> i32 {
        minutes(self.tz.to_offset(at(utc)))
    }

    fn resolve(&self, wall: Minute) -> Resolved {
        let civil = Offset::UTC.to_datetime(at(wall));
        let utc = |o: Offset| wall.saturating_add_signed(-minutes(o));
        match self.tz.to_ambiguous_timestamp(civil).offset() {
            AmbiguousOffset::Unambiguous { offset } => Resolved::One(utc(offset)),
            AmbiguousOffset::Fold { before, after } => {
                let (a, b) = (utc(before), utc(after));
                Resolved::Twice(a.min(b), a.max(b))
            }
            AmbiguousOffset::Gap { before, after } => {
                // The clocks jumped at the last transition before the earliest instant this
                // wall time could be: from that instant's wall time under `before` to `after`.
                let latest = at(utc(before) + 1);
                let jump = self.tz.preceding(latest).next().map_or(utc(before), |t| {
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

#[cfg(test)]
mod tests {
    use super::*;
    use redmark_core::booking::Day;

    fn wall(day: &str, h: u32, m: u32) -> Minute {
        Day::parse(day).unwrap().first_minute() + h * 60 + m
    }

    #[test]
    fn berlin_skips_and_repeats_an_hour_and_names_unknown_zones() {
        let berlin = NamedZone::get("Europe/Berlin").unwrap();
        assert_eq!(berlin.name(), "Europe/Berlin");
        assert_eq!(
            berlin.resolve(wall("2026-09-24", 9, 30)),
            Resolved::One(wall("2026-09-24", 7, 30))
        );
        assert_eq!(berlin.offset(wall("2026-09-24", 7, 30)), 120);
        assert_eq!(berlin.offset(wall("2026-12-24", 7, 30)), 60);
        assert_eq!(
            berlin.resolve(wall("2027-03-28", 2, 30)),
            Resolved::Skipped {
                from: TimeOfDay(120),
                to: TimeOfDay(180)
            }
        );
        assert_eq!(
            berlin.resolve(wall("2026-10-25", 2, 30)),
            Resolved::Twice(wall("2026-10-25", 0, 30), wall("2026-10-25", 1, 30))
        );
        let e = NamedZone::get("Mars/Olympus").unwrap_err();
        assert!(e.contains("time_zone = \"Mars/Olympus\""), "{e}");
        // Half-hour zones and UTC itself.
        let kolkata = NamedZone::get("Asia/Kolkata").unwrap();
        assert_eq!(kolkata.offset(wall("2026-09-24", 0, 0)), 330);
        let utc = NamedZone::get("UTC").unwrap();
        assert_eq!(utc.resolve(42), Resolved::One(42));
    }
}
