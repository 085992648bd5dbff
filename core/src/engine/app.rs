//! What the engine hosts: an [`App`] of tools, and the [`Call`]/[`Reply`] pair a tool sees.

use core::fmt;

use serde::de::DeserializeOwned;

use super::args::{Arg, ArgsInvalid};
use crate::booking::StoreError;
use crate::limits::{MAX_COMPLETIONS, MAX_PROGRESS, MAX_STR};
use crate::mrtr::{Answer, Ask, Capability, InputResponses, Question};
use crate::seal::{self, Binding, KeyRing, Nonce, Opened, Origin, TOKEN_MAX};
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

/// One row of an app's tool table: the tool as `tools/list` describes it, and the
/// [`App::Tool`] the engine hands to [`App::call_tool`] when a call names it. Declaring both
/// in one row keeps a tool's description and its handler together: reordering the table
/// changes only the `tools/list` order.
#[derive(Clone, Copy, Debug)]
pub struct ToolEntry<T> {
    /// What `tools/list` says about the tool, and how the engine binds its state.
    pub info: ToolInfo,
    /// Which tool this is, for [`App::call_tool`].
    pub tool: T,
}

/// A prompt as `prompts/list` describes it, plus how the engine binds its state.
#[derive(Clone, Copy, Debug)]
pub struct PromptInfo {
    /// Unique name.
    pub name: &'static str,
    /// Display title.
    pub title: &'static str,
    /// What it provides.
    pub description: &'static str,
    /// The arguments it takes, in display order.
    pub arguments: &'static [PromptArg],
    /// Whether answers count only when they come back with a valid `requestState`.
    pub answers_need_state: bool,
}

/// One argument of a prompt.
#[derive(Clone, Copy, Debug)]
pub struct PromptArg {
    /// Its name in `arguments`.
    pub name: &'static str,
    /// What it means.
    pub description: &'static str,
    /// Whether it must be given.
    pub required: bool,
}

/// A resource as `resources/list` describes it.
#[derive(Clone, Copy, Debug)]
pub struct ResourceInfo {
    /// Its URI.
    pub uri: &'static str,
    /// Programmatic name.
    pub name: &'static str,
    /// Display title.
    pub title: &'static str,
    /// What it holds.
    pub description: &'static str,
    /// Its MIME type.
    pub mime_type: &'static str,
}

/// A resource template as `resources/templates/list` describes it.
#[derive(Clone, Copy, Debug)]
pub struct TemplateInfo {
    /// The RFC 6570 URI template.
    pub uri_template: &'static str,
    /// Programmatic name.
    pub name: &'static str,
    /// Display title.
    pub title: &'static str,
    /// What its resources hold.
    pub description: &'static str,
    /// The MIME type of every resource it yields.
    pub mime_type: &'static str,
}

/// What a `completion/complete` request refers to.
#[derive(Clone, Copy, Debug)]
pub enum CompletionRef<'a> {
    /// `ref/prompt` with this prompt name (a JSON string).
    Prompt(Value<'a>),
    /// `ref/resource` with this URI or URI template (a JSON string).
    Resource(Value<'a>),
}

/// One `completion/complete` request, checked for shape.
#[derive(Clone, Copy, Debug)]
pub struct CompletionRequest<'a> {
    /// The prompt or resource template.
    pub reference: CompletionRef<'a>,
    /// The argument being completed (a JSON string).
    pub argument: Value<'a>,
    /// What the user has typed so far (a JSON string).
    pub value: Value<'a>,
    /// `context.arguments`, if sent (an object).
    pub context: Option<Value<'a>>,
}

/// Completion values, written straight into the response (at most 100 are sent; the rest
/// count towards `total` and set `hasMore`).
pub struct Completions<'w, 'b> {
    pub(crate) w: &'w mut Writer<'b>,
    pub(crate) sent: u32,
    pub(crate) total: u32,
}

impl Completions<'_, '_> {
    /// Most values one result carries (schema `maxItems`; see [`MAX_COMPLETIONS`]).
    pub const MAX: u32 = MAX_COMPLETIONS;

    /// Adds one value.
    pub fn push(&mut self, value: &str) {
        self.total = self.total.saturating_add(1);
        if self.sent < Self::MAX {
            self.w.string(value);
            self.sent += 1;
        }
    }
}

/// A hosted application: its identity, tools, and optionally prompts, resources and
/// completions. `server/discover` advertises exactly what the app serves; methods of a
/// feature it does not serve answer `-32601`.
pub trait App {
    /// Who the server is.
    fn info(&self) -> ServerInfo;
    /// Names one of the app's tools, typically a fieldless enum with one variant per tool.
    /// The engine finds a call's tool by name in [`App::tools`], once, and hands its `tool`
    /// to [`App::call_tool`].
    type Tool: Copy;
    /// The tool table, in `tools/list` order (names unique).
    fn tools(&self) -> &[ToolEntry<Self::Tool>];
    /// Runs `tool` (the entry of [`App::tools`] the call named) and answers through `reply`.
    fn call_tool(
        &mut self,
        tool: Self::Tool,
        call: &Call<'_>,
        reply: Reply<'_, '_>,
    ) -> Result<Done, CallError>;

