//! Form-mode elicitation: a flat object of primitive fields, emitted as `requestedSchema`
//! and used again to validate what comes back.

use core::fmt::{self, Write};

use crate::limits::MAX_STR;
use crate::wire::echo::quoted;
use crate::wire::format;
use crate::wire::json::{Kind, Value};
use crate::wire::write::{Num, Writer};

/// One elicitation form.
#[derive(Clone, Copy)]
pub struct Form<'f> {
    /// What the user is asked, shown above the fields.
    pub message: &'f dyn fmt::Display,
    /// The fields, in display order.
    pub fields: &'f [Field<'f>],
    /// The red mark: what was wrong with the last answer, written into a re-ask.
    pub mark: Option<Invalid<'f, 'f>>,
}

/// One field of a form.
#[derive(Clone, Copy)]
pub struct Field<'f> {
    /// The property name in `requestedSchema` and in the accepted `content`.
    pub name: &'f str,
    /// A short label.
    pub title: &'f str,
    /// A longer explanation, if any.
    pub description: Option<&'f str>,
    /// Whether `accept` must carry this field.
    pub required: bool,
    /// Its type and constraints.
    pub kind: FieldKind<'f>,
}

/// The primitive field types form mode allows.
#[derive(Clone, Copy)]
pub enum FieldKind<'f> {
    /// A string, with optional length bounds and format.
    Text {
        /// Fewest characters.
        min_len: Option<u32>,
        /// Most characters.
        max_len: Option<u32>,
        /// A format the client may enforce.
        format: Option<TextFormat>,
        /// A value to prefill.
        default: Option<&'f str>,
    },
    /// An integer, with optional bounds.
    Integer {
        /// Smallest allowed.
        min: Option<i64>,
        /// Largest allowed.
        max: Option<i64>,
        /// A value to prefill.
        default: Option<i64>,
    },
    /// A yes/no.
    Boolean {
        /// A value to prefill.
        default: Option<bool>,
    },
    /// One of several titled options (`oneOf` of `{const, title}`).
    Choice {
        /// The options.
        options: &'f [Choice<'f>],
        /// The option to preselect.
        default: Option<&'f str>,
    },
    /// A kind defined outside this module (a multi-select, `typed::PicksField`), linked into a
    /// firmware only where a form uses it.
    Shaped(&'f dyn FieldShape),
}

/// A field kind defined outside this module: its JSON type, its schema members, its check
/// and the words for what is wrong with a value.
pub trait FieldShape {
    /// The JSON type of a value (`"array"`).
    fn json_type(&self) -> &'static str;
    /// Writes the schema's members after `type`, `title` and `description`.
    fn write_members(&self, w: &mut Writer<'_>);
    /// Checks one value.
    fn check(&self, v: Value<'_>) -> Result<(), Reason>;
    /// What is wrong, after the quoted value ("picks more than 2"), for a reason of `check`.
    fn problem(&self, reason: Reason, f: &mut dyn fmt::Write) -> fmt::Result;
}

/// One option of a [`FieldKind::Choice`].
#[derive(Clone, Copy)]
pub struct Choice<'f> {
    /// The value sent back.
    pub value: &'f str,
    /// What the user sees.
    pub title: &'f dyn fmt::Display,
}

impl fmt::Debug for Choice<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Choice({:?})", self.value)
    }
}

/// String formats form mode allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextFormat {
    /// `email`
    Email,
    /// `uri`
    Uri,
    /// `date` (YYYY-MM-DD)
    Date,
    /// `date-time`
    DateTime,
}

impl TextFormat {
    fn name(self) -> &'static str {
        match self {
            TextFormat::Email => "email",
            TextFormat::Uri => "uri",
            TextFormat::Date => "date",
            TextFormat::DateTime => "date-time",
        }
    }
}

/// Why one value does not fit its field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// A required field is absent.
    Missing,
    /// Not the field's JSON type.
    WrongType,
    /// Fewer characters than `minLength`.
    TooShort,
    /// More characters than `maxLength`.
    TooLong,
    /// Not the field's `format`.
    BadFormat,
    /// Less than `minimum`.
    BelowMinimum,
    /// More than `maximum`.
    AboveMaximum,
    /// Not one of the options offered.
    NotOffered,
    /// Fewer picks than `minItems`.
    TooFew,
    /// More picks than `maxItems`.
    TooMany,
}

