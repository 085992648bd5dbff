//! Tool arguments checked against the tool's declared fields before a tool reads them: unknown
//! names (with "did you mean"), missing, wrong type, out of range — a tool error the model
//! can correct, never a protocol error (SEP-1303).

use core::fmt::{self, Write};

use super::app::Report;
use crate::limits::MAX_ARG_NAME;
use crate::mrtr::{Field, Invalid, Reason};
use crate::wire::echo::quoted;
use crate::wire::json::Value;

/// Why `arguments` do not match a tool's fields.
#[derive(Clone, Copy)]
pub enum ArgsInvalid<'f, 'a> {
    /// A name the tool does not take (its schema says `additionalProperties: false`).
    Unknown {
        /// The name sent (a JSON string).
        name: Value<'a>,
        /// The closest argument the tool does take, if any is close.
        suggestion: Option<&'f str>,
        /// The tool's arguments, listed in the message.
        fields: &'f [Field<'f>],
    },
    /// A known argument that is missing or does not fit.
    Field(Invalid<'f, 'a>),
}

/// Checks `args` (absent = `{}`) against `fields`: unknown names first, in document order,
/// then each field in declaration order; the first problem is the one reported.
pub fn check<'f, 'a>(
    fields: &'f [Field<'f>],
    args: Option<Value<'a>>,
) -> Result<(), ArgsInvalid<'f, 'a>> {
    let Some(args) = args else {
        return match fields.iter().find(|f| f.required) {
            Some(field) => Err(ArgsInvalid::Field(missing(field))),
            None => Ok(()),
        };
    };
    for (name, _) in args.members() {
        if !fields.iter().any(|f| name.eq_str(f.name)) {
            let suggestion = suggest(name, fields);
            return Err(ArgsInvalid::Unknown {
                name,
                suggestion,
                fields,
            });
        }
    }
    for field in fields {
        match args.get(field.name) {
            None if field.required => return Err(ArgsInvalid::Field(missing(field))),
            None => {}
            Some(v) => field.kind.check(v).map_err(|reason| {
                ArgsInvalid::Field(Invalid {
                    field,
                    reason,
                    value: Some(v),
                })
            })?,
        }
    }
    Ok(())
}

fn missing<'f>(field: &'f Field<'f>) -> Invalid<'f, 'static> {
    Invalid {
        field,
        reason: Reason::Missing,
        value: None,
    }
}