    /// The prompts, in `prompts/list` order (none: prompts are not served).
    fn prompts(&self) -> &[PromptInfo] {
        &[]
    }

    /// Renders prompt number `index` (into [`App::prompts`]) through `reply`
    /// ([`Reply::prompt`] or [`Reply::ask`]).
    fn get_prompt(
        &mut self,
        _index: usize,
        _call: &Call<'_>,
        _reply: Reply<'_, '_>,
    ) -> Result<Done, CallError> {
        Err(CallError::Internal("prompts are not served"))
    }

    /// The concrete resources, in `resources/list` order.
    fn resources(&self) -> &[ResourceInfo] {
        &[]
    }

    /// The resource templates, in `resources/templates/list` order. Resources are served
    /// when this or [`App::resources`] is non-empty.
    fn resource_templates(&self) -> &[TemplateInfo] {
        &[]
    }

    /// Reads the resource at `uri` through `reply` ([`Reply::contents`] or [`Reply::ask`]);
    /// [`CallError::NotFound`] when there is none.
    fn read_resource(
        &mut self,
        _uri: &str,
        _call: &Call<'_>,
        _reply: Reply<'_, '_>,
    ) -> Result<Done, CallError> {
        Err(CallError::NotFound)
    }

    /// Whether `completion/complete` is served.
    fn serves_completions(&self) -> bool {
        false
    }

    /// Suggests values for one argument.
    fn complete(
        &mut self,
        _request: &CompletionRequest<'_>,
        _out: &mut Completions<'_, '_>,
    ) -> Result<(), CallError> {
        Ok(())
    }
}

/// Why a tool call ends in a JSON-RPC error rather than a result (the engine's error table,
/// `engine/error.rs`, says how each is answered).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallError {
    /// The tool must ask, and the client did not declare what asking needs (`-32021`).
    MissingCapability(Capability),
    /// Arguments that no tool-level message can help with (`-32602`).
    InvalidParams(&'static str),
    /// A server-side fault (`-32603`).
    Internal(&'static str),
    /// The booking store failed (`-32603`, worded in [`RpcError::Store`](super::RpcError::Store)).
    Store(StoreError),
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
            CallError::Store(e) => e.fmt(f),
            CallError::NotFound => f.write_str("resource not found"),
        }
    }
}

impl core::error::Error for CallError {}

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
    /// The operation's nonce: the verified state's when one came back, else fresh for this
    /// call. Any state this call mints carries it on, so every round of one logical
    /// operation shares it; key at-most-once effects on it.
    pub nonce: Nonce,
    pub(crate) answers_need_state: bool,
}

/// Why `arguments` could not be read into a tool's typed struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArgsError;

impl fmt::Display for ArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the arguments do not fit the tool's argument type")
    }
}

impl core::error::Error for ArgsError {}

impl<'a> Call<'a> {
    /// The answer to `q`, or [`Answer::Missing`] when it does not count (no valid state for a
    /// tool that needs one).
    pub fn answer<'f>(&self, q: &Question<'f>) -> Answer<'f, 'a> {
        if !self.answers_count() {
            return Answer::Missing;
        }
        q.answer(&self.responses)
    }

    /// Whether answers count: always, or only with a valid state for a tool that needs one.
    fn answers_count(&self) -> bool {
        !self.answers_need_state || self.state.is_some()
    }

    /// The raw response under `key` (sampling and roots results), or `None` when it does not
    /// count (absent, or no valid state for a tool that needs one).
    pub fn response(&self, key: &str) -> Option<Value<'a>> {
        if !self.answers_count() {
            return None;
        }
        self.responses.get(key)
    }

    /// The nonce that identifies this logical operation across rounds (see [`Call::nonce`]).
    pub fn operation(&self) -> Nonce {
        self.nonce
    }

    /// The state payload (empty without a state).
    pub fn payload(&self) -> &'a [u8] {
        self.state.map_or(&[], |s| &s.payload[..])
    }

    /// Checks `arguments` against the tool's declared fields (see [`ArgsInvalid`]); a tool
    /// answers an error with [`Reply::fail`], so the model can correct its call.
    pub fn check_args(&self, args: &'static [Arg]) -> Result<(), ArgsInvalid<'a>> {
        super::args::check(args, self.args)
    }

    /// Deserializes `arguments` (absent = `{}`) with serde-json-core into an owned type
    /// (strings as `heapless::String`, so escapes are decoded and lengths bounded).
    pub fn args<T: DeserializeOwned>(&self) -> Result<T, ArgsError> {
        let raw = self.args.map_or(&b"{}"[..], |a| a.raw());
        let mut scratch = [0u8; MAX_STR];
        serde_json_core::from_slice_escaped(raw, &mut scratch)
            .map(|(t, _)| t)
            .map_err(|_| ArgsError)
    }
}

/// Proof that a tool answered (only a [`Reply`] makes one).
#[derive(Debug)]
pub struct Done(pub(crate) Answered);