/// Why content does not match a form: the offending field, the reason, the value sent.
#[derive(Clone, Copy)]
pub struct Invalid<'f, 'a> {
    /// The offending field.
    pub field: &'f Field<'f>,
    /// What is wrong with it.
    pub reason: Reason,
    /// The value sent (`None` when missing).
    pub value: Option<Value<'a>>,
}

impl fmt::Debug for Invalid<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid({}, {:?})", self.field.name, self.reason)
    }
}

impl Invalid<'_, '_> {
    /// The problem, without the field's name: "'moon' is not one of the options offered".
    pub fn problem(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        let Some(v) = self.value else {
            return f.write_str("a value is required");
        };
        quoted(f, &v)?;
        if let FieldKind::Shaped(shape) = self.field.kind {
            return shape.problem(self.reason, f);
        }
        let (min, max) = self.field.kind.bounds();
        match self.reason {
            Reason::Missing | Reason::WrongType | Reason::BadFormat => {
                f.write_str(" is not ")?;
                f.write_str(self.field.kind.expected())
            }
            Reason::TooShort => write!(f, " is shorter than {} characters", Num(min)),
            Reason::TooLong => write!(f, " is longer than {} characters", Num(max)),
            Reason::BelowMinimum => write!(f, " is less than the minimum, {}", Num(min)),
            Reason::AboveMaximum => write!(f, " is more than the maximum, {}", Num(max)),
            Reason::NotOffered => f.write_str(" is not one of the options offered"),
            Reason::TooFew | Reason::TooMany => f.write_str(" is not a list of the options"),
        }
    }
}

/// "Title: problem." — the red mark as a form's message shows it.
impl fmt::Display for Invalid<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.field.title)?;
        f.write_str(": ")?;
        self.problem(f)?;
        f.write_char('.')
    }
}

impl<'f> Form<'f> {
    /// Writes the `elicitation/create` params: mode, message and `requestedSchema`.
    pub fn write_params(&self, w: &mut Writer<'_>) {
        w.begin_object().key("mode").string("form");
        match &self.mark {
            Some(m) => w
                .key("message")
                .string_fmt(format_args!("{m} {}", self.message)),
            None => w
                .key("message")
                .string_fmt(format_args!("{}", self.message)),
        };
        w.key("requestedSchema")
            .begin_object()
            .key("type")
            .string("object");
        w.key("properties").begin_object();
        for f in self.fields {
            w.key(f.name);
            let mark = self.mark.filter(|m| m.field.name == f.name);
            f.write_schema(w, mark);
        }
        w.end_object();
        if self.fields.iter().any(|f| f.required) {
            w.key("required").begin_array();
            self.fields.iter().filter(|f| f.required).for_each(|f| {
                w.string(f.name);
            });
            w.end_array();
        }
        w.end_object().end_object();
    }

    /// Checks accepted `content` against the fields (unknown members are ignored); the
    /// first field that does not fit, in form order, is the one reported.
    pub fn validate<'a>(&self, content: Value<'a>) -> Result<(), Invalid<'f, 'a>> {
        for field in self.fields {
            let value = content.get(field.name);
            let reason = match value {
                None if field.required => Reason::Missing,
                None => continue,
                Some(v) => match field.kind.check(v) {
                    Ok(()) => continue,
                    Err(r) => r,
                },
            };
            return Err(Invalid {
                field,
                reason,
                value,
            });
        }
        Ok(())
    }
}

impl Field<'_> {
    fn write_schema(&self, w: &mut Writer<'_>, mark: Option<Invalid<'_, '_>>) {
        w.begin_object();
        let ty = match self.kind {
            FieldKind::Text { .. } | FieldKind::Choice { .. } => "string",
            FieldKind::Integer { .. } => "integer",
            FieldKind::Boolean { .. } => "boolean",
            FieldKind::Shaped(shape) => shape.json_type(),
        };
        w.key("type").string(ty).key("title").string(self.title);
        match (self.description, mark) {
            (d, Some(m)) => {
                w.key("description").string_with(|f| {
                    if let Some(d) = d {
                        f.write_str(d)?;
                        f.write_str(" — ")?;
                    }
                    f.write_str("last answer: ")?;
                    m.problem(f)
                });
            }
            (Some(d), None) => {
                w.key("description").string(d);
            }
            (None, None) => {}
        }
        match self.kind {
            FieldKind::Text {
                min_len,
                max_len,
                format,
                default,
            } => {
                if let Some(n) = min_len {
                    w.key("minLength").int(n.into());
                }
                if let Some(n) = max_len {
                    w.key("maxLength").int(n.into());
                }
                if let Some(f) = format {
                    w.key("format").string(f.name());
                }
                if let Some(d) = default {
                    w.key("default").string(d);
                }
            }
            FieldKind::Integer { min, max, default } => {
                for (k, v) in [("minimum", min), ("maximum", max), ("default", default)] {
                    if let Some(v) = v {
                        w.key(k).int(v);
                    }
                }
            }
            FieldKind::Boolean { default } => {
                if let Some(d) = default {
                    w.key("default").bool(d);
                }
            }
            FieldKind::Choice { options, default } => {
                w.key("oneOf").begin_array();
                write_options(w, options);
                w.end_array();
                if let Some(d) = default {
                    w.key("default").string(d);
                }
            }
            FieldKind::Shaped(shape) => shape.write_members(w),
        }
        w.end_object();
    }
}

