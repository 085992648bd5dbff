//! The JSON-RPC 2.0 envelope: `jsonrpc`, `id`, `method`, `params`.

use super::json::shallow::shallow_member;
use super::json::{parse, JsonError, Kind, Value};
use crate::limits::{MAX_ID, MAX_MESSAGE};

/// A request or notification whose envelope is valid.
#[derive(Clone, Copy, Debug)]
pub struct Envelope<'a> {
    /// The raw id (a string or an integer), echoed byte for byte; `None` for a notification.
    pub id: Option<Value<'a>>,
    /// The method name (a JSON string).
    pub method: Value<'a>,
    /// `params`, if present.
    pub params: Option<Value<'a>>,
}

/// Why a message is not a request the engine can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnvelopeError {
    /// Larger than [`MAX_MESSAGE`].
    TooLarge,
    /// Not JSON at all.
    Parse(JsonError),
    /// A JSON array: batches are not part of MCP 2026-07-28.
    Batch,
    /// JSON, but not a JSON-RPC 2.0 request object.
    Invalid(&'static str),
    /// The id is longer than [`MAX_ID`].
    IdTooLong,
    /// Well-formed JSON nested deeper than [`MAX_DEPTH`](crate::limits::MAX_DEPTH).
    TooDeep,
}

impl EnvelopeError {
    /// The reason, without the "Invalid request: " that [`Display`](core::fmt::Display) puts
    /// before every kind but [`EnvelopeError::Parse`].
    pub(crate) fn reason(&self) -> &'static str {
        match self {
            EnvelopeError::TooLarge => "message too large",
            EnvelopeError::Parse(_) => "Parse error: the message is not valid JSON",
            EnvelopeError::Batch => "batches are not supported",
            EnvelopeError::Invalid(why) => why,
            EnvelopeError::IdTooLong => "id too long",
            EnvelopeError::TooDeep => "JSON nested too deeply (at most 24 levels)",
        }
    }
}

/// The message of the `-32700`/`-32600` error the engine answers with.
impl core::fmt::Display for EnvelopeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if !matches!(self, EnvelopeError::Parse(_)) {
            f.write_str("Invalid request: ")?;
        }
        f.write_str(self.reason())
    }
}

impl core::error::Error for EnvelopeError {}

/// Reads the envelope of one message. On failure, also returns the id when it was readable.
pub fn read(input: &[u8]) -> Result<Envelope<'_>, (EnvelopeError, Option<Value<'_>>)> {
    if input.len() > MAX_MESSAGE {
        return Err((EnvelopeError::TooLarge, None));
    }
    let doc = parse(input).map_err(|e| match e {
        // Too deep for this parser, not malformed: said so, with the id when it is readable.
        JsonError::TooDeep => (EnvelopeError::TooDeep, readable_id(input)),
        e => (EnvelopeError::Parse(e), None),
    })?;
    match doc.kind() {
        Kind::Object => {}
        Kind::Array => return Err((EnvelopeError::Batch, None)),
        _ => {
            return Err((
                EnvelopeError::Invalid("a request must be a JSON object"),
                None,
            ))
        }
    }
    let [id, jsonrpc, method, params] = doc.pick(["id", "jsonrpc", "method", "params"]);
    let id = match id {
        None => None,
        Some(v) if v.kind() == Kind::String || v.as_i64().is_some() => {
            if v.raw().len() > MAX_ID {
                return Err((EnvelopeError::IdTooLong, None));
            }
            Some(v)
        }
        Some(_) => {
            let why = "id must be a string or an integer";
            return Err((EnvelopeError::Invalid(why), None));
        }
    };
    let fail = |why| Err((EnvelopeError::Invalid(why), id));
    if !jsonrpc.is_some_and(|v| v.eq_str("2.0")) {
        return fail("jsonrpc must be \"2.0\"");
    }
    let method = match method {
        Some(m) if m.kind() == Kind::String => m,
        Some(_) => return fail("method must be a string"),
        None => return fail("a request needs a method"),
    };
    if params.is_some_and(|p| p.kind() != Kind::Object) {
        return fail("params must be an object");
    }
    Ok(Envelope { id, method, params })
}

/// The top-level `id` of a message too deep to parse, when it is a valid id.
fn readable_id(input: &[u8]) -> Option<Value<'_>> {
    shallow_member(input, "id")
        .filter(|v| v.kind() == Kind::String || v.as_i64().is_some())
        .filter(|v| v.raw().len() <= MAX_ID)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_requests_and_notifications() {
        let e =
            read(br#"{"jsonrpc":"2.0","id":"a\"b","method":"tools/list","params":{}}"#).unwrap();
        assert_eq!(e.id.unwrap().raw(), br#""a\"b""#);
        assert!(e.method.eq_str("tools/list"));
        let n = read(br#"{"method":"notifications/x","jsonrpc":"2.0"}"#).unwrap();
        assert!(n.id.is_none() && n.params.is_none());
    }

    /// Valid JSON nested deeper than the limit: "nested too deeply" (not a parse error),
    /// with the id when it was readable.
    #[test]
    fn too_deep_is_said_with_the_id() {
        let mut deep = [0u8; 200];
        let head = br#"{"jsonrpc":"2.0","id":"d-1","method":"tools/call","params":{"a":"#;
        deep[..head.len()].copy_from_slice(head);
        let levels = crate::limits::MAX_DEPTH;
        let open = head.len();
        deep[open..open + levels].fill(b'[');
        deep[open + levels..open + 2 * levels].fill(b']');
        deep[open + 2 * levels..open + 2 * levels + 2].copy_from_slice(b"}}");
        let doc = &deep[..open + 2 * levels + 2];
        let (e, id) = read(doc).unwrap_err();
        assert_eq!(e, EnvelopeError::TooDeep);
        assert_eq!(id.unwrap().raw(), br#""d-1""#);
        let says = levels.to_string();
        assert!(e.reason().contains("too deeply") && e.reason().contains(&says));
    }

    #[test]
    fn rejects_what_is_not_a_request() {
        assert_eq!(read(b"[1]").unwrap_err().0, EnvelopeError::Batch);
        assert!(matches!(read(b"{").unwrap_err().0, EnvelopeError::Parse(_)));
        let (e, id) = read(br#"{"jsonrpc":"1.0","id":5,"method":"x"}"#).unwrap_err();
        assert!(matches!(e, EnvelopeError::Invalid(_)));
        assert_eq!(id.unwrap().raw(), b"5");
        for bad in [
            &br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#[..],
            br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[]}"#,
            br#"{"jsonrpc":"2.0","id":1}"#,
            b"17",
        ] {
            assert!(matches!(
                read(bad).unwrap_err().0,
                EnvelopeError::Invalid(_)
            ));
        }
    }
}
