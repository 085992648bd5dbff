//! The ordered validation pipeline, and only that: envelope, headers present, method,
//! `_meta`, headers equal, version, params — the order the spec digest (§5.5) and the
//! conformance probes pin — then the method's handler (`lists`, `invocation`).

use super::error::RpcError;
use super::headers::{check_headers, check_param_headers, notification_headers};
use super::http::Sent;
use super::invocation::{complete, invoke_tool, prompts_get, tools_call, Invocation, ToolCall};
#[cfg(feature = "resources")]
use super::invocation::{invoke_read, resources_read, ResourceRead};
use super::lists::{discover, prompts_list, tools_list};
#[cfg(feature = "resources")]
use super::lists::{resources_list, templates_list};
use super::method::Method;
use super::reply::Progress;
use super::{App, Context, Engine, HttpHeaders, Note, SUPPORTED_VERSIONS};
use crate::wire::envelope;
use crate::wire::json::Value;
use crate::wire::meta;
use crate::wire::write::Writer;

/// How a message ended.
pub(crate) enum Outcome<'a> {
    Notification,
    /// A `subscriptions/listen` acknowledged (the whole notification written): the host keeps
    /// the stream.
    #[cfg(feature = "resources")]
    Listening(Value<'a>),
    /// A result object was written and left open for the engine to close.
    Result(Value<'a>),
    Error(Option<Value<'a>>, RpcError<'a>),
}

/// Where dispatching a message left it.
pub(crate) enum Dispatched<'a, T> {
    /// Answered (or refused).
    Done(Outcome<'a>),
    /// A checked request of this id whose handler may wait for the app's store, for [`run`].
    Waits(Value<'a>, Waits<'a, T>),
}

/// A checked request whose handler may wait for the app's store.
pub(crate) enum Waits<'a, T> {
    /// A `tools/call`.
    Tool(ToolCall<'a, T>),
    /// A `resources/read` (a room's day reads the store).
    #[cfg(feature = "resources")]
    Read(ResourceRead<'a>),
}

/// Checks one message and answers it, except a `tools/call` or a `resources/read`, whose
/// handler may wait for its store: that one comes back checked, for the engine to await with
/// [`run`]. Only that await is async, so a waiting handling holds nothing of the checks.
pub(crate) fn dispatch<'a, 'h, A: App>(
    eng: &mut Engine<A>,
    input: &'a [u8],
    cx: &Context<'_>,
    sent: impl Sent<'h>,
    w: &mut Writer<'_>,
    note: &mut Option<Note>,
    progress: &mut Progress<'a>,
) -> Dispatched<'a, A::Tool> {
    let http = sent.http();
    let env = match envelope::read(input) {
        Ok(env) => env,
        Err((e, id)) => return Dispatched::Done(Outcome::Error(id, RpcError::Envelope(e))),
    };
    let Some(id) = env.id else {
        // Over HTTP a notification is checked like a request: headers present and equal to
        // the body (a rejected one gets an id-less -32020 and 400, not 202).
        return Dispatched::Done(
            match http.map(|h| notification_headers(h, env.method, env.params)) {
                Some(Err(e)) => Outcome::Error(None, e),
                _ => Outcome::Notification,
            },
        );
    };
    let call = Request {
        id,
        method: env.method,
        params: env.params,
        http,
    };
    #[cfg(feature = "resources")]
    let listen = Method::of(env.method) == Some(Method::Listen);
    match request(eng, call, cx, w, note, progress) {
        #[cfg(feature = "resources")]
        Ok(None) if listen => Dispatched::Done(Outcome::Listening(id)),
        Ok(None) => Dispatched::Done(Outcome::Result(id)),
        Ok(Some(waits)) => waits,
        Err(e) => Dispatched::Done(Outcome::Error(Some(id), e)),
    }
}

/// Runs the tool or the resource read a dispatched request named: the one await of a handling.
pub(crate) async fn run<'a, A: App>(
    eng: &mut Engine<A>,
    id: Value<'a>,
    waits: &Waits<'a, A::Tool>,
    cx: &Context<'_>,
    w: &mut Writer<'_>,
    note: &mut Option<Note>,
    progress: &mut Progress<'a>,
) -> Outcome<'a> {
    let meta = match waits {
        Waits::Tool(call) => call.meta(),
        #[cfg(feature = "resources")]
        Waits::Read(read) => read.meta(),
    };
    let mut inv = Invocation {
        eng,
        id,
        meta,
        cx,
        w,
        note,
        progress,
    };
    let ran = match waits {
        Waits::Tool(call) => invoke_tool(&mut inv, call).await,
        #[cfg(feature = "resources")]
        Waits::Read(read) => invoke_read(&mut inv, read).await,
    };
    match ran {
        Ok(()) => Outcome::Result(id),
        Err(e) => Outcome::Error(Some(id), e),
    }
}

