//! Tool arguments checked against the tool's declared arguments before a tool reads them:
//! unknown names (with "did you mean"), missing, wrong type, out of range — a tool error the
//! model can correct, never a protocol error (SEP-1303).

use core::fmt::{self, Write};

use crate::limits::MAX_ARG_NAME;
use crate::mrtr::{Choice, Field, FieldKind, Invalid, Reason, TextFormat};
use crate::wire::echo::quoted;
use crate::wire::json::Value;

/// One argument as a tool's `inputSchema` declares it, compact (a panel keeps these in flash).
#[derive(Clone, Copy, Debug)]
pub struct Arg {
    /// The property name.
    pub name: &'static str,
    /// Whether `required` lists it.
    pub required: bool,
    /// Its type and constraints.
    pub kind: ArgKind,
}

/// The argument types the checks understand.
#[derive(Clone, Copy, Debug)]
pub enum ArgKind {
    /// A string, with an optional `maxLength` and `format`.
    Text(Option<u16>, Option<TextFormat>),
    /// An integer between `minimum` and `maximum`.
    Integer(i32, i32),
    /// `true` or `false`.
    Boolean,
    /// One of these options (a string, `oneOf` of `{const, title}`).
    Choice(&'static [Choice<'static>]),
}

impl Arg {
    /// The same constraints as a form field (one checker and one wording for both).
    pub fn field(&self) -> Field<'static> {
        let kind = match self.kind {
            ArgKind::Text(max_len, format) => FieldKind::Text {
                min_len: None,
                max_len: max_len.map(u32::from),
                format,
                default: None,
            },
            ArgKind::Integer(min, max) => FieldKind::Integer {
                min: Some(min.into()),
                max: Some(max.into()),
                default: None,
            },
            ArgKind::Boolean => FieldKind::Boolean { default: None },
            ArgKind::Choice(options) => FieldKind::Choice {
                options,
                default: None,
            },
        };
        Field {
            name: self.name,
            title: self.name,
            description: None,
            required: self.required,
            kind,
        }
    }
}

/// Why `arguments` do not match a tool's declared arguments.
#[derive(Clone, Copy)]
pub enum ArgsInvalid<'a> {
    /// A name the tool does not take (its schema says `additionalProperties: false`).
    Unknown {
        /// The name sent (a JSON string).
        name: Value<'a>,
        /// The closest argument the tool does take, if any is close.
        suggestion: Option<&'static str>,
    },
    /// A known argument that is missing (`value` is `None`) or does not fit.
    Bad {
        /// The argument.
        arg: Arg,
        /// What is wrong with it.
        reason: Reason,
        /// The value sent.
        value: Option<Value<'a>>,
    },
}

/// Checks `sent` (absent = `{}`) against `args` (distinct names, as a schema's properties
/// are): unknown names first, in document order, then each argument in declaration order; the
/// first problem is the one reported. Each argument's first occurrence is the one checked, all
/// in one walk of `sent`.
pub fn check<'a>(args: &'static [Arg], sent: Option<Value<'a>>) -> Result<(), ArgsInvalid<'a>> {
    check_with(args, sent, false)
}

/// [`check`], except that with `open` (a schema without `additionalProperties: false`) names
/// the tool does not take are let through.
pub(crate) fn check_with<'a>(
    args: &'static [Arg],
    sent: Option<Value<'a>>,
    open: bool,
) -> Result<(), ArgsInvalid<'a>> {
    debug_assert!(
        args.iter()
            .enumerate()
            .all(|(i, a)| args[..i].iter().all(|b| b.name != a.name)),
        "a tool declares an argument twice"
    );
    // The declared arguments seen, one bit each: the first `u32::BITS`; any after those are
    // looked up on their own below.
    let mut seen = 0u32;
    // The first declared argument, in declaration order, whose value does not fit.
    let mut bad: Option<(usize, Reason, Value<'a>)> = None;
    for (name, value) in sent.iter().flat_map(|s| s.members()) {
        let Some((i, arg)) = args.iter().enumerate().find(|(_, a)| name.eq_str(a.name)) else {
            if open {
                continue;
            }
            return Err(ArgsInvalid::Unknown {
                name,
                suggestion: suggest(name, args),
            });
        };
        let Some(bit) = 1u32.checked_shl(i as u32).filter(|b| seen & b == 0) else {
            continue;
        };
        seen |= bit;
        if bad.is_none_or(|(b, ..)| i < b) {
            if let Some(reason) = problem(arg, Some(value)) {
                bad = Some((i, reason, value));
            }
        }
    }
    for (i, arg) in args.iter().enumerate() {
        let (reason, value) = match (bad, 1u32.checked_shl(i as u32)) {
            (Some((b, reason, value)), _) if b == i => (Some(reason), Some(value)),
            (_, Some(bit)) if seen & bit != 0 => continue,
            (_, Some(_)) => (problem(arg, None), None),
            (_, None) => {
                let value = sent.and_then(|s| s.get(arg.name));
                (problem(arg, value), value)
            }
        };
        if let Some(reason) = reason {
            return Err(ArgsInvalid::Bad {
                arg: *arg,
                reason,
                value,
            });
        }
    }
    Ok(())
}

