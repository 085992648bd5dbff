//! Form-mode elicitation: a flat object of primitive fields, emitted as `requestedSchema`
//! and used again to validate what comes back.

use core::fmt;

use crate::limits::MAX_STR;
use crate::wire::format;
use crate::wire::json::{Kind, Value};
use crate::wire::write::Writer;

/// One elicitation form.
#[derive(Clone, Copy)]
pub struct Form<'f> {
    /// What the user is asked, shown above the fields.
    pub message: &'f dyn fmt::Display,
    /// The fields, in display order.
    pub fields: &'f [Field<'f>],
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
}

/// One option of a [`FieldKind::Choice`].
#[derive(Clone, Copy)]
pub struct Choice<'f> {
    /// The value sent back.
    pub value: &'f str,
    /// What the user sees.
    pub title: &'f dyn fmt::Display,
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

/// Why accepted content does not match the form (which field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invalid<'f> {
    /// The offending field.
    pub field: &'f str,
}

impl<'f> Form<'f> {
    /// Writes the `elicitation/create` params: mode, message and `requestedSchema`.
    pub fn write_params(&self, w: &mut Writer<'_>) {
        w.begin_object().key("mode").string("form");
        w.key("message")
            .string_fmt(format_args!("{}", self.message));
        w.key("requestedSchema")
            .begin_object()
            .key("type")
            .string("object");
        w.key("properties").begin_object();
        for f in self.fields {
            w.key(f.name);
            f.write_schema(w);
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

    /// Checks accepted `content` against the fields (unknown members are ignored).
    pub fn validate(&self, content: Value<'_>) -> Result<(), Invalid<'f>> {
        for f in self.fields {
            match content.get(f.name) {
                None if f.required => return Err(Invalid { field: f.name }),
                None => {}
                Some(v) if !f.kind.accepts(v) => return Err(Invalid { field: f.name }),
                Some(_) => {}
            }
        }
        Ok(())
    }
}

impl Field<'_> {
    fn write_schema(&self, w: &mut Writer<'_>) {
        w.begin_object();
        let ty = match self.kind {
            FieldKind::Text { .. } | FieldKind::Choice { .. } => "string",
            FieldKind::Integer { .. } => "integer",
            FieldKind::Boolean { .. } => "boolean",
        };
        w.key("type").string(ty).key("title").string(self.title);
        if let Some(d) = self.description {
            w.key("description").string(d);
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
                for o in options {
                    w.begin_object().key("const").string(o.value);
                    w.key("title").string_fmt(format_args!("{}", o.title));
                    w.end_object();
                }
                w.end_array();
                if let Some(d) = default {
                    w.key("default").string(d);
                }
            }
        }
        w.end_object();
    }
}

impl FieldKind<'_> {
    fn accepts(&self, v: Value<'_>) -> bool {
        match *self {
            FieldKind::Text {
                min_len,
                max_len,
                format,
                ..
            } => {
                if v.kind() != Kind::String {
                    return false;
                }
                let n = v.chars().count() as u32;
                min_len.is_none_or(|m| n >= m)
                    && max_len.is_none_or(|m| n <= m)
                    && format.is_none_or(|f| format_ok(f, v))
            }
            FieldKind::Integer { min, max, .. } => match v.as_i64() {
                Some(i) => min.is_none_or(|m| i >= m) && max.is_none_or(|m| i <= m),
                None => false,
            },
            FieldKind::Boolean { .. } => v.as_bool().is_some(),
            FieldKind::Choice { options, .. } => options.iter().any(|o| v.eq_str(o.value)),
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
mod tests {
    use super::*;
    use crate::wire::json::parse;

    const ROOMS: &[Choice<'static>] = &[
        Choice {
            value: "atrium",
            title: &"The Atrium (24 seats)",
        },
        Choice {
            value: "studio-b",
            title: &"Studio B (12 seats)",
        },
    ];
    const FIELDS: &[Field<'static>] = &[
        Field {
            name: "room_id",
            title: "Room",
            description: None,
            required: true,
            kind: FieldKind::Choice {
                options: ROOMS,
                default: None,
            },
        },
        Field {
            name: "attendees",
            title: "Attendees",
            description: Some("How many people"),
            required: false,
            kind: FieldKind::Integer {
                min: Some(1),
                max: Some(24),
                default: None,
            },
        },
        Field {
            name: "email",
            title: "Email",
            description: None,
            required: false,
            kind: FieldKind::Text {
                min_len: None,
                max_len: Some(64),
                format: Some(TextFormat::Email),
                default: None,
            },
        },
    ];

    fn form() -> Form<'static> {
        Form {
            message: &"Which room?",
            fields: FIELDS,
        }
    }

    #[test]
    fn emits_flat_schema() {
        let mut buf = [0u8; 1024];
        let mut w = Writer::new(&mut buf);
        form().write_params(&mut w);
        let n = w.finish().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&buf[..n]).unwrap();
        assert_eq!(v["mode"], "form");
        assert_eq!(
            v["requestedSchema"]["properties"]["room_id"]["oneOf"][1]["const"],
            "studio-b"
        );
        assert_eq!(
            v["requestedSchema"]["required"],
            serde_json::json!(["room_id"])
        );
    }

    #[test]
    fn validates_content() {
        let ok = |s: &str| form().validate(parse(s.as_bytes()).unwrap());
        assert_eq!(ok(r#"{"room_id":"studio-b","extra":[1]}"#), Ok(()));
        assert_eq!(
            ok(r#"{"room_id":"nook"}"#),
            Err(Invalid { field: "room_id" })
        );
        assert_eq!(ok(r#"{}"#), Err(Invalid { field: "room_id" }));
        assert_eq!(
            ok(r#"{"room_id":"atrium","attendees":25}"#),
            Err(Invalid { field: "attendees" })
        );
        assert_eq!(
            ok(r#"{"room_id":"atrium","attendees":"3"}"#),
            Err(Invalid { field: "attendees" })
        );
        assert_eq!(ok(r#"{"room_id":"atrium","email":"a@b.example"}"#), Ok(()));
        assert_eq!(
            ok(r#"{"room_id":"atrium","email":"a@b"}"#),
            Err(Invalid { field: "email" })
        );
        assert_eq!(
            ok(r#"{"room_id":"atrium","email":"ab"}"#),
            Err(Invalid { field: "email" })
        );
    }
}