/// One request as read from the envelope, with the HTTP headers it came with (if over HTTP).
struct Request<'a, 'h> {
    id: Value<'a>,
    method: Value<'a>,
    params: Option<Value<'a>>,
    http: Option<&'h HttpHeaders<'h>>,
}

/// Validates a request in the pipeline's order and runs it, except a `tools/call` or a
/// `resources/read` (returned, with its id, to be awaited).
fn request<'a, A: App>(
    eng: &mut Engine<A>,
    req: Request<'a, '_>,
    cx: &Context<'_>,
    w: &mut Writer<'_>,
    note: &mut Option<Note>,
    progress: &mut Progress<'a>,
) -> Result<Option<Dispatched<'a, A::Tool>>, RpcError<'a>> {
    let Request {
        id,
        method,
        params,
        http,
    } = req;
    if let Some(h) = http {
        if h.version.is_none() {
            return Err(RpcError::HeaderMismatch(
                "Missing MCP-Protocol-Version header",
            ));
        }
        if h.method.is_none() {
            return Err(RpcError::HeaderMismatch("Missing Mcp-Method header"));
        }
    }
    let m = Method::of(method).filter(|m| m.served(&eng.app));
    let m = m.ok_or(RpcError::MethodNotFound)?;
    let meta = meta::read(params).map_err(RpcError::Meta)?;
    if let Some(h) = http {
        check_headers(h, method, params, &meta, m)?;
        if m == Method::ToolsCall {
            check_param_headers(eng.app.tools(), params, h)?;
        }
    }
    if !SUPPORTED_VERSIONS.iter().any(|v| meta.version.eq_str(v)) {
        return Err(RpcError::UnsupportedVersion(meta.version));
    }
    match m {
        Method::Discover => discover(eng, w, id),
        Method::ToolsList => {
            one_page(params, "Invalid cursor: tools/list has one page")?;
            tools_list(eng, w, id)
        }
        Method::PromptsList => {
            one_page(params, "Invalid cursor: prompts/list has one page")?;
            prompts_list(eng, w, id)
        }
        #[cfg(feature = "resources")]
        Method::ResourcesList => {
            one_page(params, "Invalid cursor: resources/list has one page")?;
            resources_list(eng, w, id)
        }
        #[cfg(feature = "resources")]
        Method::TemplatesList => {
            one_page(
                params,
                "Invalid cursor: resources/templates/list has one page",
            )?;
            templates_list(eng, w, id)
        }
        Method::ToolsCall => {
            let call = tools_call(eng, meta, params)?;
            return Ok(Some(Dispatched::Waits(id, Waits::Tool(call))));
        }
        #[cfg(feature = "resources")]
        Method::ResourcesRead => {
            let read = resources_read(meta, params)?;
            return Ok(Some(Dispatched::Waits(id, Waits::Read(read))));
        }
        Method::PromptsGet => {
            let mut inv = Invocation {
                eng,
                id,
                meta: &meta,
                cx,
                w,
                note,
                progress,
            };
            prompts_get(&mut inv, params)?;
        }
        Method::Complete => complete(eng, id, params, cx.now, w, note)?,
        #[cfg(feature = "resources")]
        Method::Listen => super::listen::open(eng, w, id, params)?,
    }
    Ok(None)
}

fn one_page(params: Option<Value<'_>>, why: &'static str) -> Result<(), RpcError<'static>> {
    match params.and_then(|p| p.get("cursor")) {
        Some(_) => Err(RpcError::InvalidParams(why)),
        None => Ok(()),
    }
}
