//! Form-mode elicitation on the client side: the `requestedSchema` a server sends, read into
//! fields, and the checks every answer passes before it is sent (typed in a terminal or given
//! with `--answer`).

use redmark_core::wire::format;
use serde_json::{Map, Number, Value};

/// One `elicitation/create` form.
#[derive(Debug, Clone)]
pub struct Form {
    /// What the user is asked.
    pub message: String,
    /// The fields, in the server's order.
    pub fields: Vec<Field>,
}

/// One field of a form.
#[derive(Debug, Clone)]
pub struct Field {
    /// Property name in `requestedSchema` and in the accepted `content`.
    pub name: String,
    /// Short label, if the server gave one.
    pub title: Option<String>,
    /// Longer explanation, if any.
    pub description: Option<String>,
    /// Whether `accept` must carry it.
    pub required: bool,
    /// Type and constraints.
    pub kind: Kind,
}

/// The primitive field types form mode allows.
#[derive(Debug, Clone)]
pub enum Kind {
    /// Free text.
    Text {
        /// Fewest characters.
        min_len: Option<u64>,
        /// Most characters.
        max_len: Option<u64>,
        /// `email`, `uri`, `date` or `date-time`.
        format: Option<String>,
        /// Value to prefill.
        default: Option<String>,
    },
    /// A number; `integer` when the schema says `"type":"integer"`.
    Number {
        /// Whole numbers only.
        integer: bool,
        /// Smallest allowed.
        min: Option<f64>,
        /// Largest allowed.
        max: Option<f64>,
        /// Value to prefill.
        default: Option<Number>,
    },
    /// Yes or no.
    Boolean {
        /// Value to prefill.
        default: Option<bool>,
    },
    /// One of several strings (`enum`, `oneOf` of `{const,title}`, legacy `enumNames`).
    Choice {
        /// The options.
        options: Vec<Choice>,
        /// The option to preselect.
        default: Option<String>,
    },
    /// Several of several strings (`type:"array"` with `items.enum` or `items.anyOf`).
    Multi {
        /// The options.
        options: Vec<Choice>,
        /// Fewest picks.
        min_items: Option<u64>,
        /// Most picks.
        max_items: Option<u64>,
        /// Options to preselect.
        default: Vec<String>,
    },
}

/// One option of a choice.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The value sent back.
    pub value: String,
    /// What the user sees, if the server titled it.
    pub title: Option<String>,
}

impl std::fmt::Display for Choice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.title {
            Some(t) if t != &self.value => write!(f, "{t}  [{}]", self.value),
            _ => f.write_str(&self.value),
        }
    }
}

impl Form {
    /// Reads the params of an `elicitation/create` input request in form mode.
    pub fn parse(params: &Value) -> Result<Form, String> {
        let message = params
            .get("message")
            .and_then(Value::as_str)
            .ok_or("the form has no message")?
            .to_owned();
        let schema = params
            .get("requestedSchema")
            .ok_or("the form has no requestedSchema")?;
        match schema.get("type") {
            Some(Value::String(t)) if t == "object" => {}
            _ => return Err("requestedSchema is not of type object".into()),
        }
        let props = match schema.get("properties") {
            Some(Value::Object(p)) => p,
            _ => return Err("requestedSchema has no properties object".into()),
        };
        let required: Vec<&str> = match schema.get("required") {
            None => Vec::new(),
            Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
            Some(_) => return Err("requestedSchema.required is not an array".into()),
        };
        let mut fields = Vec::with_capacity(props.len());
        for (name, p) in props {
            let kind = parse_kind(p).map_err(|e| format!("field '{name}': {e}"))?;
            fields.push(Field {
                name: name.clone(),
                title: p.get("title").and_then(Value::as_str).map(str::to_owned),
                description: p
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                required: required.contains(&name.as_str()),
                kind,
            });
        }
        for r in &required {
            if !props.contains_key(*r) {
                return Err(format!(
                    "requestedSchema requires '{r}', which is not a property"
                ));
            }
        }
        Ok(Form { message, fields })
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Checks a whole `content` object: every required field present, every value valid.
    pub fn check(&self, content: &Map<String, Value>) -> Result<(), String> {
        for f in &self.fields {
            match content.get(&f.name) {
                None if f.required => return Err(format!("{} is required", f.label())),
                None => {}
                Some(v) => f.check(v).map_err(|e| format!("{}: {e}", f.label()))?,
            }
        }
        Ok(())
    }
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
}

fn uint(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_u64)
}