/// The options as `{const, title}` objects.
pub(crate) fn write_options(w: &mut Writer<'_>, options: &[Choice<'_>]) {
    for o in options {
        w.begin_object().key("const").string(o.value);
        w.key("title").string_fmt(format_args!("{}", o.title));
        w.end_object();
    }
}

impl FieldKind<'_> {
    /// Checks one value against the kind's type and constraints.
    pub fn check(&self, v: Value<'_>) -> Result<(), Reason> {
        let fail = |bad: bool, r: Reason| if bad { Err(r) } else { Ok(()) };
        match *self {
            FieldKind::Text {
                min_len,
                max_len,
                format,
                ..
            } => {
                fail(v.kind() != Kind::String, Reason::WrongType)?;
                let n = v.chars().count() as u32;
                fail(min_len.is_some_and(|m| n < m), Reason::TooShort)?;
                fail(max_len.is_some_and(|m| n > m), Reason::TooLong)?;
                fail(format.is_some_and(|f| !format_ok(f, v)), Reason::BadFormat)
            }
            FieldKind::Integer { min, max, .. } => {
                let i = v.as_i64().ok_or(Reason::WrongType)?;
                fail(min.is_some_and(|m| i < m), Reason::BelowMinimum)?;
                fail(max.is_some_and(|m| i > m), Reason::AboveMaximum)
            }
            FieldKind::Boolean { .. } => v.as_bool().map(|_| ()).ok_or(Reason::WrongType),
            FieldKind::Choice { options, .. } => fail(
                !options.iter().any(|o| v.eq_str(o.value)),
                Reason::NotOffered,
            ),
            FieldKind::Shaped(shape) => shape.check(v),
        }
    }

    /// The lower and upper bound (length or value) a reason may quote.
    fn bounds(&self) -> (i64, i64) {
        match *self {
            FieldKind::Text {
                min_len, max_len, ..
            } => (min_len.unwrap_or(0).into(), max_len.unwrap_or(0).into()),
            FieldKind::Integer { min, max, .. } => (min.unwrap_or(0), max.unwrap_or(0)),
            _ => (0, 0),
        }
    }

    /// What a value of this kind is, in words ("a whole number", "a date (YYYY-MM-DD)").
    fn expected(&self) -> &'static str {
        match *self {
            FieldKind::Text { format, .. } => match format {
                Some(TextFormat::Email) => "an email address",
                Some(TextFormat::Uri) => "an absolute URI",
                Some(TextFormat::Date) => "a date (YYYY-MM-DD)",
                Some(TextFormat::DateTime) => "a date-time (RFC 3339)",
                None => "text",
            },
            FieldKind::Integer { .. } => "a whole number",
            FieldKind::Boolean { .. } => "true or false",
            FieldKind::Choice { .. } => "one of the options offered",
            FieldKind::Shaped(_) => "a value of the field's kind",
        }
    }
}

/// Whether string `v` has format `f`, by the one validator in [`crate::wire::format`]. A
/// value with escapes that decodes to more than [`MAX_STR`] bytes has none of the formats.
fn format_ok(f: TextFormat, v: Value<'_>) -> bool {
    let mut scratch = [0u8; MAX_STR];
    let Some(s) = v.as_str(&mut scratch) else {
        return false;
    };
    match f {
        TextFormat::Email => format::is_email(s),
        TextFormat::Uri => format::is_uri(s),
        TextFormat::Date => format::date(s).is_some(),
        TextFormat::DateTime => format::is_date_time(s),
    }
}

#[cfg(test)]
#[path = "form_tests.rs"]
mod tests;
