//! The one error table: every failure the engine can answer with (an app's [`CallError`] and
//! the engine's [`RpcError`]), its JSON-RPC code, message, `data` and HTTP status, defined
//! here and nowhere else.

use core::fmt;

use super::handled::Note;
use crate::limits::MAX_ECHO;
use crate::mrtr::Capability;
use crate::wire::envelope::EnvelopeError;
use crate::wire::json::Value;
use crate::wire::meta::MetaError;
use crate::wire::write::Writer;

/// An error response the engine writes.
#[derive(Clone, Copy, Debug)]
pub enum RpcError<'a> {
    /// The message could not be read as a request.
    Envelope(EnvelopeError),
    /// Unknown, removed or unadvertised method.
    MethodNotFound,
    /// A required `_meta` member is missing.
    Meta(MetaError),
    /// The protocol version in `_meta` is not served (carries the requested value).
    UnsupportedVersion(Value<'a>),
    /// (HTTP) a required header is missing or disagrees with the body.
    HeaderMismatch(&'static str),
    /// Params do not match the method's schema.
    InvalidParams(&'static str),
    /// `tools/call` named a tool this server does not have (carries the name).
    UnknownTool(Value<'a>),
    /// `prompts/get` named a prompt this server does not have (carries the name).
    UnknownPrompt(Value<'a>),
    /// `resources/read` of a URI that names no resource (carries the URI; SEP-2164).
    ResourceNotFound(Value<'a>),
    /// A `requestState` that fails verification, for whatever reason.
    BadState,
    /// A `subscriptions/listen` naming more than
    /// [`MAX_LISTEN_URIS`](crate::limits::MAX_LISTEN_URIS) resources.
    TooManySubscriptions,
    /// The request cannot be served without a capability the client did not declare.
    MissingCapability(Capability),
    /// The answer does not fit the lent output buffer.
    ResponseTooLarge,
    /// A server-side fault: the client is told only that the server failed; the reason is
    /// for the log ([`Note::Internal`]).
    Internal(&'static str),
    /// Something the app depends on failed; the message says what ([`CallError::Backend`]).
    Backend(&'static str),
}

/// Why a tool call ends in a JSON-RPC error rather than a result (this file's
/// table below says how each is answered).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallError {
    /// The tool must ask, and the client did not declare what asking needs (`-32021`).
    MissingCapability(Capability),
    /// Arguments that no tool-level message can help with (`-32602`).
    InvalidParams(&'static str),
    /// A server-side fault (`-32603`).
    Internal(&'static str),
    /// Something the app depends on (its store, a device) failed, and the client is told so in
    /// these words (`-32603`; the log gets them too). An app maps its own errors into this
    /// (the booking tools: `From<StoreError>`); [`CallError::Internal`] tells the client less.
    Backend(&'static str),
    /// `resources/read` of a URI that names no resource (`-32602` with `data.uri`).
    NotFound,
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::MissingCapability(c) => {
                write!(
                    f,
                    "the client did not declare the capability '{}'",
                    c.name()
                )
            }
            CallError::InvalidParams(why) => write!(f, "invalid params: {why}"),
            CallError::Internal(why) => write!(f, "internal error: {why}"),
            CallError::Backend(why) => f.write_str(why),
            CallError::NotFound => f.write_str("resource not found"),
        }
    }
}

impl core::error::Error for CallError {}

/// The message of every [`RpcError::Internal`] (JSON-RPC's own wording for `-32603`): the
/// reason stays in the log's [`Note::Internal`].
const INTERNAL: &str = "Internal error";

/// The one place a [`CallError`] becomes an error response.
impl CallError {
    /// What the log should say about this error, if anything (server-side faults only).
    pub(crate) fn note(self) -> Option<Note> {
        match self {
            CallError::Internal(why) => Some(Note::Internal(why)),
            CallError::Backend(why) => Some(Note::Internal(why)),
            _ => None,
        }
    }

    /// The error response; `resource` is the URI of a `resources/read` (the only request
    /// whose [`CallError::NotFound`] carries it back in `data.uri`).
    pub(crate) fn rpc<'a>(self, resource: Option<Value<'a>>) -> RpcError<'a> {
        match self {
            CallError::MissingCapability(c) => RpcError::MissingCapability(c),
            CallError::InvalidParams(m) => RpcError::InvalidParams(m),
            CallError::Internal(m) => RpcError::Internal(m),
            CallError::Backend(why) => RpcError::Backend(why),
            CallError::NotFound => match resource {
                Some(uri) => RpcError::ResourceNotFound(uri),
                None => RpcError::InvalidParams("Resource not found"),
            },
        }
    }
}

impl RpcError<'_> {
    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        match self {
            RpcError::Envelope(EnvelopeError::Parse(_)) => -32700,
            RpcError::Envelope(_) => -32600,
            RpcError::MethodNotFound => -32601,
            RpcError::Meta(_)
            | RpcError::InvalidParams(_)
            | RpcError::UnknownTool(_)
            | RpcError::UnknownPrompt(_)
            | RpcError::ResourceNotFound(_)
            | RpcError::TooManySubscriptions
            | RpcError::BadState => -32602,
            RpcError::HeaderMismatch(_) => -32020,
            RpcError::MissingCapability(_) => -32021,
            RpcError::UnsupportedVersion(_) => -32022,
            RpcError::ResponseTooLarge | RpcError::Internal(_) | RpcError::Backend(_) => -32603,
        }
    }

    /// The HTTP status a Streamable HTTP transport answers with.
    pub fn http_status(&self) -> u16 {
        match self {
            RpcError::MethodNotFound => 404,
            RpcError::ResponseTooLarge | RpcError::Internal(_) | RpcError::Backend(_) => 500,
            _ => 400,
        }
    }

    /// Writes the `error` object.
    pub fn write(&self, w: &mut Writer<'_>) {
        w.begin_object().key("code").int(self.code()).key("message");
        match self {
            RpcError::Envelope(e) => w.string_with(|f| {
                if !matches!(e, EnvelopeError::Parse(_)) {
                    f.write_str("Invalid request: ")?;
                }
                f.write_str(e.reason())
            }),
            RpcError::MethodNotFound => {
                w.string("Method not found (this server speaks MCP 2026-07-28)")
            }
            RpcError::Meta(m) => w.string(m.message()),
            RpcError::UnsupportedVersion(_) => w.string("Unsupported protocol version"),
            RpcError::HeaderMismatch(why)
            | RpcError::InvalidParams(why)
            | RpcError::Backend(why) => w.string(why),
            RpcError::Internal(_) => w.string(INTERNAL),
            RpcError::UnknownTool(name) => w.string_with(|f| echo(f, "Unknown tool: ", name)),
            RpcError::UnknownPrompt(name) => w.string_with(|f| echo(f, "Unknown prompt: ", name)),
            RpcError::ResourceNotFound(_) => w.string("Resource not found"),
            RpcError::BadState => w.string("Invalid requestState"),
            RpcError::TooManySubscriptions => w.string("Too many resourceSubscriptions"),
            RpcError::MissingCapability(c) => w.string_with(|f| {
                f.write_str("This request needs the client capability '")?;
                f.write_str(c.name())?;
                f.write_str("'")
            }),
            RpcError::ResponseTooLarge => w.string("The response does not fit the output buffer"),
        };
        match self {
            RpcError::UnsupportedVersion(requested) => {
                w.key("data").begin_object().key("supported");
                super::versions::write_versions(w);
                w.key("requested");
                echo_value(w, *requested);
                w.end_object();
            }
            RpcError::ResourceNotFound(uri) => {
                w.key("data").begin_object().key("uri");
                echo_value(w, *uri);
                w.end_object();
            }
            RpcError::MissingCapability(c) => {
                w.key("data")
                    .begin_object()
                    .key("requiredCapabilities")
                    .begin_object();
                w.key(c.name())
                    .begin_object()
                    .end_object()
                    .end_object()
                    .end_object();
            }
            RpcError::TooManySubscriptions => {
                let max = crate::limits::MAX_LISTEN_URIS as i64;
                w.key("data")
                    .begin_object()
                    .key("max")
                    .int(max)
                    .end_object();
            }
            RpcError::MethodNotFound => {
                w.key("data").begin_object().key("supportedVersions");
                super::versions::write_versions(w);
                w.end_object();
            }
            _ => {}
        }
        w.end_object();
    }
}

/// Writes `prefix` and the string `v`, cut to [`MAX_ECHO`] characters ("…" marks a cut).
fn echo(f: &mut dyn core::fmt::Write, prefix: &str, v: &Value<'_>) -> core::fmt::Result {
    f.write_str(prefix)?;
    crate::wire::echo::echo(f, v)
}

/// Echoes a client's string byte for byte when short, else cut like [`echo`].
fn echo_value(w: &mut Writer<'_>, v: Value<'_>) {
    if v.raw().len() <= MAX_ECHO {
        w.raw(v.raw());
    } else {
        w.string_with(|f| echo(f, "", &v));
    }
}