fn options_of(p: &Value) -> Result<Option<Vec<Choice>>, String> {
    if let Some(one_of) = p.get("oneOf").or_else(|| p.get("anyOf")) {
        let arr = one_of.as_array().ok_or("oneOf is not an array")?;
        let mut out = Vec::with_capacity(arr.len());
        for o in arr {
            let value = o
                .get("const")
                .and_then(Value::as_str)
                .ok_or("an option has no string const")?;
            let title = o.get("title").and_then(Value::as_str).map(str::to_owned);
            out.push(Choice {
                value: value.to_owned(),
                title,
            });
        }
        return Ok(Some(out));
    }
    if let Some(e) = p.get("enum") {
        let arr = e.as_array().ok_or("enum is not an array")?;
        let names = p.get("enumNames").and_then(Value::as_array);
        let mut out = Vec::with_capacity(arr.len());
        for (i, v) in arr.iter().enumerate() {
            let value = v.as_str().ok_or("an enum value is not a string")?;
            let title = names
                .and_then(|n| n.get(i))
                .and_then(Value::as_str)
                .map(str::to_owned);
            out.push(Choice {
                value: value.to_owned(),
                title,
            });
        }
        return Ok(Some(out));
    }
    Ok(None)
}

fn parse_kind(p: &Value) -> Result<Kind, String> {
    let ty = p.get("type").and_then(Value::as_str).ok_or("no type")?;
    let kind = match ty {
        "string" => match options_of(p)? {
            Some(options) => {
                if options.is_empty() {
                    return Err("a choice with no options".into());
                }
                let default = p.get("default").and_then(Value::as_str).map(str::to_owned);
                Kind::Choice { options, default }
            }
            None => Kind::Text {
                min_len: uint(p.get("minLength")),
                max_len: uint(p.get("maxLength")),
                format: p.get("format").and_then(Value::as_str).map(str::to_owned),
                default: p.get("default").and_then(Value::as_str).map(str::to_owned),
            },
        },
        "number" | "integer" => Kind::Number {
            integer: ty == "integer",
            min: num(p.get("minimum")),
            max: num(p.get("maximum")),
            default: match p.get("default") {
                Some(Value::Number(n)) => Some(n.clone()),
                _ => None,
            },
        },
        "boolean" => Kind::Boolean {
            default: p.get("default").and_then(Value::as_bool),
        },
        "array" => {
            let items = p.get("items").ok_or("an array with no items")?;
            let options = options_of(items)?.ok_or("array items are not an enum")?;
            let default = match p.get("default") {
                Some(Value::Array(d)) => d
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                _ => Vec::new(),
            };
            Kind::Multi {
                options,
                min_items: uint(p.get("minItems")),
                max_items: uint(p.get("maxItems")),
                default,
            }
        }
        other => return Err(format!("type '{other}' is not allowed in a form")),
    };
    Ok(kind)
}

impl Field {
    /// The title, else the name.
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

    /// The default as a JSON value, if the schema has one.
    pub fn default_value(&self) -> Option<Value> {
        match &self.kind {
            Kind::Text { default, .. } => default.clone().map(Value::String),
            Kind::Number { default, .. } => default.clone().map(Value::Number),
            Kind::Boolean { default } => default.map(Value::Bool),
            Kind::Choice { default, .. } => default.clone().map(Value::String),
            Kind::Multi { default, .. } if !default.is_empty() => Some(Value::Array(
                default.iter().cloned().map(Value::String).collect(),
            )),
            Kind::Multi { .. } => None,
        }
    }

    /// What values are allowed, in a few words (for messages).
    pub fn expects(&self) -> String {
        match &self.kind {
            Kind::Text {
                min_len,
                max_len,
                format,
                ..
            } => {
                let mut s = match format.as_deref() {
                    Some("email") => "an email address".to_owned(),
                    Some("uri") => "a URI".to_owned(),
                    Some("date") => "a date YYYY-MM-DD".to_owned(),
                    Some("date-time") => "a date-time like 2026-09-17T09:00:00Z".to_owned(),
                    _ => "text".to_owned(),
                };
                match (min_len, max_len) {
                    (Some(a), Some(b)) => s += &format!(" of {a} to {b} characters"),
                    (Some(a), None) => s += &format!(" of at least {a} characters"),
                    (None, Some(b)) => s += &format!(" of at most {b} characters"),
                    (None, None) => {}
                }
                s
            }
            Kind::Number {
                integer, min, max, ..
            } => {
                let mut s = if *integer {
                    "a whole number".to_owned()
                } else {
                    "a number".to_owned()
                };
                match (min, max) {
                    (Some(a), Some(b)) => s += &format!(" from {a} to {b}"),
                    (Some(a), None) => s += &format!(" of at least {a}"),
                    (None, Some(b)) => s += &format!(" of at most {b}"),
                    (None, None) => {}
                }
                s
            }
            Kind::Boolean { .. } => "true or false".to_owned(),
            Kind::Choice { options, .. } => format!("one of {}", values(options)),
            Kind::Multi {
                options,
                min_items,
                max_items,
                ..
            } => {
                let mut s = format!("a comma-separated list from {}", values(options));
                match (min_items, max_items) {
                    (Some(a), Some(b)) => s += &format!(" ({a} to {b} items)"),
                    (Some(a), None) => s += &format!(" (at least {a})"),
                    (None, Some(b)) => s += &format!(" (at most {b})"),
                    (None, None) => {}
                }
                s
            }
        }
    }

