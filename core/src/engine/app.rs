//! What the engine hosts: an [`App`] of tools, and the [`Call`]/[`Reply`] pair a tool sees.

use core::fmt;

use serde::de::DeserializeOwned;

use super::error::RpcError;
use crate::limits::MAX_STR;
use crate::mrtr::{Answer, Ask, Capability, InputResponses, Question};
use crate::seal::{self, Binding, KeyRing, Nonce, Opened, TOKEN_MAX};
use crate::wire::json::Value;
use crate::wire::meta::ClientCaps;
use crate::wire::write::Writer;

/// Who the server is, for `server/discover` and every result's `_meta`.
#[derive(Clone, Copy, Debug)]
pub struct ServerInfo {
    /// Implementation name.
    pub name: &'static str,
    /// Implementation version.
    pub version: &'static str,
    /// Instructions for the model, if any.
    pub instructions: Option<&'static str>,
}

/// A tool as `tools/list` describes it, plus how the engine binds its state.
#[derive(Clone, Copy, Debug)]
pub struct ToolInfo {
    /// Unique name.
    pub name: &'static str,
    /// Display title.
    pub title: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// The JSON Schema of its arguments (raw JSON, `"type":"object"` at the root).
    pub input_schema: &'static str,
    /// Whether it changes nothing.
    pub read_only: bool,
    /// Whether it may destroy something (meaningful when not read-only).
    pub destructive: bool,
    /// Whether calling it twice with the same arguments does no more than once.
    pub idempotent: bool,
    /// The arguments a `requestState` is bound to (`None`: all of them).
    pub salient: Option<&'static [&'static str]>,
    /// Whether answers count only when they come back with a valid `requestState`.
    pub answers_need_state: bool,
}

/// A hosted application: its identity and tools.
pub trait App {
    /// Who the server is.
    fn info(&self) -> ServerInfo;
    /// The tools, in `tools/list` order.
    fn tools(&self) -> &[ToolInfo];
    /// Runs tool number `index` (into [`App::tools`]) and answers through `reply`.
    fn call_tool(&mut self, index: usize, call: &Call<'_>, reply: Reply<'_, '_>) -> Result<Done, CallError>;
}

/// Why a tool call ends in a JSON-RPC error rather than a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallError {
    /// The tool must ask, and the client did not declare what asking needs (`-32021`).
    MissingCapability(Capability),
    /// Arguments that no tool-level message can help with (`-32602`).
    InvalidParams(&'static str),
    /// A server-side fault, e.g. storage (`-32603`).
    Internal(&'static str),
}

impl CallError {
    pub(crate) fn rpc(self) -> RpcError<'static> {
        match self {
            CallError::MissingCapability(c) => RpcError::MissingCapability(c),
            CallError::InvalidParams(m) => RpcError::InvalidParams(m),
            CallError::Internal(m) => RpcError::Internal(m),
        }
    }
}

/// One `tools/call` as the tool sees it, after the engine has checked everything generic.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// `arguments` (an object) if sent.
    pub args: Option<Value<'a>>,
    /// Well-formed `inputResponses` (empty if absent).
    pub responses: InputResponses<'a>,
    /// The verified `requestState`, if one came back.
    pub state: Option<&'a Opened>,
    /// What the client declared for this request.
    pub caps: ClientCaps,
    /// Who is calling.
    pub principal: &'a [u8],
    /// The server's clock, seconds.
    pub now: u64,
    /// This call's fresh nonce (the one any state it mints is sealed with).
    pub nonce: Nonce,
    pub(crate) answers_need_state: bool,
}

/// Why `arguments` could not be read into a tool's typed struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgsError;

impl<'a> Call<'a> {
    /// The answer to `q`, or [`Answer::Missing`] when it does not count (no valid state for a
    /// tool that needs one).
    pub fn answer(&self, q: &Question<'_>) -> Answer<'a> {
        if self.answers_need_state && self.state.is_none() {
            return Answer::Missing;
        }
        q.answer(&self.responses)
    }

    /// The nonce that identifies this logical operation across rounds: the verified state's,
    /// or this call's own when no state came back. Key at-most-once effects on it.
    pub fn operation(&self) -> Nonce {
        self.state.map_or(self.nonce, |s| s.nonce)
    }

    /// The state payload (empty without a state).
    pub fn payload(&self) -> &'a [u8] {
        self.state.map_or(&[], |s| &s.payload[..])
    }

