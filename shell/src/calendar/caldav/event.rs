//! A room collection's events: ours written (VEVENT with the floor's VTIMEZONE, a state marker), others' read with the `ical` parser (attacker bytes: every failure is a value), and a conflicting one rewritten as cancelled with the reason.

use std::io::BufReader;

use ical::parser::ical::component::IcalEvent;
use ical::property::Property;
use jiff::civil::{Date, DateTime, Time};
use jiff::tz::TimeZone;
use jiff::Timestamp;
use redmark_core::booking::{Booking, BookingId, Minute, Span};
use sha2::{Digest, Sha256};

use super::plan::{Foreign, Kind};
use crate::calendar::ics::{escape_text, local_time, utc_stamp, utc_time, vtimezone, Ics};

/// Bytes of one event resource read at most (a larger one is [`Kind::Unreadable`]).
pub const MAX_EVENT_BYTES: usize = 64 * 1024;

/// What our event of a booking says, for [`write()`].
pub struct Ours<'a> {
    /// The booking.
    pub booking: &'a Booking,
    /// Its event's UID (the feeds' own: [`crate::calendar::feed::uid`]).
    pub uid: &'a str,
    /// Its SUMMARY: the title, or the room's name or "Busy" as the floor's privacy says.
    pub summary: &'a str,
    /// The room's name (LOCATION).
    pub room: &'a str,
    /// The floor's zone and its name.
    pub zone: Option<(&'a TimeZone, &'a str)>,
}

/// The state an event of ours says (`X-REDMARK-STATE`): a digest of what it shows, so a
/// changed booking (moved end, new title) is written again and an unchanged one is not.
pub fn state(b: &Booking, summary: &str) -> String {
    digest(b.new.span, summary)
}

/// The state of an event showing `span` titled `summary`.
fn digest(span: Span, summary: &str) -> String {
    let d = Sha256::new()
        .chain_update(span.start.to_be_bytes())
        .chain_update(span.end.to_be_bytes())
        .chain_update(summary.as_bytes())
        .finalize();
    hex::encode(&d[..8])
}

/// Our event of `o.booking` as an iCalendar document, stamped `now`.
pub fn write(o: &Ours<'_>, now: Timestamp) -> String {
    let span = o.booking.new.span;
    let mut ics = Ics::calendar();
    if let Some((tz, name)) = o.zone {
        vtimezone(
            &mut ics,
            tz,
            name,
            span.start.saturating_sub(24 * 60),
            span.end,
        );
    }
    ics.raw("BEGIN", "VEVENT");
    ics.text("UID", o.uid);
    ics.raw("DTSTAMP", &utc_stamp(now));
    match o.zone {
        Some((tz, name)) => {
            ics.local("DTSTART", tz, name, span.start);
            ics.local("DTEND", tz, name, span.end);
        }
        None => {
            ics.raw("DTSTART", &utc_time(span.start));
            ics.raw("DTEND", &utc_time(span.end));
        }
    }
    ics.text("SUMMARY", o.summary);
    ics.text("LOCATION", o.room);
    ics.raw("STATUS", "CONFIRMED");
    ics.raw("TRANSP", "OPAQUE");
    ics.raw("X-REDMARK-STATE", &state(o.booking, o.summary));
    ics.raw("END", "VEVENT");
    ics.end_calendar()
}

/// The booking id of a UID of ours (`bk_<id>@<tag>.redmark`).
pub fn our_id(uid: &str, tag: &str) -> Option<BookingId> {
    let rest = uid.strip_prefix("bk_")?;
    let (id, host) = rest.split_once('@')?;
    let ok = host.strip_suffix(".redmark") == Some(tag) && id.bytes().all(|c| c.is_ascii_digit());
    ok.then(|| id.parse().ok()).flatten()
}

