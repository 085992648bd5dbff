//! Method dispatch, in the validation order the spec digest (§5.5) and the conformance
//! probes pin: envelope, headers present, method, `_meta`, headers equal, version, params.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;

use super::app::{Call, Reply, Sealer};
use super::error::RpcError;
use super::{App, Context, Engine, Headers, Note, SUPPORTED_VERSIONS};
use crate::limits::MAX_STR;
use crate::mrtr::{InputResponses, ResponsesError};
use crate::seal::{self, Binding};
use crate::wire::envelope;
use crate::wire::json::{Kind, Value};
use crate::wire::meta::{self, RequestMeta};
use crate::wire::write::Writer;

pub(crate) enum Outcome<'a> {
    Notification,
    /// A result object was written and left open for the engine to close.
    Result(Value<'a>),
    Error(Option<Value<'a>>, RpcError<'a>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Method {
    Discover,
    ToolsList,
    ToolsCall,
}

impl Method {
    fn of(name: Value<'_>) -> Option<Method> {
        [("server/discover", Method::Discover), ("tools/list", Method::ToolsList), ("tools/call", Method::ToolsCall)]
            .into_iter()
            .find(|(n, _)| name.eq_str(n))
            .map(|(_, m)| m)
    }
}

pub(crate) fn dispatch<'a, A: App>(
    eng: &mut Engine<A>,
    input: &'a [u8],
    cx: &Context<'_>,
    w: &mut Writer<'_>,
    note: &mut Option<Note>,
) -> Outcome<'a> {
    let env = match envelope::read(input) {
        Ok(env) => env,
        Err((e, id)) => return Outcome::Error(id, RpcError::Envelope(e)),
    };
    let Some(id) = env.id else { return Outcome::Notification };
    match request(eng, id, env.method, env.params, cx, w, note) {
        Ok(()) => Outcome::Result(id),
        Err(e) => Outcome::Error(Some(id), e),
    }
}

fn request<'a, A: App>(
    eng: &mut Engine<A>,
    id: Value<'a>,
    method: Value<'a>,
    params: Option<Value<'a>>,
    cx: &Context<'_>,
    w: &mut Writer<'_>,
    note: &mut Option<Note>,
) -> Result<(), RpcError<'a>> {
    if let Some(h) = cx.headers {
        if h.version.is_none() {
            return Err(RpcError::HeaderMismatch("Missing MCP-Protocol-Version header"));
        }
        if h.method.is_none() {
            return Err(RpcError::HeaderMismatch("Missing Mcp-Method header"));
        }
    }
    let m = Method::of(method).ok_or(RpcError::MethodNotFound)?;
    let meta = meta::read(params).map_err(RpcError::Meta)?;
    if let Some(h) = cx.headers {
        check_headers(&h, method, params, &meta, m)?;
    }
    if !SUPPORTED_VERSIONS.iter().any(|v| meta.version.eq_str(v)) {
        return Err(RpcError::UnsupportedVersion(meta.version));
    }
    match m {
        Method::Discover => discover(eng, w, id),
        Method::ToolsList => {
            if params.and_then(|p| p.get("cursor")).is_some() {
                return Err(RpcError::InvalidParams("Invalid cursor: tools/list has one page"));
            }
            tools_list(eng, w, id)
        }
        Method::ToolsCall => return tools_call(eng, id, params, &meta, cx, w, note),
    }
    Ok(())
}

fn check_headers<'a>(
    h: &Headers<'_>,
    method: Value<'a>,
    params: Option<Value<'a>>,
    meta: &RequestMeta<'a>,
    m: Method,
) -> Result<(), RpcError<'a>> {
    if !h.version.is_some_and(|v| header_eq(v, meta.version)) {
        return Err(RpcError::HeaderMismatch("MCP-Protocol-Version header does not match _meta"));
    }
    if !h.method.is_some_and(|v| header_eq(v, method)) {
        return Err(RpcError::HeaderMismatch("Mcp-Method header does not match the body"));
    }
    if m == Method::ToolsCall {
        let name = params.and_then(|p| p.get("name"));
        match (h.name, name) {
            (None, _) => return Err(RpcError::HeaderMismatch("Missing Mcp-Name header")),
            (Some(v), Some(n)) if header_eq(v, n) => {}
            _ => return Err(RpcError::HeaderMismatch("Mcp-Name header does not match the body")),
        }
    }
    Ok(())
}

/// Compares a header value (possibly `=?base64?…?=`) with a JSON string.
fn header_eq(header: &str, v: Value<'_>) -> bool {
    let encoded = header.strip_prefix("=?base64?").and_then(|s| s.strip_suffix("?="));
    match encoded {
        None => v.eq_str(header),
        Some(b64) => {
            let mut buf = [0u8; MAX_STR];
            match B64.decode_slice(b64, &mut buf) {
                Ok(n) => core::str::from_utf8(&buf[..n]).is_ok_and(|s| v.eq_str(s)),
                Err(_) => false,
            }
        }
    }
}