    /// Checks a value against the field's type and constraints.
    pub fn check(&self, v: &Value) -> Result<(), String> {
        match (&self.kind, v) {
            (
                Kind::Text {
                    min_len,
                    max_len,
                    format,
                    ..
                },
                Value::String(s),
            ) => check_text(s, *min_len, *max_len, format.as_deref()),
            (
                Kind::Number {
                    integer, min, max, ..
                },
                Value::Number(n),
            ) => {
                if *integer && !(n.is_i64() || n.is_u64()) {
                    return Err("must be a whole number".into());
                }
                let x = n.as_f64().ok_or("not a number")?;
                check_range(x, *min, *max)
            }
            (Kind::Boolean { .. }, Value::Bool(_)) => Ok(()),
            (Kind::Choice { options, .. }, Value::String(s)) => {
                if options.iter().any(|o| &o.value == s) {
                    Ok(())
                } else {
                    Err(format!("'{s}' is not one of {}", values(options)))
                }
            }
            (
                Kind::Multi {
                    options,
                    min_items,
                    max_items,
                    ..
                },
                Value::Array(items),
            ) => {
                for i in items {
                    match i.as_str() {
                        Some(s) if options.iter().any(|o| o.value == s) => {}
                        _ => return Err(format!("{i} is not one of {}", values(options))),
                    }
                }
                check_count(items.len() as u64, *min_items, *max_items)
            }
            _ => Err(format!("must be {}", self.expects())),
        }
    }

    /// Reads a value typed as text (`--answer` or a text prompt) and checks it.
    pub fn parse(&self, text: &str) -> Result<Value, String> {
        let v = match &self.kind {
            Kind::Text { .. } | Kind::Choice { .. } => Value::String(text.to_owned()),
            Kind::Number { integer: true, .. } => match text.trim().parse::<i64>() {
                Ok(i) => Value::from(i),
                Err(_) => return Err(format!("'{text}' is not a whole number")),
            },
            Kind::Number { integer: false, .. } => {
                match text.trim().parse::<f64>().ok().and_then(Number::from_f64) {
                    Some(n) => Value::Number(n),
                    None => return Err(format!("'{text}' is not a number")),
                }
            }
            Kind::Boolean { .. } => match text.trim().to_ascii_lowercase().as_str() {
                "true" | "yes" | "y" | "1" => Value::Bool(true),
                "false" | "no" | "n" | "0" => Value::Bool(false),
                _ => return Err(format!("'{text}' is not true or false")),
            },
            Kind::Multi { .. } => Value::Array(
                text.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| Value::String(s.to_owned()))
                    .collect(),
            ),
        };
        self.check(&v)?;
        Ok(v)
    }
}