/// What the event resource `text` is: ours (UID with our `tag`), someone else's (its time
/// read on its TZID's clock, else UTC or `floor`'s wall clock for a floating time), or
/// unreadable with the reason.
pub fn read(text: &str, tag: &str, floor: &TimeZone) -> Kind {
    if text.len() > MAX_EVENT_BYTES {
        return Kind::Unreadable(format!("over {MAX_EVENT_BYTES} bytes"));
    }
    let mut parser = ical::IcalParser::new(BufReader::new(text.as_bytes()));
    let cal = match parser.next() {
        Some(Ok(cal)) => cal,
        Some(Err(e)) => return Kind::Unreadable(format!("not iCalendar: {e}")),
        None => return Kind::Unreadable("empty".into()),
    };
    let master = cal
        .events
        .iter()
        .find(|e| prop(e, "RECURRENCE-ID").is_none());
    let Some(ev) = master else {
        return Kind::Unreadable("no VEVENT".into());
    };
    let Some(uid) = value(ev, "UID") else {
        return Kind::Unreadable("no UID".into());
    };
    if let Some(id) = our_id(uid, tag) {
        // Its state while it still shows it: one a calendar user moved, retitled or cancelled
        // (keeping the marker, as clients keep unknown properties) is written again.
        let said = value(ev, "X-REDMARK-STATE").filter(|said| {
            let summary = value(ev, "SUMMARY").map(unescape).unwrap_or_default();
            !off(ev) && span(ev, floor).is_ok_and(|s| digest(s, &summary) == *said)
        });
        return Kind::Ours {
            id,
            state: said.map(str::to_owned),
        };
    }
    if cal
        .events
        .iter()
        .any(|e| prop(e, "RRULE").is_some() || prop(e, "RDATE").is_some())
    {
        return Kind::Unreadable("recurring (each occurrence must be an event of its own)".into());
    }
    match span(ev, floor) {
        Ok(span) => Kind::Foreign(Foreign {
            uid: uid.to_owned(),
            span,
            title: value(ev, "SUMMARY").map(unescape).unwrap_or_default(),
            cancelled: off(ev),
            sequence: value(ev, "SEQUENCE")
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0),
        }),
        Err(why) => Kind::Unreadable(why.into()),
    }
}

/// Whether `ev` holds no time: cancelled, or marked free (transparent).
fn off(ev: &IcalEvent) -> bool {
    value(ev, "STATUS").is_some_and(|s| s.eq_ignore_ascii_case("CANCELLED"))
        || value(ev, "TRANSP").is_some_and(|s| s.eq_ignore_ascii_case("TRANSPARENT"))
}

/// The first property `name` of `ev`.
fn prop<'e>(ev: &'e IcalEvent, name: &str) -> Option<&'e Property> {
    ev.properties
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name))
}

/// The value of the first property `name` of `ev`.
fn value<'e>(ev: &'e IcalEvent, name: &str) -> Option<&'e str> {
    prop(ev, name)?.value.as_deref()
}

/// The first value of parameter `name` of `p`.
fn param<'p>(p: &'p Property, name: &str) -> Option<&'p str> {
    let params = p.params.as_ref()?;
    let (_, v) = params.iter().find(|(k, _)| k.eq_ignore_ascii_case(name))?;
    v.first().map(String::as_str)
}

/// The event's time as UTC minutes: DTSTART to DTEND, or DTSTART plus DURATION, or a day for
/// a date (RFC 5545 §3.6.1); start rounded down and end up to the minute.
fn span(ev: &IcalEvent, floor: &TimeZone) -> Result<Span, &'static str> {
    let start = prop(ev, "DTSTART").ok_or("no DTSTART")?;
    let (from, date) = instant(start, floor)?;
    let to = match (prop(ev, "DTEND"), value(ev, "DURATION")) {
        (Some(end), _) => instant(end, floor)?.0,
        (None, Some(d)) => {
            let d: jiff::Span = d.trim().parse().map_err(|_| "DURATION unreadable")?;
            let zoned = from.to_zoned_datetime(floor.clone());
            zoned
                .checked_add(d)
                .map_err(|_| "DURATION out of range")?
                .timestamp()
        }
        (None, None) if date => {
            let zoned = from.to_zoned_datetime(floor.clone());
            zoned
                .checked_add(jiff::Span::new().days(1))
                .map_err(|_| "out of range")?
                .timestamp()
        }
        (None, None) => return Err("no DTEND or DURATION: it takes no time"),
    };
    let minute = |t: Timestamp, up: bool| -> Option<Minute> {
        let s = t.as_second();
        let m = s.div_euclid(60) + i64::from(up && s.rem_euclid(60) != 0);
        Minute::try_from(m).ok()
    };
    let (s, e) = (minute(from, false), minute(to, true));
    s.zip(e)
        .and_then(|(s, e)| Span::new(s, e))
        .ok_or("its time is empty, backwards or out of range")
}

