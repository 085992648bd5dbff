//! What the engine hosts: the [`App`] trait and what it declares (tools, prompts, resources,
//! completions).

use core::future::Future;

use super::{Call, CallError, Done, Reply};
use crate::limits::MAX_COMPLETIONS;
use crate::wire::json::Value;
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
    /// The arguments mirrored into `Mcp-Param-*` HTTP headers: what `x-mcp-header` marks in
    /// `input_schema`, declared here so the engine never parses the schema
    /// ([`ToolInfo::param_headers_match_schema`] keeps the two equal in a test).
    pub param_headers: &'static [ParamHeader],
    /// The tool's `_meta` in `tools/list` (a raw JSON object), e.g. the MCP Apps extension's
    /// `{"ui":{"resourceUri":"ui://…"}}`; `None`: none.
    pub meta: Option<&'static str>,
}

/// A tool argument mirrored into an HTTP header (SEP-2243): the schema property marked
/// `"x-mcp-header": header`, sent as `Mcp-Param-{header}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamHeader {
    /// The argument (a top-level property of `input_schema`).
    pub argument: &'static str,
    /// The header's name after `Mcp-Param-`.
    pub header: &'static str,
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
    /// The request's time (unix seconds, [`Context::now`](crate::Context::now)): what
    /// "today" means to a completion.
    pub now: u64,
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
    /// Write it as an `async fn`: it may await the app's own I/O (a booking tool its
    /// [`Store`](crate::booking::Store), a sensor, a timer); see [`Engine::handle`](crate::Engine::handle)
    /// and [`Engine::handling`](crate::Engine::handling) for which host serves which.
    fn call_tool(
        &mut self,
        tool: Self::Tool,
        call: &Call<'_>,
        reply: Reply<'_, '_>,
    ) -> impl Future<Output = Result<Done, CallError>>;

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
    /// when this or [`App::resources`] is non-empty, and only in a build with the core's
    /// `resources` feature (a default one): without it the four resource methods and
    /// `subscriptions/listen` are answered `-32601` and discover offers no `resources`,
    /// whatever these say.
    fn resource_templates(&self) -> &[TemplateInfo] {
        &[]
    }

    /// Reads the resource at `uri` through `reply` ([`Reply::contents`],
    /// [`Reply::private_contents`] or [`Reply::ask`]); [`CallError::NotFound`] when there is
    /// none. Write it as an `async fn`, like [`App::call_tool`]: it may await the app's store
    /// (a room's day).
    fn read_resource(
        &mut self,
        _uri: &str,
        _call: &Call<'_>,
        _reply: Reply<'_, '_>,
    ) -> impl Future<Output = Result<Done, CallError>> {
        core::future::ready(Err(CallError::NotFound))
    }

    /// Whether the host reports changes to some of the app's resources on a
    /// `subscriptions/listen` stream (discover then says `resources.subscribe`).
    fn serves_subscriptions(&self) -> bool {
        false
    }

    /// Whether a listen stream may name `uri` in `resourceSubscriptions`.
    fn subscribable(&self, _uri: &str) -> bool {
        false
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