/// The field `name` most likely meant: the smallest edit distance if it is at most 2, or a
/// name one is a prefix of the other of (three characters at least); ties go to the first.
fn suggest<'f>(name: Value<'_>, fields: &'f [Field<'f>]) -> Option<&'f str> {
    let n = name.chars().count();
    fields
        .iter()
        .filter_map(|f| {
            let d = distance(name, f.name)?;
            let short = n.min(f.name.len());
            let prefix = short >= 3 && is_prefix(name, f.name);
            (d <= 2 || prefix).then_some((d, f.name))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// Whether one of the two is a prefix of the other (ASCII case-insensitive).
fn is_prefix(a: Value<'_>, b: &str) -> bool {
    a.chars()
        .zip(b.chars())
        .all(|(x, y)| x.eq_ignore_ascii_case(&y))
}

/// Levenshtein distance between a client's name and a field name (ASCII case-insensitive);
/// `None` for a field name longer than [`MAX_ARG_NAME`].
fn distance(a: Value<'_>, b: &str) -> Option<usize> {
    let m = b.chars().count();
    if m > MAX_ARG_NAME {
        return None;
    }
    let mut row = [0usize; MAX_ARG_NAME + 1];
    for (j, r) in row.iter_mut().enumerate().take(m + 1) {
        *r = j;
    }
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.chars().enumerate() {
            let cost = usize::from(!ca.eq_ignore_ascii_case(&cb));
            let next = (row[j] + 1).min(row[j + 1] + 1).min(diag + cost);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    Some(row[m])
}

impl fmt::Debug for ArgsInvalid<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.text(f)
    }
}

impl Report for ArgsInvalid<'_, '_> {
    fn text(&self, f: &mut dyn Write) -> fmt::Result {
        match self {
            ArgsInvalid::Unknown {
                name,
                suggestion,
                fields,
            } => {
                f.write_str("Unknown argument ")?;
                quoted(f, name)?;
                if let Some(s) = suggestion {
                    write!(f, "; did you mean '{s}'?")?;
                } else {
                    f.write_char('.')?;
                }
                f.write_str(" Arguments:")?;
                for (i, field) in fields.iter().enumerate() {
                    let sep = if i == 0 { " " } else { ", " };
                    write!(f, "{sep}{}", field.name)?;
                }
                f.write_char('.')
            }
            ArgsInvalid::Field(e) if e.reason == Reason::Missing => {
                write!(f, "Missing required argument '{}'", e.field.name)?;
                match e.field.description {
                    Some(d) => write!(f, ": {d}."),
                    None => f.write_char('.'),
                }
            }
            ArgsInvalid::Field(e) => {
                write!(f, "Invalid argument '{}': ", e.field.name)?;
                e.problem(f)?;
                f.write_char('.')
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrtr::{FieldKind, TextFormat};
    use crate::wire::json::parse;

    const fn field(name: &'static str, required: bool, kind: FieldKind<'static>) -> Field<'static> {
        Field {
            name,
            title: name,
            description: None,
            required,
            kind,
        }
    }
    const TEXT: FieldKind<'static> = FieldKind::Text {
        min_len: None,
        max_len: Some(8),
        format: None,
        default: None,
    };
    const FIELDS: &[Field<'static>] = &[
        field(
            "day",
            true,
            FieldKind::Text {
                min_len: None,
                max_len: None,
                format: Some(TextFormat::Date),
                default: None,
            },
        ),
        field(
            "hour",
            true,
            FieldKind::Integer {
                min: Some(0),
                max: Some(23),
                default: None,
            },
        ),
        field("room_hint", false, TEXT),
        field("room_id", false, TEXT),
    ];

    fn text(args: &str) -> String {
        let v = parse(args.as_bytes()).unwrap();
        let mut s = String::new();
        match check(FIELDS, Some(v)) {
            Ok(()) => s.push_str("ok"),
            Err(e) => e.text(&mut s).unwrap(),
        }
        s
    }

    #[test]
    fn says_what_is_wrong_and_what_was_meant() {
        assert_eq!(text(r#"{"day":"2099-01-01","hour":9}"#), "ok");
        assert_eq!(
            text(r#"{"day":"2099-01-01","hour":9,"room":"atrium"}"#),
            "Unknown argument 'room'; did you mean 'room_id'? \
             Arguments: day, hour, room_hint, room_id."
        );
        for (slip, meant) in [("houre", "hour"), ("Day", "day"), ("roomid", "room_id")] {
            let t = text(&format!(r#"{{"day":"2099-01-01","hour":9,"{slip}":1}}"#));
            assert!(
                t.contains(&format!("did you mean '{meant}'")),
                "{slip}: {t}"
            );
        }
        let t = text(r#"{"day":"2099-01-01","hour":9,"colour":"red"}"#);
        assert!(
            t.starts_with("Unknown argument 'colour'. Arguments:"),
            "{t}"
        );
        assert_eq!(text(r#"{"hour":9}"#), "Missing required argument 'day'.");
        assert_eq!(
            text(r#"{"day":"2099-01-01","hour":24}"#),
            "Invalid argument 'hour': 24 is more than the maximum, 23."
        );
        assert_eq!(
            text(r#"{"day":"2099-01-01","hour":"9"}"#),
            "Invalid argument 'hour': '9' is not a whole number."
        );
        assert_eq!(
            text(r#"{"day":"2099-01-01","hour":9.5}"#),
            "Invalid argument 'hour': 9.5 is not a whole number."
        );
        assert_eq!(
            text(r#"{"day":"17/09/2099","hour":9}"#),
            "Invalid argument 'day': '17/09/2099' is not a date (YYYY-MM-DD)."
        );
        assert_eq!(
            text(r#"{"day":"2099-01-01","hour":9,"room_id":"a-very-long-id"}"#),
            "Invalid argument 'room_id': 'a-very-long-id' is longer than 8 characters."
        );
        assert!(check(FIELDS, None).is_err());
    }

    #[test]
    fn distances() {
        fn d(a: &str, b: &str) -> Option<usize> {
            distance(parse(format!("\"{a}\"").as_bytes()).unwrap(), b)
        }
        assert_eq!(d("room", "room_id"), Some(3));
        assert_eq!(d("kitten", "sitting"), Some(3));
        assert_eq!(d("", "day"), Some(3));
        assert_eq!(d("DAY", "day"), Some(0));
        assert_eq!(d("x", &"y".repeat(MAX_ARG_NAME + 1)), None);
        // A long client name costs time linear in its length, never a panic.
        assert_eq!(d(&"z".repeat(5000), "day"), Some(5000));
    }
}
