//! `subscriptions/listen`: checked and acknowledged here; the stream itself is the host's.
//!
//! `subscriptions/listen`: the request checked and acknowledged here; the stream itself is the
//! host's, which asks the engine to write each of its messages (an update, the close).
//!
//! The engine keeps nothing between messages, so it cannot hold a stream. A listen request is
//! checked like any other (envelope, headers, `_meta`, version, params) and answered with its
//! acknowledgement; [`Handled::listening`](super::Handled::listening) then tells the host that
//! a stream is open. The host reads what it must keep with [`Listen::read`] (the request's id,
//! the URIs), and for every change to one of them asks [`Engine::write_resource_updated`] to
//! write the notification into a buffer it lends; when it ends the stream gracefully it writes
//! [`Engine::write_listen_closed`] (HTTP: the request's result) or
//! [`Engine::write_listen_cancelled`] (stdio: `notifications/cancelled`).

use super::error::RpcError;
use super::{App, Engine};
use crate::limits::{MAX_ID, MAX_LISTEN_URIS, MAX_STR};
use crate::wire::envelope;
use crate::wire::json::{self, Kind, Value};
use crate::wire::meta::KEY_SERVER_INFO;
use crate::wire::write::{Full, Writer};

/// The `_meta` key naming the stream a notification belongs to (the listen request's id).
pub const KEY_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The filter flags of `subscriptions/listen`: each, when present, must be a boolean. This
/// server's lists never change, so none is honoured (the acknowledgement leaves them out).
const LIST_FLAGS: [&str; 3] = [
    "toolsListChanged",
    "promptsListChanged",
    "resourcesListChanged",
];

/// Checks a `subscriptions/listen` request's params and writes its acknowledgement
/// (`notifications/subscriptions/acknowledged`, tagged with `id`) into `w`.
pub(super) fn open<'a, A: App>(
    eng: &Engine<A>,
    w: &mut Writer<'_>,
    id: Value<'a>,
    params: Option<Value<'a>>,
) -> Result<(), RpcError<'a>> {
    let uris = check(&eng.app, params)?;
    w.begin_object().key("jsonrpc").string("2.0");
    w.key("method")
        .string("notifications/subscriptions/acknowledged");
    w.key("params").begin_object().key("notifications");
    w.begin_object();
    if let Some(uris) = uris {
        w.key("resourceSubscriptions").begin_array();
        for uri in uris.items() {
            w.raw(uri.raw());
        }
        w.end_array();
    }
    w.end_object();
    w.key("_meta")
        .begin_object()
        .key(KEY_SUBSCRIPTION_ID)
        .raw(id.raw());
    w.end_object().end_object().end_object();
    Ok(())
}

/// The `resourceSubscriptions` array of valid params (`None`: none named).
fn check<'a, A: App>(
    app: &A,
    params: Option<Value<'a>>,
) -> Result<Option<Value<'a>>, RpcError<'a>> {
    let filter = params.and_then(|p| p.get("notifications"));
    let filter = filter
        .filter(|f| f.kind() == Kind::Object)
        .ok_or(RpcError::InvalidParams(
            "params.notifications must be an object (the notifications to listen for)",
        ))?;
    for flag in LIST_FLAGS {
        if filter.get(flag).is_some_and(|v| v.kind() != Kind::Bool) {
            return Err(RpcError::InvalidParams(
                "toolsListChanged, promptsListChanged and resourcesListChanged must be booleans",
            ));
        }
    }
    let Some(uris) = filter.get("resourceSubscriptions") else {
        return Ok(None);
    };
    if uris.kind() != Kind::Array {
        return Err(RpcError::InvalidParams(
            "resourceSubscriptions must be an array of resource URIs",
        ));
    }
    if uris.items().count() > MAX_LISTEN_URIS {
        return Err(RpcError::TooManySubscriptions);
    }
    for uri in uris.items() {
        if uri.kind() != Kind::String {
            return Err(RpcError::InvalidParams(
                "resourceSubscriptions must be an array of resource URIs",
            ));
        }
        let mut scratch = [0u8; MAX_STR];
        match uri.as_str(&mut scratch) {
            Some(s) if app.subscribable(s) => {}
            _ => return Err(RpcError::ResourceNotFound(uri)),
        }
    }
    Ok(Some(uris))
}

