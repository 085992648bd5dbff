//! `inputResponses` on a retry: a map from the server's keys to the client's results.

use super::form::Invalid;
use crate::wire::json::{Kind, Value};

/// A well-formed `inputResponses` object (absent is the same as empty).
#[derive(Clone, Copy, Debug, Default)]
pub struct InputResponses<'a> {
    map: Option<Value<'a>>,
}

/// Why `inputResponses` is malformed (a protocol error, `-32602`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResponsesError {
    /// Present but not an object (`null` included).
    NotObject,
    /// A value that is not an object (e.g. `{"room": 12345}`).
    EntryNotObject,
}

impl ResponsesError {
    /// The message of the `-32602` error the engine answers with.
    pub(crate) fn message(self) -> &'static str {
        match self {
            ResponsesError::NotObject => "params.inputResponses must be an object",
            ResponsesError::EntryNotObject => "each params.inputResponses value must be an object",
        }
    }
}

impl core::fmt::Display for ResponsesError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.message())
    }
}

impl core::error::Error for ResponsesError {}

impl<'a> InputResponses<'a> {
    /// Checks the shape of `params.inputResponses` (`None` when absent).
    pub fn read(v: Option<Value<'a>>) -> Result<Self, ResponsesError> {
        let Some(map) = v else {
            return Ok(Self::default());
        };
        if map.kind() != Kind::Object {
            return Err(ResponsesError::NotObject);
        }
        if map.members().any(|(_, v)| v.kind() != Kind::Object) {
            return Err(ResponsesError::EntryNotObject);
        }
        Ok(InputResponses { map: Some(map) })
    }

    /// The raw response under `key` (for sampling and roots results).
    pub fn get(&self, key: &str) -> Option<Value<'a>> {
        self.map?.get(key)
    }

    /// Whether no response was sent.
    pub fn is_empty(&self) -> bool {
        self.map.is_none_or(|m| m.members().next().is_none())
    }
}

/// What the user did with one elicitation form (`'f`: the form, `'a`: the request).
#[derive(Clone, Copy, Debug)]
pub enum Answer<'f, 'a> {
    /// No answer to this question (first round, another key, or not bound to a valid state).
    Missing,
    /// Accepted, with content that validates against the form that was sent.
    Accepted(Value<'a>),
    /// Not a usable answer (ask again): content that does not match the form, with why, or
    /// `None` for a result without a valid action or without content.
    Invalid(Option<Invalid<'f, 'a>>),
    /// The user said no.
    Declined,
    /// The user dismissed the whole operation.
    Cancelled,
}

impl<'a> Answer<'_, 'a> {
    /// Reads one ElicitResult's action (content validation is the form's job).
    pub(crate) fn from_result(v: Value<'a>) -> Self {
        match v.get("action") {
            Some(a) if a.eq_str("accept") => match v.get("content") {
                Some(c) if c.kind() == Kind::Object => Answer::Accepted(c),
                _ => Answer::Invalid(None),
            },
            Some(a) if a.eq_str("decline") => Answer::Declined,
            Some(a) if a.eq_str("cancel") => Answer::Cancelled,
            _ => Answer::Invalid(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::parse;

    #[test]
    fn shapes() {
        let r = |s: &str| InputResponses::read(Some(parse(s.as_bytes()).unwrap())).map(|_| ());
        assert_eq!(r("null"), Err(ResponsesError::NotObject));
        assert_eq!(r("[]"), Err(ResponsesError::NotObject));
        assert_eq!(
            r(r#"{"user_name":12345}"#),
            Err(ResponsesError::EntryNotObject)
        );
        assert_eq!(r(r#"{"a":{"action":"accept"}}"#), Ok(()));
        assert!(InputResponses::read(None).unwrap().is_empty());
    }

    #[test]
    fn actions() {
        fn a(s: &str) -> Answer<'static, '_> {
            Answer::from_result(parse(s.as_bytes()).unwrap())
        }
        assert!(matches!(a(r#"{"action":"decline"}"#), Answer::Declined));
        assert!(matches!(a(r#"{"action":"cancel"}"#), Answer::Cancelled));
        assert!(matches!(a(r#"{"action":"accept"}"#), Answer::Invalid(None)));
        assert!(matches!(a(r#"{"action":"maybe"}"#), Answer::Invalid(None)));
        assert!(matches!(
            a(r#"{"action":"accept","content":{}}"#),
            Answer::Accepted(_)
        ));
    }
}
