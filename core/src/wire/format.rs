//! The string formats form elicitation allows (`date`, `date-time`, `email`, `uri`): one
//! validator for the server's form checks, the booking tool's day and the client's input.
//!
//! Byte-indexed and panic-free on any UTF-8 input: a multi-byte character where a digit or a
//! separator belongs is simply not that digit or separator.

/// A calendar date, checked (proleptic Gregorian, any four-digit year).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    /// Year, 0000–9999.
    pub year: u16,
    /// Month, 1–12.
    pub month: u8,
    /// Day of month, 1 to the month's length.
    pub day: u8,
}

/// Parses an RFC 3339 `full-date` (`YYYY-MM-DD`): exact length, real month and day.
pub fn date(s: &str) -> Option<Date> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (year, month, day) = (digits(&b[0..4])?, digits(&b[5..7])?, digits(&b[8..10])?);
    let month = u8::try_from(month).ok()?;
    let day = u8::try_from(day).ok()?;
    (day >= 1 && day <= days_in_month(year, month)?).then_some(Date { year, month, day })
}

/// Whether `s` is an RFC 3339 `date-time`: `full-date "T" HH:MM:SS[.frac] (Z / ±HH:MM)`
/// (`t`, `z` and a space for `T` are accepted, as RFC 3339 §5.6 allows).
pub fn is_date_time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 20 || !s.is_char_boundary(10) || date(&s[..10]).is_none() {
        return false;
    }
    if !matches!(b[10], b'T' | b't' | b' ') {
        return false;
    }
    let Some(rest) = time_of_day(&b[11..]) else {
        return false;
    };
    let rest = match rest.split_first() {
        Some((b'.', frac)) => {
            let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 {
                return false;
            }
            &frac[n..]
        }
        _ => rest,
    };
    match rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', hh1, hh2, b':', mm1, mm2] => {
            matches!(digits(&[*hh1, *hh2]), Some(h) if h <= 23)
                && matches!(digits(&[*mm1, *mm2]), Some(m) if m <= 59)
        }
        _ => false,
    }
}

/// Whether `s` looks like an email address: one `@`, a non-empty local part, a domain of two
/// or more non-empty dot-separated labels, no white space or control characters.
pub fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
        && domain.split('.').count() >= 2
        && domain.split('.').all(|label| !label.is_empty())
}

/// Whether `s` is an absolute URI: an RFC 3986 scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-" /
/// "." )`), a colon, a non-empty rest, no white space or control characters.
pub fn is_uri(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut c = scheme.bytes();
    c.next().is_some_and(|f| f.is_ascii_alphabetic())
        && c.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        && !rest.is_empty()
        && !s.chars().any(|ch| ch.is_whitespace() || ch.is_control())
}

/// `HH:MM:SS` at the start of `b` (second 60 allowed for a leap second); the rest after it.
fn time_of_day(b: &[u8]) -> Option<&[u8]> {
    let [h1, h2, b':', m1, m2, b':', s1, s2, rest @ ..] = b else {
        return None;
    };
    let ok = digits(&[*h1, *h2])? <= 23 && digits(&[*m1, *m2])? <= 59 && digits(&[*s1, *s2])? <= 60;
    ok.then_some(rest)
}

/// Days in `month` of `year`; `None` for a month outside 1–12.
fn days_in_month(year: u16, month: u8) -> Option<u8> {
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    Some(match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    })
}

/// The value of a run of one to four ASCII digits.
fn digits(b: &[u8]) -> Option<u16> {
    if b.is_empty() || b.len() > 4 {
        return None;
    }
    b.iter().try_fold(0u16, |n, c| {
        c.is_ascii_digit().then(|| n * 10 + u16::from(c - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(
            date("2026-09-17"),
            Some(Date {
                year: 2026,
                month: 9,
                day: 17
            })
        );
        assert!(date("2028-02-29").is_some());
        assert!(date("2000-02-29").is_some());
        for bad in [
            "2026-99-99",
            "2026-02-29",
            "1900-02-29",
            "2026-13-01",
            "2026-00-10",
            "2026-04-31",
            "2026-04-00",
            "2026-9-17",
            "26-09-17x",
            "abcd-ef-gh",
            "2026-09-1é",
            "",
        ] {
            assert_eq!(date(bad), None, "{bad}");
        }
    }

    #[test]
    fn date_times() {
        for good in [
            "2026-09-17T09:00:00Z",
            "2026-09-17t09:00:00z",
            "2026-09-17 09:00:00Z",
            "2026-09-17T09:00:00.5+02:00",
            "2026-12-31T23:59:60-05:30",
        ] {
            assert!(is_date_time(good), "{good}");
        }
        for bad in [
            "2026-09-17 9:00",
            "2026-09-17T09:00:00",
            "2026-09-17T24:00:00Z",
            "2026-09-17T09:60:00Z",
            "2026-09-17T09:00:00.Z",
            "2026-09-17T09:00:00+2:00",
            "2026-09-17T09:00:00+24:00",
            "2026-99-99T09:00:00Z",
            // Non-ASCII where digits belong: once a panic in the client ("not a char boundary").
            "2026-09-17T00:00:0é0000000",
            "2026-09-1éT00:00:00Z",
            "2026-09-17Té0:00:00Z",
            "2026-09-17T09:00:00+0é:00",
        ] {
            assert!(!is_date_time(bad), "{bad}");
        }
    }

    #[test]
    fn emails_and_uris() {
        assert!(is_email("ada@example.org"));
        for bad in [
            "ab",
            "@example.org",
            "a@b",
            "a@@b.c",
            "a b@c.d",
            "a@b..c",
            "a@.b",
        ] {
            assert!(!is_email(bad), "{bad}");
        }
        assert!(is_uri("https://example.com/x"));
        assert!(is_uri("urn:isbn:0451450523"));
        for bad in ["no scheme", ":x", "1a:x", "https:", "https://a b", "é:x"] {
            assert!(!is_uri(bad), "{bad}");
        }
    }

    #[test]
    fn never_panics_on_any_short_utf8() {
        // Every string of up to three characters from a mix of ASCII and multi-byte ones.
        let alphabet = ['0', '9', '-', ':', 'T', 'Z', '.', '+', '@', 'é', '€', '😀'];
        let mut buf = [0u8; 16];
        for a in alphabet {
            for b in alphabet {
                for c in alphabet {
                    let mut n = 0;
                    for ch in [a, b, c] {
                        n += ch.encode_utf8(&mut buf[n..]).len();
                    }
                    let s = core::str::from_utf8(&buf[..n]).unwrap();
                    let _ = (date(s), is_date_time(s), is_email(s), is_uri(s));
                }
            }
        }
    }
}