/// An open `subscriptions/listen` request, read again by its host after the engine accepted
/// it ([`Handled::listening`](super::Handled::listening)): what the host keeps of the stream.
#[derive(Clone, Copy, Debug)]
pub struct Listen<'a> {
    id: Value<'a>,
    uris: Option<Value<'a>>,
}

impl<'a> Listen<'a> {
    /// The listen request in `message`, if it is one (its params are not checked again: read
    /// only a message the engine accepted).
    pub fn read(message: &'a [u8]) -> Option<Listen<'a>> {
        let env = envelope::read(message).ok()?;
        if !env.method.eq_str("subscriptions/listen") {
            return None;
        }
        let id = env.id?;
        let filter = env.params.and_then(|p| p.get("notifications"));
        let uris = filter.and_then(|f| f.get("resourceSubscriptions"));
        Some(Listen { id, uris })
    }

    /// The request's id as raw JSON: the stream's id, which every message on it carries.
    pub fn id(&self) -> &'a [u8] {
        self.id.raw()
    }

    /// Calls `each` with every URI the stream listens to, decoded.
    pub fn for_each_uri(&self, mut each: impl FnMut(&str)) {
        for uri in self.uris.iter().flat_map(Value::items) {
            let mut scratch = [0u8; MAX_STR];
            if let Some(s) = uri.as_str(&mut scratch) {
                each(s);
            }
        }
    }
}

/// `raw` as a request id (a string or a number of at most [`MAX_ID`] bytes), or `None`.
fn stream_id(raw: &[u8]) -> Option<Value<'_>> {
    let id = json::parse(raw).ok()?;
    let fits = raw.len() <= MAX_ID && matches!(id.kind(), Kind::String | Kind::Number);
    fits.then_some(id)
}

impl<A: App> Engine<A> {
    /// Writes `notifications/resources/updated` for `uri` on the stream `sub` (its id as
    /// [`Listen::id`] gave it) into `out`; the length written, or `Err` when `sub` is not an
    /// id or the notification does not fit.
    pub fn write_resource_updated(
        &self,
        sub: &[u8],
        uri: &str,
        out: &mut [u8],
    ) -> Result<usize, Full> {
        let id = stream_id(sub).ok_or(Full)?;
        let mut w = Writer::new(out);
        w.begin_object().key("jsonrpc").string("2.0");
        w.key("method").string("notifications/resources/updated");
        w.key("params").begin_object().key("uri").string(uri);
        w.key("_meta")
            .begin_object()
            .key(KEY_SUBSCRIPTION_ID)
            .raw(id.raw());
        w.end_object().end_object().end_object();
        w.finish()
    }

    /// Writes the response that ends the stream `sub` gracefully (its `subscriptions/listen`
    /// result: empty but for `resultType` and `_meta`) into `out`, as HTTP ends a stream.
    pub fn write_listen_closed(&self, sub: &[u8], out: &mut [u8]) -> Result<usize, Full> {
        let id = stream_id(sub).ok_or(Full)?;
        let mut w = Writer::new(out);
        super::lists::open_result(&mut w, id);
        w.key("_meta")
            .begin_object()
            .key(KEY_SUBSCRIPTION_ID)
            .raw(id.raw());
        let info = self.app.info();
        w.key(KEY_SERVER_INFO).begin_object();
        w.key("name").string(info.name);
        w.key("version").string(info.version).end_object();
        w.end_object().end_object().end_object();
        w.finish()
    }

    /// Writes the `notifications/cancelled` that ends the stream `sub` on stdio (the one use
    /// a server may make of it) into `out`.
    pub fn write_listen_cancelled(&self, sub: &[u8], out: &mut [u8]) -> Result<usize, Full> {
        let id = stream_id(sub).ok_or(Full)?;
        let mut w = Writer::new(out);
        w.begin_object().key("jsonrpc").string("2.0");
        w.key("method").string("notifications/cancelled");
        w.key("params")
            .begin_object()
            .key("requestId")
            .raw(id.raw());
        w.key("reason").string("the server ended the subscription");
        w.end_object().end_object();
        w.finish()
    }
}

#[cfg(test)]
#[path = "listen_tests.rs"]
mod tests;