/// A DTSTART or DTEND as a timestamp, and whether it was a date.
fn instant(p: &Property, floor: &TimeZone) -> Result<(Timestamp, bool), &'static str> {
    let v = p.value.as_deref().ok_or("a time without a value")?.trim();
    if v.len() == 8 || param(p, "VALUE").is_some_and(|k| k.eq_ignore_ascii_case("DATE")) {
        let d = Date::strptime("%Y%m%d", v).map_err(|_| "a date unreadable")?;
        let t = floor
            .to_timestamp(d.to_datetime(Time::midnight()))
            .map_err(|_| "a date out of range")?;
        return Ok((t, true));
    }
    if let Some(utc) = v.strip_suffix('Z') {
        let dt = DateTime::strptime("%Y%m%dT%H%M%S", utc).map_err(|_| "a time unreadable")?;
        let t = TimeZone::UTC
            .to_timestamp(dt)
            .map_err(|_| "a time out of range")?;
        return Ok((t, false));
    }
    let dt = DateTime::strptime("%Y%m%dT%H%M%S", v).map_err(|_| "a time unreadable")?;
    let tz = match param(p, "TZID") {
        Some(id) => TimeZone::get(id.trim_start_matches('/')).map_err(|_| "an unknown TZID")?,
        None => floor.clone(),
    };
    let t = tz.to_timestamp(dt).map_err(|_| "a time out of range")?;
    Ok((t, false))
}

/// TEXT unescaped (§3.3.11): `\n` a line break, `\x` the character x; control characters
/// left out.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n' | 'N') => out.push('\n'),
                Some(x) => out.push(x),
                None => {}
            },
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Someone else's event `text` marked cancelled with `reason`: every line kept (unfolded and
/// folded again), each VEVENT's own STATUS, SEQUENCE, COMMENT and DESCRIPTION replaced (before
/// its first sub-component, as RFC 5545 orders them; an alarm's are left alone), the reason in
/// COMMENT and DESCRIPTION. `None` when `text` is not lines of content.
pub fn cancelled(text: &str, sequence: u32, reason: &str) -> Option<String> {
    let unfolded = text
        .replace("\r\n ", "")
        .replace("\r\n\t", "")
        .replace("\n ", "")
        .replace("\n\t", "");
    let mut reason_text = String::new();
    escape_text(reason, &mut reason_text);
    let mut ics = Ics::default();
    // The components open at this line, innermost last, and whether the innermost VEVENT
    // has had its new properties written.
    let mut open: Vec<String> = Vec::new();
    let mut written = false;
    for line in unfolded.lines() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            continue;
        }
        let (name, value) = line.split_once(':')?;
        let key = name.split(';').next().unwrap_or("").to_ascii_uppercase();
        let in_event = open.last().is_some_and(|c| c == "VEVENT");
        let component = value.trim().to_ascii_uppercase();
        let closes_or_nests = matches!(key.as_str(), "BEGIN" | "END");
        if in_event && closes_or_nests && !written {
            ics.raw("STATUS", "CANCELLED");
            ics.raw("SEQUENCE", &sequence.saturating_add(1).to_string());
            ics.raw("COMMENT", &reason_text);
            ics.raw("DESCRIPTION", &reason_text);
            written = true;
        }
        match key.as_str() {
            "BEGIN" => {
                written &= component != "VEVENT";
                open.push(component);
            }
            "END" => {
                open.pop();
            }
            "STATUS" | "SEQUENCE" | "COMMENT" | "DESCRIPTION" if in_event => continue,
            _ => {}
        }
        ics.raw(name, value);
    }
    Some(ics.finish())
}