    /// Deserializes `arguments` (absent = `{}`) with serde-json-core into an owned type
    /// (strings as `heapless::String`, so escapes are decoded and lengths bounded).
    pub fn args<T: DeserializeOwned>(&self) -> Result<T, ArgsError> {
        let raw = self.args.map_or(&b"{}"[..], |a| a.raw());
        let mut scratch = [0u8; MAX_STR];
        serde_json_core::from_slice_escaped(raw, &mut scratch).map(|(t, _)| t).map_err(|_| ArgsError)
    }
}

/// Proof that a tool answered (only a [`Reply`] makes one).
#[derive(Debug)]
pub struct Done(());

/// A tool result's content, written straight into the response.
pub trait Report {
    /// The human-readable text (the result's text content block).
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result;
    /// Extra content blocks after the text one (images, resources, …).
    fn more_content(&self, _blocks: &mut Writer<'_>) {}
    /// Whether there is `structuredContent`.
    fn has_structured(&self) -> bool {
        false
    }
    /// Writes the `structuredContent` value.
    fn structured(&self, _w: &mut Writer<'_>) {}
}

impl Report for str {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        f.write_str(self)
    }
}

/// What sealing needs, lent by the engine for one call.
pub(crate) struct Sealer<'a> {
    pub ring: &'a KeyRing,
    pub bind: Binding<'a>,
    pub expires: u32,
    pub nonce: Nonce,
    pub caps: ClientCaps,
}

/// The one way a tool answers: complete, fail, or ask. The engine writes the envelope.
pub struct Reply<'w, 'b> {
    pub(crate) w: &'w mut Writer<'b>,
    pub(crate) id: Value<'w>,
    pub(crate) sealer: Sealer<'w>,
}

impl Reply<'_, '_> {
    fn head(&mut self) {
        super::write_head(self.w, Some(self.id));
        self.w.key("result").begin_object();
    }

    /// A complete, successful result.
    pub fn complete<R: Report + ?Sized>(self, r: &R) -> Done {
        self.result(r, false)
    }

    /// A complete result with `isError: true`: the call ran and failed in a way the model can
    /// act on (bad day, taken slot, …).
    pub fn fail<R: Report + ?Sized>(self, r: &R) -> Done {
        self.result(r, true)
    }

    fn result<R: Report + ?Sized>(mut self, r: &R, is_error: bool) -> Done {
        self.head();
        let w = self.w;
        w.key("resultType").string("complete").key("content").begin_array();
        w.begin_object().key("type").string("text").key("text");
        w.string_with(|f| r.text(f)).end_object();
        r.more_content(w);
        w.end_array();
        if r.has_structured() {
            w.key("structuredContent");
            r.structured(w);
        }
        w.key("isError").bool(is_error);
        Done(())
    }

    /// An `InputRequiredResult`: the requests and a sealed `requestState`. Refuses, sending
    /// nothing, if the client did not declare what a request needs.
    pub fn ask(mut self, ask: &Ask<'_>) -> Result<Done, CallError> {
        let s = &self.sealer;
        if let Some((_, r)) = ask.requests.iter().find(|(_, r)| !r.needs().declared(&s.caps)) {
            return Err(CallError::MissingCapability(r.needs()));
        }
        let mut token = [0u8; TOKEN_MAX];
        let token = seal::seal(s.ring, &s.bind, s.expires, s.nonce, ask.payload, &mut token)
            .map_err(|_| CallError::Internal("could not seal requestState"))?;
        self.head();
        let w = self.w;
        w.key("resultType").string("input_required");
        if !ask.requests.is_empty() {
            w.key("inputRequests").begin_object();
            for (key, req) in ask.requests {
                w.key(key);
                req.write(w);
            }
            w.end_object();
        }
        w.key("requestState").string(token);
        Ok(Done(()))
    }
}
