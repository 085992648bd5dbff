//! A room's day (the core's `redmark://rooms/{room}/{day}` JSON) as an iCalendar document: the `text/calendar` content of its `resources/read`, written from what the core already decided the caller may read.

use jiff::tz::TimeZone;
use jiff::Timestamp;
use redmark_core::booking::Minute;
use serde_json::Value;

use super::feed::BUSY;
use super::ics::{utc_stamp, utc_time, vtimezone, Ics};

/// One booking of the day, as the JSON says it.
struct Event<'a> {
    id: &'a str,
    start: Minute,
    end: Minute,
    summary: &'a str,
    cancelled: bool,
}

/// The UTC minute of an RFC 3339 time.
fn minute(v: &Value) -> Option<Minute> {
    let t: Timestamp = v.as_str()?.parse().ok()?;
    Minute::try_from(t.as_second().div_euclid(60)).ok()
}

/// The day's events: a title the caller may read, else the room's name for its own booking,
/// else [`BUSY`] (as the room's feed names them).
fn events<'a>(doc: &'a Value, room: &'a str) -> Option<Vec<Event<'a>>> {
    let mut all = Vec::new();
    for b in doc["bookings"].as_array()? {
        let summary = match (b["title"].as_str(), b["yours"].as_bool()) {
            (Some(t), _) => t,
            (None, Some(true)) => room,
            _ => BUSY,
        };
        let status = b["status"].as_str()?;
        all.push(Event {
            id: b["id"].as_str()?,
            start: minute(&b["start"])?,
            end: minute(&b["end"])?,
            summary,
            cancelled: matches!(status, "released" | "cancelled"),
        });
    }
    Some(all)
}

/// The VCALENDAR of the room's day `doc` (the core's JSON content), its events' ids made this
/// server's with `tag` (as its feeds' are), stamped `now`; `None` if `doc` is not one.
pub fn write(doc: &Value, tag: &str, now: Timestamp) -> Option<String> {
    let room = doc["room"]["name"].as_str()?;
    let zone = doc["time_zone"].as_str()?;
    let day = doc["day"].as_str()?;
    let events = events(doc, room)?;
    let tz = TimeZone::get(zone).ok();
    let mut ics = Ics::calendar();
    ics.raw("METHOD", "PUBLISH");
    ics.text("X-WR-CALNAME", &format!("{room}, {day}"));
    let from = events.iter().map(|e| e.start).min();
    let to = events.iter().map(|e| e.end).max();
    if let (Some(tz), Some(from), Some(to)) = (&tz, from, to) {
        vtimezone(&mut ics, tz, zone, from, to);
    }
    let stamp = utc_stamp(now);
    for e in &events {
        ics.raw("BEGIN", "VEVENT");
        ics.raw("UID", &format!("{}@{tag}.redmark", e.id));
        ics.raw("DTSTAMP", &stamp);
        match &tz {
            Some(tz) => {
                ics.local("DTSTART", tz, zone, e.start);
                ics.local("DTEND", tz, zone, e.end);
            }
            None => {
                ics.raw("DTSTART", &utc_time(e.start));
                ics.raw("DTEND", &utc_time(e.end));
            }
        }
        ics.text("SUMMARY", e.summary);
        ics.text("LOCATION", room);
        let (status, sequence, transp) = match e.cancelled {
            false => ("CONFIRMED", "0", "OPAQUE"),
            true => ("CANCELLED", "1", "TRANSPARENT"),
        };
        ics.raw("STATUS", status);
        ics.raw("SEQUENCE", sequence);
        ics.raw("TRANSP", transp);
        ics.raw("END", "VEVENT");
    }
    Some(ics.end_calendar())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({"room": {"id": "nook", "name": "The Nook, small", "seats": 4},
            "day": "2026-12-07", "time_zone": "Europe/Berlin", "bookings": [
            {"id": "bk_1", "start": "2026-12-07T09:00:00+01:00", "end": "2026-12-07T10:00:00+01:00",
             "from": "09:00", "to": "10:00", "status": "active", "yours": true, "title": "Review; Q4"},
            {"id": "bk_2", "start": "2026-12-07T11:00:00+01:00", "end": "2026-12-07T11:30:00+01:00",
             "from": "11:00", "to": "11:30", "status": "checked-in", "yours": false, "private": true},
            {"id": "bk_3", "start": "2026-12-07T12:00:00+01:00", "end": "2026-12-07T13:00:00+01:00",
             "from": "12:00", "to": "13:00", "status": "active", "yours": true}]})
    }

    #[test]
    fn a_day_is_a_calendar_on_the_floors_clock_as_the_json_names_it() {
        let now = Timestamp::from_second(1_796_000_000).unwrap();
        let cal = write(&doc(), "abc", now).unwrap();
        assert!(
            cal.starts_with("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"),
            "{cal}"
        );
        assert!(cal.ends_with("END:VCALENDAR\r\n"));
        for line in [
            "X-WR-CALNAME:The Nook\\, small\\, 2026-12-07",
            "BEGIN:VTIMEZONE",
            "TZID:Europe/Berlin",
            "UID:bk_1@abc.redmark",
            "DTSTART;TZID=Europe/Berlin:20261207T090000",
            "DTEND;TZID=Europe/Berlin:20261207T100000",
            "SUMMARY:Review\\; Q4",
            "SUMMARY:Busy",
            "SUMMARY:The Nook\\, small",
            "LOCATION:The Nook\\, small",
            "STATUS:CONFIRMED",
        ] {
            assert!(
                cal.contains(&format!("{line}\r\n")),
                "{line} missing:\n{cal}"
            );
        }
        assert_eq!(cal.matches("BEGIN:VEVENT").count(), 3);
    }

    #[test]
    fn an_empty_day_has_no_zone_and_a_broken_one_is_none() {
        let mut d = doc();
        d["bookings"] = json!([]);
        let cal = write(&d, "abc", Timestamp::UNIX_EPOCH).unwrap();
        assert!(
            !cal.contains("VTIMEZONE") && !cal.contains("VEVENT"),
            "{cal}"
        );
        d["bookings"] = json!([{"id": "bk_1", "start": "not a time"}]);
        assert!(write(&d, "abc", Timestamp::UNIX_EPOCH).is_none());
        assert!(write(&json!({}), "abc", Timestamp::UNIX_EPOCH).is_none());
    }
}