/// What is wrong with `arg` sent as `value` (`None`: not sent), if anything.
fn problem(arg: &Arg, value: Option<Value<'_>>) -> Option<Reason> {
    match value {
        None => arg.required.then_some(Reason::Missing),
        Some(v) => arg.field().kind.check(v).err(),
    }
}

/// The field `name` most likely meant: the smallest edit distance if it is at most 2, or a
/// name one is a prefix of the other of (three characters at least); ties go to the first.
fn suggest(name: Value<'_>, args: &'static [Arg]) -> Option<&'static str> {
    let n = name.chars().count();
    args.iter()
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
    let m = b.len(); // field names are ASCII
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

impl fmt::Debug for ArgsInvalid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The message a tool error carries (a tool writes it with `Reply::fail`).
impl fmt::Display for ArgsInvalid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgsInvalid::Unknown { name, suggestion } => {
                f.write_str("Unknown argument ")?;
                quoted(f, name)?;
                match suggestion {
                    Some(s) => {
                        f.write_str("; did you mean '")?;
                        f.write_str(s)?;
                        f.write_str("'?")?
                    }
                    None => f.write_str(" (see the tool's inputSchema).")?,
                }
                Ok(())
            }
            ArgsInvalid::Bad {
                arg,
                reason: Reason::Missing,
                ..
            } => {
                f.write_str("Missing required argument '")?;
                f.write_str(arg.name)?;
                f.write_str("'.")
            }
            ArgsInvalid::Bad { arg, reason, value } => {
                f.write_str("Invalid argument '")?;
                f.write_str(arg.name)?;
                f.write_str("': ")?;
                let field = arg.field();
                Invalid {
                    field: &field,
                    reason: *reason,
                    value: *value,
                }
                .problem(f)?;
                f.write_char('.')
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::parse;

    const fn arg(name: &'static str, required: bool, kind: ArgKind) -> Arg {
        Arg {
            name,
            required,
            kind,
        }
    }
    const FIELDS: &[Arg] = &[
        arg("day", true, ArgKind::Text(None, Some(TextFormat::Date))),
        arg("hour", true, ArgKind::Integer(0, 23)),
        arg("room_hint", false, ArgKind::Text(Some(8), None)),
        arg("room_id", false, ArgKind::Text(Some(8), None)),
    ];

    fn text(args: &str) -> String {
        let v = parse(args.as_bytes()).unwrap();
        let mut s = String::new();
        match check(FIELDS, Some(v)) {
            Ok(()) => s.push_str("ok"),
            Err(e) => write!(s, "{e}").unwrap(),
        }
        s
    }

    #[test]
    fn says_what_is_wrong_and_what_was_meant() {
        assert_eq!(text(r#"{"day":"2099-01-01","hour":9}"#), "ok");
        assert_eq!(
            text(r#"{"day":"2099-01-01","hour":9,"room":"atrium"}"#),
            "Unknown argument 'room'; did you mean 'room_id'?"
        );
        for (slip, meant) in [("houre", "hour"), ("Day", "day"), ("roomid", "room_id")] {
            let t = text(&format!(r#"{{"day":"2099-01-01","hour":9,"{slip}":1}}"#));
            assert!(
                t.contains(&format!("did you mean '{meant}'")),
                "{slip}: {t}"
            );
        }
        let t = text(r#"{"day":"2099-01-01","hour":9,"colour":"red"}"#);
        assert_eq!(t, "Unknown argument 'colour' (see the tool's inputSchema).");
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

    /// What `check` reported before it walked `sent` once: a walk for the unknown names, then a
    /// lookup per declared argument.
    fn reference<'a>(args: &'static [Arg], sent: Option<Value<'a>>) -> Result<(), ArgsInvalid<'a>> {
        for (name, _) in sent.iter().flat_map(|s| s.members()) {
            if !args.iter().any(|a| name.eq_str(a.name)) {
                return Err(ArgsInvalid::Unknown {
                    name,
                    suggestion: suggest(name, args),
                });
            }
        }
        for arg in args {
            let value = sent.and_then(|s| s.get(arg.name));
            let reason = match value {
                None if arg.required => Reason::Missing,
                None => continue,
                Some(v) => match arg.field().kind.check(v) {
                    Ok(()) => continue,
                    Err(r) => r,
                },
            };
            return Err(ArgsInvalid::Bad {
                arg: *arg,
                reason,
                value,
            });
        }
        Ok(())
    }

    /// The one walk reports what a lookup per argument did: with duplicates, problems in any
    /// order, and more declared arguments than its bit set holds.
    #[test]
    fn one_walk_reports_what_lookups_did() {
        let many: &'static [Arg] = Vec::leak(
            (0..40)
                .map(|i| {
                    let name: &'static str = String::leak(format!("a{i}"));
                    arg(name, i % 3 == 0, ArgKind::Integer(0, 9))
                })
                .collect(),
        );
        let cases: &[(&'static [Arg], &str)] = &[
            (FIELDS, r#"{"hour":24,"day":"x"}"#),
            (FIELDS, r#"{"hour":24,"day":"2099-01-01","nope":1}"#),
            (FIELDS, r#"{"hour":9,"hour":24,"day":"2099-01-01"}"#),
            (FIELDS, r#"{"hour":24,"hour":9,"day":"2099-01-01"}"#),
            (FIELDS, r#"{"room_id":"far-too-long","hour":24}"#),
            (
                FIELDS,
                r#"{"room_id":"far-too-long","day":"2099-01-01","hour":9}"#,
            ),
            (FIELDS, r#"{"d\u0061y":"2099-01-01","hour":9,"day":"bad"}"#),
            (FIELDS, r#"{}"#),
            (
                many,
                r#"{"a0":1,"a3":2,"a6":3,"a9":4,"a12":5,"a15":6,"a18":7,"a21":8}"#,
            ),
            (
                many,
                r#"{"a0":1,"a3":2,"a6":3,"a9":4,"a12":5,"a15":6,"a18":7,"a21":8,"a24":9,"a27":0,"a30":0,"a33":0,"a36":0,"a39":0}"#,
            ),
            (
                many,
                r#"{"a0":1,"a3":2,"a6":3,"a9":4,"a12":5,"a15":6,"a18":7,"a21":8,"a24":9,"a27":0,"a30":0,"a33":10,"a36":0,"a39":0}"#,
            ),
            (
                many,
                r#"{"a0":1,"a3":2,"a6":3,"a9":4,"a12":5,"a15":6,"a18":7,"a21":8,"a24":9,"a27":0,"a30":0,"a33":0,"a35":99,"a36":0,"a39":0,"a39":99}"#,
            ),
            (
                many,
                r#"{"a38":99,"a0":1,"a3":2,"a6":3,"a9":4,"a12":5,"a15":6,"a18":7,"a21":8,"a24":9,"a27":0,"a30":0,"a33":0,"a36":0,"a39":0}"#,
            ),
        ];
        let shown = |r: Result<(), ArgsInvalid<'_>>| match r {
            Ok(()) => "ok".to_string(),
            Err(e) => e.to_string(),
        };
        for (args, json) in cases {
            let v = parse(json.as_bytes()).unwrap();
            assert_eq!(
                shown(check(args, Some(v))),
                shown(reference(args, Some(v))),
                "{json}"
            );
        }
        assert_eq!(shown(check(many, None)), shown(reference(many, None)));
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