/// `at` on the floor's clock as people read it (`2026-12-07 10:00`), for a reason.
pub fn wall(tz: &TimeZone, at: Minute) -> String {
    let t = local_time(tz, at);
    // 20261207T100000 → 2026-12-07 10:00
    match (
        t.get(0..4),
        t.get(4..6),
        t.get(6..8),
        t.get(9..11),
        t.get(11..13),
    ) {
        (Some(y), Some(mo), Some(d), Some(h), Some(mi)) => format!("{y}-{mo}-{d} {h}:{mi}"),
        _ => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redmark_core::booking::Day;

    fn berlin() -> TimeZone {
        TimeZone::get("Europe/Berlin").unwrap()
    }

    fn at(day: &str, h: u32, m: u32) -> Minute {
        Day::parse(day).unwrap().first_minute() + h * 60 + m
    }

    fn doc(body: &str) -> String {
        format!("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\n{body}END:VEVENT\r\nEND:VCALENDAR\r\n")
    }

    fn foreign(k: Kind) -> Foreign {
        match k {
            Kind::Foreign(f) => f,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn times_on_a_tzid_in_utc_floating_and_all_day() {
        let f = foreign(read(
            &doc("UID:a\r\nDTSTART;TZID=Europe/Berlin:20261207T100000\r\nDTEND;TZID=Europe/Berlin:20261207T113000\r\nSUMMARY:Plan\\, then \\;go\r\n"),
            "t",
            &TimeZone::UTC,
        ));
        assert_eq!(
            (f.span.start, f.span.end),
            (at("2026-12-07", 9, 0), at("2026-12-07", 10, 30))
        );
        assert_eq!(f.title, "Plan, then ;go");
        assert!(!f.cancelled);
        let f = foreign(read(
            &doc("UID:b\r\nDTSTART:20261207T100000Z\r\nDURATION:PT45M\r\nSTATUS:CANCELLED\r\n"),
            "t",
            &berlin(),
        ));
        assert_eq!(
            (f.span.start, f.span.end),
            (at("2026-12-07", 10, 0), at("2026-12-07", 10, 45))
        );
        assert!(f.cancelled);
        let f = foreign(read(
            &doc("UID:c\r\nDTSTART:20261207T100000\r\nDTEND:20261207T101030\r\n"),
            "t",
            &berlin(),
        ));
        assert_eq!(
            (f.span.start, f.span.end),
            (at("2026-12-07", 9, 0), at("2026-12-07", 9, 11))
        );
        let f = foreign(read(
            &doc("UID:d\r\nDTSTART;VALUE=DATE:20261207\r\n"),
            "t",
            &berlin(),
        ));
        assert_eq!(
            (f.span.start, f.span.end),
            (at("2026-12-06", 23, 0), at("2026-12-07", 23, 0))
        );
    }

    #[test]
    fn ours_by_uid_and_what_holds_nothing() {
        let k = read(
            &doc("UID:bk_12@t1.redmark\r\nDTSTART:20261207T100000Z\r\nX-REDMARK-STATE:ab\r\n"),
            "t1",
            &berlin(),
        );
        // Ours by its UID; its marker is not what it shows, so it has no state (written again).
        assert_eq!(
            k,
            Kind::Ours {
                id: 12,
                state: None
            }
        );
        // Another server's tag: someone else's.
        let k = read(
            &doc("UID:bk_12@t2.redmark\r\nDTSTART:20261207T100000Z\r\nDURATION:PT1H\r\n"),
            "t1",
            &berlin(),
        );
        assert!(matches!(k, Kind::Foreign(_)), "{k:?}");
        for (body, why) in [
            (
                "UID:x\r\nDTSTART:20261207T100000Z\r\nRRULE:FREQ=DAILY\r\nDURATION:PT1H\r\n",
                "recurring",
            ),
            ("UID:x\r\nDTSTART:20261207T100000Z\r\n", "no DTEND"),
            (
                "UID:x\r\nDTSTART;TZID=Mars/Olympus:20261207T100000\r\nDURATION:PT1H\r\n",
                "TZID",
            ),
            ("DTSTART:20261207T100000Z\r\nDURATION:PT1H\r\n", "no UID"),
            (
                "UID:x\r\nDTSTART:20261207T100000Z\r\nDTEND:20261207T090000Z\r\n",
                "backwards",
            ),
            ("UID:x\r\nDTSTART:1e9\r\nDURATION:PT1H\r\n", "unreadable"),
        ] {
            match read(&doc(body), "t1", &berlin()) {
                Kind::Unreadable(w) => assert!(w.contains(why), "{w} for {body}"),
                other => panic!("{other:?} for {body}"),
            }
        }
        for junk in [
            "",
            "BEGIN:VCALENDAR",
            "\u{0}\u{1}",
            "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\n",
        ] {
            assert!(
                matches!(read(junk, "t", &berlin()), Kind::Unreadable(_)),
                "{junk:?}"
            );
        }
        assert_eq!(our_id("bk_7@t.redmark", "t"), Some(7));
        for no in [
            "bk_@t.redmark",
            "bk_7@u.redmark",
            "bk_-7@t.redmark",
            "bk_99999999999@t.redmark",
        ] {
            assert_eq!(our_id(no, "t"), None, "{no}");
        }
    }

    #[test]
    fn a_conflicting_event_is_rewritten_cancelled_with_the_reason_and_reads_so() {
        let text = doc("UID:x\r\nDTSTART:20261207T100000Z\r\nDURATION:PT1H\r\nSTATUS:CONFIRMED\r\nSEQUENCE:2\r\nX-LONG:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n bbb\r\n");
        let out = cancelled(
            &text,
            2,
            "The room is booked then (The Atrium, 2026-12-07 11:00)",
        )
        .unwrap();
        let f = foreign(read(&out, "t", &berlin()));
        assert!(f.cancelled);
        assert_eq!(f.sequence, 3);
        assert!(
            out.contains("COMMENT:The room is booked then (The Atrium\\, 2026-12-07 11:00)"),
            "{out}"
        );
        assert!(!out.contains("CONFIRMED"));
        assert!(
            out.replace("\r\n ", "").contains("X-LONG:aaaa")
                && out.replace("\r\n ", "").contains("abbb")
        );
        assert_eq!(wall(&berlin(), at("2026-12-07", 10, 0)), "2026-12-07 11:00");
    }

    #[test]
    fn a_cancelled_rewrite_leaves_an_alarm_whole_and_puts_the_status_before_it() {
        let text = doc("UID:x\r\nDTSTART:20261207T100000Z\r\nDURATION:PT1H\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:Reminder\r\nTRIGGER:-PT10M\r\nEND:VALARM\r\n");
        let out = cancelled(&text, 0, "taken").unwrap();
        let alarm = &out[out.find("BEGIN:VALARM").unwrap()..out.find("END:VALARM").unwrap()];
        assert!(alarm.contains("DESCRIPTION:Reminder"), "{out}");
        assert!(
            !alarm.contains("taken") && !alarm.contains("STATUS"),
            "{out}"
        );
        let status = out.find("STATUS:CANCELLED").unwrap();
        assert!(
            status < out.find("BEGIN:VALARM").unwrap(),
            "properties before the alarm: {out}"
        );
        assert_eq!(out.matches("STATUS:CANCELLED").count(), 1);
        assert!(foreign(read(&out, "t", &berlin())).cancelled);
    }

    proptest::proptest! {
        /// Whatever others write (any text, or any value in any property of an event), reading
        /// it and rewriting it as cancelled never panics, and a rewrite reads as cancelled.
        #[test]
        fn any_event_text_is_read_and_rewritten_without_panicking(
            body in "(?s).{0,300}",
            value in proptest::prelude::any::<String>(),
        ) {
            let _ = read(&body, "t", &TimeZone::UTC);
            let _ = cancelled(&body, u32::MAX, &value);
            let event = doc(&format!(
                "UID:{value}\r\nDTSTART;TZID={value}:{value}\r\nDTEND;VALUE=DATE:{value}\r\n\
                 DURATION:{value}\r\nSUMMARY:{value}\r\nSEQUENCE:{value}\r\n"
            ));
            let _ = read(&event, "t", &berlin());
            let good = doc(&format!(
                "UID:u\r\nDTSTART:20261207T100000Z\r\nDURATION:PT1H\r\nSUMMARY:{}\r\n",
                value.replace(['\r', '\n'], "")
            ));
            if let Some(out) = cancelled(&good, u32::MAX, &value) {
                match read(&out, "t", &berlin()) {
                    Kind::Foreign(f) => proptest::prop_assert!(f.cancelled),
                    Kind::Unreadable(_) => {}
                    Kind::Ours { .. } => proptest::prop_assert!(false, "{out}"),
                }
            }
        }
    }

    #[test]
    fn our_event_reads_back_as_ours_with_its_state() {
        let b = Booking {
            id: 3,
            new: redmark_core::booking::NewBooking {
                room: "atrium".try_into().unwrap(),
                span: Span::new(at("2026-12-07", 9, 0), at("2026-12-07", 10, 0)).unwrap(),
                title: "Review".try_into().unwrap(),
                attendees: 0,
                holder: [0; 8],
                nonce: [0; 8],
            },
            status: redmark_core::booking::Status::Active,
            checked_in: false,
            series: None,
        };
        let tz = berlin();
        let o = Ours {
            booking: &b,
            uid: "bk_3@t.redmark",
            summary: "Review",
            room: "The Atrium",
            zone: Some((&tz, "Europe/Berlin")),
        };
        let text = write(&o, Timestamp::UNIX_EPOCH);
        assert!(
            text.contains("DTSTART;TZID=Europe/Berlin:20261207T100000\r\n"),
            "{text}"
        );
        assert_eq!(
            read(&text, "t", &tz),
            Kind::Ours {
                id: 3,
                state: Some(state(&b, "Review"))
            }
        );
        assert_ne!(state(&b, "Review"), state(&b, "Busy"));
        // Moved, retitled or cancelled in a calendar app (the marker kept): no state, so the
        // plan writes it again.
        for (from, to) in [
            (
                "DTSTART;TZID=Europe/Berlin:20261207T100000",
                "DTSTART;TZID=Europe/Berlin:20261207T090000",
            ),
            ("SUMMARY:Review", "SUMMARY:Moved"),
            ("STATUS:CONFIRMED", "STATUS:CANCELLED"),
        ] {
            let edited = text.replace(from, to);
            assert_ne!(edited, text, "{from}");
            let read = read(&edited, "t", &tz);
            assert_eq!(read, Kind::Ours { id: 3, state: None }, "{to}");
        }
    }
}