fn open_result(w: &mut Writer<'_>, id: Value<'_>) {
    super::write_head(w, Some(id));
    w.key("result").begin_object().key("resultType").string("complete");
}

fn discover<A: App>(eng: &Engine<A>, w: &mut Writer<'_>, id: Value<'_>) {
    open_result(w, id);
    w.key("supportedVersions").begin_array();
    SUPPORTED_VERSIONS.iter().for_each(|v| {
        w.string(v);
    });
    w.end_array();
    w.key("capabilities").begin_object().key("tools").begin_object().end_object().end_object();
    if let Some(i) = eng.app.info().instructions {
        w.key("instructions").string(i);
    }
    cache_hints(eng, w);
}

fn cache_hints<A: App>(eng: &Engine<A>, w: &mut Writer<'_>) {
    w.key("ttlMs").int(eng.config.list_ttl_ms.into()).key("cacheScope").string("public");
}

fn tools_list<A: App>(eng: &Engine<A>, w: &mut Writer<'_>, id: Value<'_>) {
    open_result(w, id);
    w.key("tools").begin_array();
    for t in eng.app.tools() {
        w.begin_object().key("name").string(t.name).key("title").string(t.title);
        w.key("description").string(t.description);
        w.key("inputSchema").raw(t.input_schema.as_bytes());
        w.key("annotations").begin_object().key("title").string(t.title);
        w.key("readOnlyHint").bool(t.read_only);
        if !t.read_only {
            w.key("destructiveHint").bool(t.destructive).key("idempotentHint").bool(t.idempotent);
        }
        w.key("openWorldHint").bool(false).end_object().end_object();
    }
    w.end_array();
    cache_hints(eng, w);
}

fn tools_call<'a, A: App>(
    eng: &mut Engine<A>,
    id: Value<'a>,
    params: Option<Value<'a>>,
    meta: &RequestMeta<'a>,
    cx: &Context<'_>,
    w: &mut Writer<'_>,
    note: &mut Option<Note>,
) -> Result<(), RpcError<'a>> {
    let params = params.ok_or(RpcError::InvalidParams("tools/call needs params"))?;
    let name = params.get("name").filter(|n| n.kind() == Kind::String);
    let name = name.ok_or(RpcError::InvalidParams("params.name must be a string"))?;
    let args = params.get("arguments");
    if args.is_some_and(|a| a.kind() != Kind::Object) {
        return Err(RpcError::InvalidParams("params.arguments must be an object"));
    }
    let responses = InputResponses::read(params.get("inputResponses")).map_err(|e| {
        RpcError::InvalidParams(match e {
            ResponsesError::NotObject => "params.inputResponses must be an object",
            ResponsesError::EntryNotObject => "each params.inputResponses value must be an object",
        })
    })?;
    let state = params.get("requestState");
    if state.is_some_and(|s| s.kind() != Kind::String) {
        return Err(RpcError::InvalidParams("params.requestState must be a string"));
    }
    let index = eng.app.tools().iter().position(|t| name.eq_str(t.name));
    let index = index.ok_or(RpcError::UnknownTool(name))?;
    let tool = eng.app.tools()[index];
    let bind = Binding {
        principal: cx.principal,
        epoch: eng.config.epoch,
        request: seal::request_digest("tools/call", name, args, tool.salient),
    };
    let opened = match state {
        None => None,
        Some(s) => {
            // base64url never needs escapes, so the raw body is the token itself.
            let token = s.str_escaped().unwrap_or(b"");
            match seal::open(&eng.keys, &bind, cx.now, token) {
                Ok(o) => Some(o),
                Err(e) => {
                    *note = Some(Note::StateRejected(e));
                    return Err(RpcError::BadState);
                }
            }
        }
    };
    let call = Call {
        args,
        responses,
        state: opened.as_ref(),
        caps: meta.caps,
        principal: cx.principal,
        now: cx.now,
        nonce: cx.entropy,
        answers_need_state: tool.answers_need_state,
    };
    let expires = cx.now.saturating_add(eng.config.state_ttl_s.into()).min(u32::MAX.into()) as u32;
    let sealer = Sealer { ring: &eng.keys, bind, expires, nonce: cx.entropy, caps: meta.caps };
    let reply = Reply { w, id, sealer };
    match eng.app.call_tool(index, &call, reply) {
        Ok(_done) => Ok(()),
        Err(e) => {
            if let super::CallError::Internal(why) = e {
                *note = Some(Note::Internal(why));
            }
            Err(e.rpc())
        }
    }
}