fn values(options: &[Choice]) -> String {
    options
        .iter()
        .map(|o| o.value.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks a count of items against `minItems`/`maxItems`.
pub fn check_count(n: u64, min: Option<u64>, max: Option<u64>) -> Result<(), String> {
    if let Some(m) = min.filter(|m| n < *m) {
        return Err(format!("pick at least {m}"));
    }
    if let Some(m) = max.filter(|m| n > *m) {
        return Err(format!("pick at most {m}"));
    }
    Ok(())
}

fn check_range(x: f64, min: Option<f64>, max: Option<f64>) -> Result<(), String> {
    if let Some(m) = min.filter(|m| x < *m) {
        return Err(format!("must be at least {m}"));
    }
    if let Some(m) = max.filter(|m| x > *m) {
        return Err(format!("must be at most {m}"));
    }
    Ok(())
}

/// Checks text against `minLength`, `maxLength` (in characters) and `format`.
pub fn check_text(
    s: &str,
    min: Option<u64>,
    max: Option<u64>,
    format: Option<&str>,
) -> Result<(), String> {
    let n = s.chars().count() as u64;
    if let Some(m) = min.filter(|m| n < *m) {
        return Err(format!("must be at least {m} characters"));
    }
    if let Some(m) = max.filter(|m| n > *m) {
        return Err(format!("must be at most {m} characters"));
    }
    let ok = match format {
        Some("email") => format::is_email(s),
        Some("uri") => format::is_uri(s),
        Some("date") => format::date(s).is_some(),
        Some("date-time") => format::is_date_time(s),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "'{s}' is not a valid {}",
            format.unwrap_or("value")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> Form {
        Form::parse(&json!({
            "mode": "form",
            "message": "Which room?",
            "requestedSchema": {"type": "object", "properties": {
                "room_id": {"type": "string", "title": "Room", "oneOf": [
                    {"const": "atrium", "title": "The Atrium (24 seats)"},
                    {"const": "studio-b", "title": "Studio B (12 seats)"}]},
                "minutes": {"type": "integer", "minimum": 15, "maximum": 240, "default": 30},
                "ratio": {"type": "number", "minimum": 0, "maximum": 1},
                "notify": {"type": "boolean", "default": true},
                "email": {"type": "string", "format": "email", "maxLength": 40},
                "day": {"type": "string", "format": "date"},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2},
                "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]}
            }, "required": ["room_id", "minutes"]}
        }))
        .unwrap()
    }

    #[test]
    fn reads_every_kind_in_order() {
        let f = form();
        let names: Vec<_> = f.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["room_id", "minutes", "ratio", "notify", "email", "day", "tags", "size"]
        );
        assert!(f.fields[0].required && f.fields[1].required && !f.fields[2].required);
        let Kind::Choice { options, .. } = &f.fields[7].kind else {
            panic!()
        };
        assert_eq!(options[1].title.as_deref(), Some("Medium"));
        assert_eq!(f.field("minutes").unwrap().default_value(), Some(json!(30)));
    }

    #[test]
    fn parses_and_checks_answers() {
        let f = form();
        let p = |n: &str, t: &str| f.field(n).unwrap().parse(t);
        assert_eq!(p("room_id", "studio-b").unwrap(), json!("studio-b"));
        assert!(p("room_id", "nook")
            .unwrap_err()
            .contains("atrium, studio-b"));
        assert_eq!(p("minutes", "45").unwrap(), json!(45));
        assert!(p("minutes", "5").unwrap_err().contains("at least 15"));
        assert!(p("minutes", "4.5").is_err());
        assert_eq!(p("ratio", "0.25").unwrap(), json!(0.25));
        assert!(p("ratio", "2").is_err());
        assert_eq!(p("notify", "no").unwrap(), json!(false));
        assert!(p("email", "not-an-email").is_err());
        assert!(p("email", "a@b.example").is_ok());
        assert!(p("day", "2026-02-29").is_err());
        assert!(p("day", "2028-02-29").is_ok());
        assert_eq!(p("tags", "a, c").unwrap(), json!(["a", "c"]));
        assert!(p("tags", "a,b,c").unwrap_err().contains("at most 2"));
        assert!(p("tags", "z").is_err());
        let mut c = Map::new();
        c.insert("room_id".into(), json!("atrium"));
        assert!(f.check(&c).unwrap_err().contains("minutes"));
        c.insert("minutes".into(), json!(30));
        assert!(f.check(&c).is_ok());
    }

    #[test]
    fn formats_go_through_the_core_validator() {
        let dt = |v: &str| check_text(v, None, None, Some("date-time"));
        assert!(dt("2026-09-17T09:00:00Z").is_ok());
        assert!(dt("2026-09-17T09:00:00.5+02:00").is_ok());
        assert!(dt("2026-09-17 9:00").is_err());
        // Once a panic ("byte index 8 is not a char boundary"), from --answer or typed input.
        assert!(dt("2026-09-17T00:00:0é0000000").is_err());
        assert!(check_text("2026-99-99", None, None, Some("date")).is_err());
        assert!(check_text("https://example.com/x", None, None, Some("uri")).is_ok());
        assert!(check_text("no scheme", None, None, Some("uri")).is_err());
    }

    #[test]
    fn refuses_nested_schemas() {
        let bad = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "x": {"type": "object", "properties": {}}}}});
        assert!(Form::parse(&bad).unwrap_err().contains("'x'"));
    }
}