/// Which kind of result a [`Reply`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answered {
    /// A complete result.
    Complete,
    /// An `InputRequiredResult`.
    InputRequired,
}

/// Progress a call reported, written by the engine as `notifications/progress` lines
/// ahead of the response.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ProgressLog {
    pub steps: [(u32, Option<u32>); MAX_PROGRESS],
    pub len: usize,
}

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
    pub principal: &'a [u8],
    pub epoch: u32,
    /// The originating request, digested only when a state is opened or sealed.
    pub origin: Origin<'a>,
    /// Its digest, when opening the incoming state already computed it.
    pub digest: Option<[u8; 32]>,
    pub expires: u32,
    /// The operation's nonce: a re-asked question keeps the one its state came with.
    pub nonce: Nonce,
    pub caps: ClientCaps,
}

/// The one way a tool answers: complete, fail, or ask. The engine writes the envelope.
pub struct Reply<'w, 'b> {
    pub(crate) w: &'w mut Writer<'b>,
    pub(crate) id: Value<'w>,
    pub(crate) sealer: Sealer<'w>,
    /// Where progress goes, when the request carried a `progressToken`.
    pub(crate) progress: Option<&'w mut ProgressLog>,
}

impl<'b> Reply<'_, 'b> {
    fn head(&mut self) {
        super::write_head(self.w, Some(self.id));
        self.w.key("result").begin_object();
    }

    /// Opens a complete result: the envelope and `"resultType":"complete"`.
    // Inlined: as a call it changes how LTO inlines every `result::<R>`, +4 KiB of panel flash.
    #[inline(always)]
    fn open_complete(&mut self) -> &mut Writer<'b> {
        self.head();
        self.w.key("resultType").string("complete");
        self.w
    }

    /// Reports progress (`notifications/progress`, sent before the response). A no-op when
    /// the request carried no `progressToken`, or after [`MAX_PROGRESS`] reports.
    pub fn progress(&mut self, progress: u32, total: Option<u32>) {
        if let Some(log) = self.progress.as_deref_mut() {
            if let Some(slot) = log.steps.get_mut(log.len) {
                *slot = (progress, total);
                log.len += 1;
            }
        }
    }

    /// Whether the client asked for progress (sent a `progressToken`).
    pub fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }

    /// A complete `CallToolResult` whose `content` blocks `blocks` writes into the open array
    /// (images, audio, embedded resources…).
    pub fn content(mut self, is_error: bool, blocks: impl FnOnce(&mut Writer<'_>)) -> Done {
        let w = self.open_complete();
        w.key("content").begin_array();
        blocks(w);
        w.end_array().key("isError").bool(is_error);
        Done(Answered::Complete)
    }

    /// A complete `GetPromptResult`: `messages` writes the message objects into the open array.
    pub fn prompt(
        mut self,
        description: Option<&str>,
        messages: impl FnOnce(&mut Writer<'_>),
    ) -> Done {
        let w = self.open_complete();
        if let Some(d) = description {
            w.key("description").string(d);
        }
        w.key("messages").begin_array();
        messages(w);
        w.end_array();
        Done(Answered::Complete)
    }

    /// A complete `ReadResourceResult`: `contents` writes the resource contents objects into
    /// the open array (the engine adds the caching hints).
    pub fn contents(mut self, contents: impl FnOnce(&mut Writer<'_>)) -> Done {
        let w = self.open_complete();
        w.key("contents").begin_array();
        contents(w);
        w.end_array();
        Done(Answered::Complete)
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
        let w = self.open_complete();
        w.key("content").begin_array();
        w.begin_object().key("type").string("text").key("text");
        w.string_with(|f| r.text(f)).end_object();
        r.more_content(w);
        w.end_array();
        if r.has_structured() {
            w.key("structuredContent");
            r.structured(w);
        }
        w.key("isError").bool(is_error);
        Done(Answered::Complete)
    }

    /// An `InputRequiredResult`: the requests and a sealed `requestState`. Refuses, sending
    /// nothing, if the client did not declare what a request needs.
    pub fn ask(mut self, ask: &Ask<'_>) -> Result<Done, CallError> {
        let s = &self.sealer;
        if let Some((_, r)) = ask
            .requests
            .iter()
            .find(|(_, r)| !r.needs().declared(&s.caps))
        {
            return Err(CallError::MissingCapability(r.needs()));
        }
        let keys = ask.requests.iter().map(|(k, _)| k);
        if keys
            .clone()
            .enumerate()
            .any(|(i, k)| keys.clone().take(i).any(|o| o == k))
        {
            return Err(CallError::Internal("inputRequests keys must be unique"));
        }
        let bind = Binding {
            principal: s.principal,
            epoch: s.epoch,
            request: s.digest.unwrap_or_else(|| s.origin.digest()),
        };
        let mut token = [0u8; TOKEN_MAX];
        let token = seal::seal(s.ring, &bind, s.expires, s.nonce, ask.payload, &mut token)
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
        Ok(Done(Answered::InputRequired))
    }
}
