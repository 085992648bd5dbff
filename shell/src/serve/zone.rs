//! The floor's time zone on the desktop: an IANA zone named in the floor file (`time_zone =
//! "Europe/Berlin"`), resolved at start from the system's zone database (or jiff's bundled
//! copy where there is none), lent to the core as its [`Tz`] (the rules a panel compiles in).

use jiff::tz::TimeZone;
use redmark_core::booking::Tz;

/// The zone `name` (`Europe/Berlin`, `UTC`) as the core's [`Tz`], or why there is none.
pub fn named_zone(name: &str) -> Result<Tz, String> {
    TimeZone::get(name).map(Tz).map_err(|e| {
        format!("time_zone = {name:?}: not a time zone of the tz database ({e}); e.g. \"Europe/Berlin\"")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use redmark_core::booking::{Day, Minute, Resolved, TimeOfDay, Zone};

    fn wall(day: &str, h: u32, m: u32) -> Minute {
        Day::parse(day).unwrap().first_minute() + h * 60 + m
    }

    #[test]
    fn berlin_skips_and_repeats_an_hour_and_names_unknown_zones() {
        let berlin = named_zone("Europe/Berlin").unwrap();
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
        // The name shown is the database's, whatever case the floor file wrote.
        assert_eq!(named_zone("europe/berlin").unwrap().name(), "Europe/Berlin");
        let e = named_zone("Mars/Olympus").unwrap_err();
        assert!(e.contains("time_zone = \"Mars/Olympus\""), "{e}");
        // Half-hour zones and UTC itself.
        let kolkata = named_zone("Asia/Kolkata").unwrap();
        assert_eq!(kolkata.offset(wall("2026-09-24", 0, 0)), 330);
        let utc = named_zone("UTC").unwrap();
        assert_eq!(utc.resolve(42), Resolved::One(42));
    }
}
