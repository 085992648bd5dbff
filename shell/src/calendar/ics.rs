//! An iCalendar (RFC 5545) document written line by line: text escaped, lines folded at 75 octets with CRLF, times in UTC or on a zone's wall clock, and that zone's VTIMEZONE from jiff's rules.

use std::fmt::Write as _;

use jiff::tz::{Offset, TimeZone};
use jiff::Timestamp;
use redmark_core::booking::Minute;

/// Octets in one line before it is folded (RFC 5545 §3.1), the CRLF not counted.
pub const FOLD_AT: usize = 75;

/// An iCalendar document being written: content lines, each folded and ended with CRLF.
#[derive(Default)]
pub struct Ics {
    out: String,
}

impl Ics {
    /// A VCALENDAR begun: its BEGIN, VERSION and redmark's PRODID (ended by
    /// [`Ics::end_calendar`]).
    pub fn calendar() -> Ics {
        let mut ics = Ics::default();
        ics.raw("BEGIN", "VCALENDAR");
        ics.raw("VERSION", "2.0");
        ics.text(
            "PRODID",
            concat!("-//redmark//redmark ", env!("CARGO_PKG_VERSION"), "//EN"),
        );
        ics
    }

    /// The VCALENDAR [`Ics::calendar`] began, ended: the document.
    pub fn end_calendar(mut self) -> String {
        self.raw("END", "VCALENDAR");
        self.out
    }

    /// `NAME:value`, `value` written as it is: only for values this module made (times,
    /// numbers, enumerations, ids of our own), never for words a person chose.
    pub fn raw(&mut self, name: &str, value: &str) {
        let mut line = String::with_capacity(name.len() + 1 + value.len());
        line.push_str(name);
        line.push(':');
        line.push_str(value);
        self.line(&line);
    }

    /// `NAME:value` with `value` escaped as TEXT (§3.3.11): what a person wrote (a title, a
    /// room's name) goes through here.
    pub fn text(&mut self, name: &str, value: &str) {
        let mut line = String::with_capacity(name.len() + 1 + value.len() + 8);
        line.push_str(name);
        line.push(':');
        escape_text(value, &mut line);
        self.line(&line);
    }

    /// `NAME;TZID=zone:local time` of `at` on `tz`'s wall clock.
    pub fn local(&mut self, name: &str, tz: &TimeZone, zone: &str, at: Minute) {
        let mut line = String::with_capacity(64);
        line.push_str(name);
        line.push_str(";TZID=");
        param_value(zone, &mut line);
        line.push(':');
        line.push_str(&local_time(tz, at));
        self.line(&line);
    }

    /// `NAME;TZID=zone:t1,t2,…` of each of `times` on `tz`'s wall clock.
    pub fn local_list(&mut self, name: &str, tz: &TimeZone, zone: &str, times: &[Minute]) {
        let mut line = String::with_capacity(32 + 16 * times.len());
        line.push_str(name);
        line.push_str(";TZID=");
        param_value(zone, &mut line);
        line.push(':');
        for (i, at) in times.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            line.push_str(&local_time(tz, *at));
        }
        self.line(&line);
    }

    /// One content line, folded at [`FOLD_AT`] octets (never inside a UTF-8 sequence).
    fn line(&mut self, content: &str) {
        let mut used = 0;
        for c in content.chars() {
            let n = c.len_utf8();
            if used + n > FOLD_AT {
                self.out.push_str("\r\n ");
                used = 1;
            }
            self.out.push(c);
            used += n;
        }
        self.out.push_str("\r\n");
    }

    /// The document.
    pub fn finish(self) -> String {
        self.out
    }
}

/// `s` escaped as iCalendar TEXT into `out`: `\`, `;` and `,` escaped, a line break as `\n`,
/// every other control character (which TEXT may not hold) left out.
pub fn escape_text(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            ',' => out.push_str("\\,"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
}

/// A parameter value (§3.2): quoted when it holds `:`, `;` or `,`; a `"` or a control
/// character, which a parameter may not hold, left out.
fn param_value(s: &str, out: &mut String) {
    let quote = s.contains([':', ';', ',']);
    if quote {
        out.push('"');
    }
    out.extend(s.chars().filter(|c| *c != '"' && !c.is_control()));
    if quote {
        out.push('"');
    }
}

/// A UTC minute as a timestamp (the minutes a store keeps are always in range).
fn stamp(at: Minute) -> Timestamp {
    Timestamp::from_second(i64::from(at) * 60).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// `at` in UTC: `20261207T090000Z`.
pub fn utc_time(at: Minute) -> String {
    stamp(at).strftime("%Y%m%dT%H%M%SZ").to_string()
}

/// A timestamp in UTC: `20261207T090000Z`.
pub fn utc_stamp(at: Timestamp) -> String {
    at.strftime("%Y%m%dT%H%M%SZ").to_string()
}

/// `at` on `tz`'s wall clock: `20261207T100000`.
pub fn local_time(tz: &TimeZone, at: Minute) -> String {
    tz.to_datetime(stamp(at))
        .strftime("%Y%m%dT%H%M%S")
        .to_string()
}

/// An offset as a UTC-OFFSET (§3.3.14): `+0100`, `-0330`, `+053328` with seconds.
fn utc_offset(o: Offset) -> String {
    let s = o.seconds();
    let sign = if s < 0 { '-' } else { '+' };
    let a = s.unsigned_abs();
    let mut t = format!("{sign}{:02}{:02}", a / 3600, a / 60 % 60);
    if !a.is_multiple_of(60) {
        let _ = write!(t, "{:02}", a % 60);
    }
    t
}

/// The VTIMEZONE of `tz` named `zone` covering `from..to`: the observance in force at `from`,
/// then every transition before `to`, each with its own onset (no RRULE: the database's rules
/// as they are, whatever they were or will be).
pub fn vtimezone(ics: &mut Ics, tz: &TimeZone, zone: &str, from: Minute, to: Minute) {
    let (from, to) = (stamp(from), stamp(to));
    ics.raw("BEGIN", "VTIMEZONE");
    ics.text("TZID", zone);
    let first = tz.to_offset_info(from);
    let mut before = first.offset();
    observance(
        ics,
        first.dst().is_dst(),
        &before
            .to_datetime(from)
            .strftime("%Y%m%dT%H%M%S")
            .to_string(),
        (before, before),
        first.abbreviation(),
    );
    for t in tz.following(from).take_while(|t| t.timestamp() < to) {
        let onset = before.to_datetime(t.timestamp());
        observance(
            ics,
            t.dst().is_dst(),
            &onset.strftime("%Y%m%dT%H%M%S").to_string(),
            (before, t.offset()),
            t.abbreviation(),
        );
        before = t.offset();
    }
    ics.raw("END", "VTIMEZONE");
}

/// One STANDARD or DAYLIGHT observance: its onset on the wall clock before it, the offsets
/// from and to, its abbreviation.
fn observance(ics: &mut Ics, dst: bool, onset: &str, (from, to): (Offset, Offset), name: &str) {
    let kind = if dst { "DAYLIGHT" } else { "STANDARD" };
    ics.raw("BEGIN", kind);
    ics.raw("DTSTART", onset);
    ics.raw("TZOFFSETFROM", &utc_offset(from));
    ics.raw("TZOFFSETTO", &utc_offset(to));
    if !name.is_empty() {
        ics.text("TZNAME", name);
    }
    ics.raw("END", kind);
}

#[cfg(test)]
mod tests {
    use super::*;
    use redmark_core::booking::Day;

    fn minute(day: &str, h: u32, m: u32) -> Minute {
        Day::parse(day).unwrap().first_minute() + h * 60 + m
    }

    /// The document's lines unfolded, each checked for CRLF and at most 75 octets.
    fn unfolded(doc: &str) -> Vec<String> {
        assert!(doc.ends_with("\r\n"));
        let mut lines: Vec<String> = Vec::new();
        for physical in doc.strip_suffix("\r\n").unwrap().split("\r\n") {
            assert!(
                physical.len() <= FOLD_AT,
                "{physical:?} longer than 75 octets"
            );
            assert!(!physical.contains('\n') && !physical.contains('\r'));
            match physical.strip_prefix(' ') {
                Some(rest) => lines.last_mut().unwrap().push_str(rest),
                None => lines.push(physical.to_string()),
            }
        }
        lines
    }

    #[test]
    fn text_is_escaped_and_control_characters_are_left_out() {
        let mut out = String::new();
        escape_text("a;b,c\\d\ne\r\u{7}f\tg", &mut out);
        assert_eq!(out, "a\\;b\\,c\\\\d\\nef g");
        let mut ics = Ics::default();
        ics.text("SUMMARY", "Q3; plans, \"draft\"\r\nBEGIN:VEVENT");
        assert_eq!(
            ics.finish(),
            "SUMMARY:Q3\\; plans\\, \"draft\"\\nBEGIN:VEVENT\r\n",
            "a title cannot start a line of its own"
        );
    }

    #[test]
    fn long_lines_fold_at_75_octets_between_characters() {
        let title = "Überprüfung der Quartalsplanung 🗓️ mit allen Teams, Räume: groß; ".repeat(4);
        let mut ics = Ics::default();
        ics.text("SUMMARY", &title);
        let doc = ics.finish();
        let lines = unfolded(&doc);
        let mut expected = String::from("SUMMARY:");
        escape_text(&title, &mut expected);
        assert_eq!(lines, vec![expected]);
        // Folded lines use every octet they may (74 after the leading space) unless a
        // character would be cut.
        let physical: Vec<&str> = doc.split("\r\n").collect();
        assert!(physical.len() > 4);
        for p in &physical[..physical.len() - 2] {
            assert!(p.len() > FOLD_AT - 4, "{p:?} folded too early");
        }
        // Exactly 75 octets stays one line; 76 folds.
        let mut ics = Ics::default();
        ics.raw("X", &"a".repeat(73));
        ics.raw("X", &"a".repeat(74));
        assert_eq!(
            ics.finish(),
            format!("X:{}\r\nX:{}\r\n a\r\n", "a".repeat(73), "a".repeat(73))
        );
    }

    #[test]
    fn berlin_has_both_clock_changes_of_a_year_and_local_times() {
        let tz = TimeZone::get("Europe/Berlin").unwrap();
        let mut ics = Ics::default();
        vtimezone(
            &mut ics,
            &tz,
            "Europe/Berlin",
            minute("2026-11-05", 0, 0),
            minute("2027-12-31", 0, 0),
        );
        let lines = unfolded(&ics.finish());
        let text = lines.join("\n");
        assert!(text.starts_with("BEGIN:VTIMEZONE\nTZID:Europe/Berlin\nBEGIN:STANDARD\n"));
        // In force at the start, then 2027's spring forward and fall back.
        assert!(text.contains(
            "BEGIN:DAYLIGHT\nDTSTART:20270328T020000\nTZOFFSETFROM:+0100\nTZOFFSETTO:+0200\nTZNAME:CEST\nEND:DAYLIGHT"
        ), "{text}");
        assert!(text.contains(
            "BEGIN:STANDARD\nDTSTART:20271031T030000\nTZOFFSETFROM:+0200\nTZOFFSETTO:+0100\nTZNAME:CET\nEND:STANDARD"
        ), "{text}");
        assert_eq!(text.matches("BEGIN:DAYLIGHT").count(), 1);
        assert!(text.ends_with("END:VTIMEZONE"));
        // Wall-clock times on either side of the change.
        assert_eq!(
            local_time(&tz, minute("2026-12-07", 9, 0)),
            "20261207T100000"
        );
        assert_eq!(
            local_time(&tz, minute("2027-06-07", 9, 0)),
            "20270607T110000"
        );
        assert_eq!(utc_time(minute("2027-06-07", 9, 0)), "20270607T090000Z");
    }

    /// TEXT read back: `\n` a line break, `\x` the character x.
    fn unescape(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            match (c, c == '\\') {
                (_, true) => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some(x) => out.push(x),
                    None => panic!("a lone backslash ends {s:?}"),
                },
                (c, false) => {
                    assert!(!matches!(c, ';' | ','), "unescaped {c:?} in {s:?}");
                    out.push(c);
                }
            }
        }
        out
    }

    proptest::proptest! {
        /// Any title (any characters, controls, long multi-byte runs) is one content line of
        /// at most 75 octets a physical line, and reads back as itself without the control
        /// characters TEXT may not hold.
        #[test]
        fn any_title_is_one_line_that_reads_back(title in proptest::prelude::any::<String>()) {
            let mut ics = Ics::default();
            ics.text("SUMMARY", &title);
            ics.raw("END", "VEVENT");
            let lines = unfolded(&ics.finish());
            proptest::prop_assert_eq!(lines.len(), 2);
            proptest::prop_assert_eq!(&lines[1], "END:VEVENT");
            let value = lines[0].strip_prefix("SUMMARY:").unwrap();
            let kept: String = title
                .chars()
                .filter_map(|c| match c {
                    '\t' => Some(' '),
                    '\n' => Some('\n'),
                    c if c.is_control() => None,
                    c => Some(c),
                })
                .collect();
            proptest::prop_assert_eq!(unescape(value), kept);
        }
    }

    #[test]
    fn utc_and_odd_offsets() {
        let mut ics = Ics::default();
        vtimezone(&mut ics, &TimeZone::UTC, "UTC", 0, 1_000_000);
        let text = unfolded(&ics.finish()).join("\n");
        assert!(
            text.contains("TZOFFSETFROM:+0000\nTZOFFSETTO:+0000\nTZNAME:UTC"),
            "{text}"
        );
        assert_eq!(
            utc_offset(Offset::from_seconds(-(3 * 3600 + 1800)).unwrap()),
            "-0330"
        );
        assert_eq!(
            utc_offset(Offset::from_seconds(5 * 3600 + 53 * 60 + 28).unwrap()),
            "+055328"
        );
        let mut out = String::new();
        param_value("a:b\"c", &mut out);
        assert_eq!(out, "\"a:bc\"");
    }
}
