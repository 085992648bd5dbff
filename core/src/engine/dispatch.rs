//! Method dispatch, in the validation order the spec digest (§5.5) and the conformance
//! probes pin: envelope, headers present, method, `_meta`, headers equal, version, params.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;

use super::app::{
    Answered, Call, CallError, CompletionRef, CompletionRequest, Completions, Done, ProgressLog,
    Reply, Sealer,
};
use super::error::RpcError;
use super::{App, Context, Engine, Headers, Note, ParamHeaders, SUPPORTED_VERSIONS};
use crate::limits::MAX_STR;
use crate::mrtr::InputResponses;
use crate::seal::{self, Binding, Origin};
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

/// The `progressToken` of the request and the progress its handler reported.
#[derive(Clone, Copy, Default)]
pub(crate) struct Progress<'a> {
    pub token: Option<Value<'a>>,
    pub log: ProgressLog,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Method {
    Discover,
    ToolsList,
    ToolsCall,
    PromptsList,
    PromptsGet,
    ResourcesList,
    TemplatesList,
    ResourcesRead,
    Complete,
}

impl Method {
    fn of(name: Value<'_>) -> Option<Method> {
        [
            ("server/discover", Method::Discover),
            ("tools/list", Method::ToolsList),
            ("tools/call", Method::ToolsCall),
            ("prompts/list", Method::PromptsList),
            ("prompts/get", Method::PromptsGet),
            ("resources/list", Method::ResourcesList),
            ("resources/templates/list", Method::TemplatesList),
            ("resources/read", Method::ResourcesRead),
            ("completion/complete", Method::Complete),
        ]
        .into_iter()
        .find(|(n, _)| name.eq_str(n))
        .map(|(_, m)| m)
    }

    /// Whether the app serves this method (what discover advertises, and nothing more).
    fn served<A: App>(self, app: &A) -> bool {
        match self {
            Method::Discover | Method::ToolsList | Method::ToolsCall => true,
            Method::PromptsList | Method::PromptsGet => !app.prompts().is_empty(),
            Method::ResourcesList | Method::TemplatesList | Method::ResourcesRead => {
                serves_resources(app)
            }
            Method::Complete => app.serves_completions(),
        }
    }
}

fn serves_resources<A: App>(app: &A) -> bool {
    !app.resources().is_empty() || !app.resource_templates().is_empty()
}

pub(crate) fn dispatch<'a, A: App>(
    eng: &mut Engine<A>,
    input: &'a [u8],
    cx: &Context<'_>,
    w: &mut Writer<'_>,
    note: &mut Option<Note>,
    progress: &mut Progress<'a>,
    param_headers: Option<ParamHeaders<'_>>,
) -> Outcome<'a> {
    let env = match envelope::read(input) {
        Ok(env) => env,
        Err((e, id)) => return Outcome::Error(id, RpcError::Envelope(e)),
    };
    let Some(id) = env.id else {
        // Over HTTP a notification is checked like a request: headers present and equal to
        // the body (a rejected one gets an id-less -32020 and 400, not 202).
        return match cx
            .headers
            .map(|h| notification_headers(&h, env.method, env.params))
        {
            Some(Err(e)) => Outcome::Error(None, e),
            _ => Outcome::Notification,
        };
    };
    let call = Request {
        id,
        method: env.method,
        params: env.params,
        param_headers,
    };
    match request(eng, call, cx, w, note, progress) {
        Ok(()) => Outcome::Result(id),
        Err(e) => Outcome::Error(Some(id), e),
    }
}

/// One request as read from the envelope, with what the transport saw of `Mcp-Param-*`.
struct Request<'a, 'h> {
    id: Value<'a>,
    method: Value<'a>,
    params: Option<Value<'a>>,
    param_headers: Option<ParamHeaders<'h>>,
}

fn request<'a, A: App>(
    eng: &mut Engine<A>,
    req: Request<'a, '_>,
    cx: &Context<'_>,
    w: &mut Writer<'_>,
    note: &mut Option<Note>,
    progress: &mut Progress<'a>,
) -> Result<(), RpcError<'a>> {
    let Request {
        id,
        method,
        params,
        param_headers,
    } = req;
    if let Some(h) = cx.headers {
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
    if let Some(h) = cx.headers {
        check_headers(&h, method, params, &meta, m)?;
        if let (Method::ToolsCall, Some(ph)) = (m, param_headers) {
            check_param_headers(eng.app.tools(), params, ph).inspect_err(|e| {
                if let RpcError::Internal(why) = e {
                    *note = Some(Note::Internal(why));
                }
            })?;
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
        Method::ResourcesList => {
            one_page(params, "Invalid cursor: resources/list has one page")?;
            resources_list(eng, w, id)
        }
        Method::TemplatesList => {
            one_page(
                params,
                "Invalid cursor: resources/templates/list has one page",
            )?;
            templates_list(eng, w, id)
        }
        Method::ToolsCall | Method::PromptsGet | Method::ResourcesRead => {
            let mut inv = Invocation {
                eng,
                id,
                meta: &meta,
                cx,
                w,
                note,
                progress,
            };
            return match m {
                Method::ToolsCall => tools_call(&mut inv, params),
                Method::PromptsGet => prompts_get(&mut inv, params),
                _ => resources_read(&mut inv, params),
            };
        }
        Method::Complete => return complete(eng, id, params, w, note),
    }
    Ok(())
}

fn one_page(params: Option<Value<'_>>, why: &'static str) -> Result<(), RpcError<'static>> {
    match params.and_then(|p| p.get("cursor")) {
        Some(_) => Err(RpcError::InvalidParams(why)),
        None => Ok(()),
    }
}

fn notification_headers<'a>(
    h: &Headers<'_>,
    method: Value<'a>,
    params: Option<Value<'a>>,
) -> Result<(), RpcError<'a>> {
    let Some(version) = h.version else {
        return Err(RpcError::HeaderMismatch(
            "Missing MCP-Protocol-Version header",
        ));
    };
    if !h.method.is_some_and(|v| header_eq(v, method)) {
        return Err(RpcError::HeaderMismatch(
            "Mcp-Method header does not match the body",
        ));
    }
    let body_version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(meta::KEY_VERSION));
    if body_version.is_some_and(|v| !header_eq(version, v)) {
        return Err(RpcError::HeaderMismatch(
            "MCP-Protocol-Version header does not match _meta",
        ));
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
        return Err(RpcError::HeaderMismatch(
            "MCP-Protocol-Version header does not match _meta",
        ));
    }
    if !h.method.is_some_and(|v| header_eq(v, method)) {
        return Err(RpcError::HeaderMismatch(
            "Mcp-Method header does not match the body",
        ));
    }
    let name_member = match m {
        Method::ToolsCall | Method::PromptsGet => Some("name"),
        Method::ResourcesRead => Some("uri"),
        _ => None,
    };
    if let Some(member) = name_member {
        let name = params.and_then(|p| p.get(member));
        match (h.name, name) {
            (None, _) => return Err(RpcError::HeaderMismatch("Missing Mcp-Name header")),
            (Some(v), Some(n)) if header_eq(v, n) => {}
            _ => {
                return Err(RpcError::HeaderMismatch(
                    "Mcp-Name header does not match the body",
                ))
            }
        }
    }
    Ok(())
}

/// SEP-2243 custom headers: every tool argument whose schema carries `x-mcp-header: NAME`
/// must be mirrored, when present in the body, by an `Mcp-Param-NAME` header of equal value
/// (literal, or `=?base64?…?=` with strict padding); a header without the argument, or with
/// another value, is a mismatch (`-32020`).
fn check_param_headers<'a, T>(
    tools: &[super::ToolEntry<T>],
    params: Option<Value<'a>>,
    ph: ParamHeaders<'_>,
) -> Result<(), RpcError<'a>> {
    let name = params.and_then(|p| p.get("name"));
    let Some(tool) = tools
        .iter()
        .map(|t| &t.info)
        .find(|t| name.is_some_and(|n| n.eq_str(t.name)))
    else {
        return Ok(()); // unknown tools are answered later, with -32602
    };
    if !tool.input_schema.contains("x-mcp-header") {
        return Ok(());
    }
    let Ok(schema) = crate::wire::json::parse(tool.input_schema.as_bytes()) else {
        return Err(RpcError::Internal("a tool's inputSchema is not valid JSON"));
    };
    let args = params.and_then(|p| p.get("arguments"));
    let properties = schema.get("properties");
    for (prop, s) in properties.iter().flat_map(|p| p.members()) {
        let Some(header) = s.get("x-mcp-header") else {
            continue;
        };
        let mut scratch = [0u8; MAX_STR];
        let (Some(header), Some(prop)) = (header.as_plain_str(), prop.as_str(&mut scratch)) else {
            continue;
        };
        let body = args.and_then(|a| a.get(prop));
        let sent = ph.get(header);
        match (body, sent) {
            (None, None) => {}
            (Some(_), None) => return Err(RpcError::HeaderMismatch("Missing Mcp-Param header")),
            (None, Some(_)) => {
                return Err(RpcError::HeaderMismatch(
                    "Mcp-Param header without its argument",
                ))
            }
            (Some(v), Some(h)) if header_eq(h, v) => {}
            (Some(_), Some(_)) => {
                return Err(RpcError::HeaderMismatch(
                    "Mcp-Param header does not match the body",
                ))
            }
        }
    }
    Ok(())
}

/// Compares a header value (possibly `=?base64?…?=`) with a JSON string, number or boolean.
/// Optional whitespace around the value is not part of it (RFC 9110 §5.5).
fn header_eq(header: &str, v: Value<'_>) -> bool {
    let header = header.trim_matches([' ', '\t']);
    let encoded = header
        .strip_prefix("=?base64?")
        .and_then(|s| s.strip_suffix("?="));
    let same = |text: &str| match v.kind() {
        Kind::String => v.eq_str(text),
        Kind::Number | Kind::Bool => v.raw() == text.as_bytes(),
        _ => false,
    };
    match encoded {
        None => same(header),
        Some(b64) => {
            let mut buf = [0u8; MAX_STR];
            match B64.decode_slice(b64, &mut buf) {
                Ok(n) => core::str::from_utf8(&buf[..n]).is_ok_and(same),
                Err(_) => false,
            }
        }
    }
}

fn open_result(w: &mut Writer<'_>, id: Value<'_>) {
    super::write_head(w, Some(id));
    w.key("result")
        .begin_object()
        .key("resultType")
        .string("complete");
}

fn discover<A: App>(eng: &Engine<A>, w: &mut Writer<'_>, id: Value<'_>) {
    open_result(w, id);
    w.key("supportedVersions");
    super::write_versions(w);
    w.key("capabilities").begin_object();
    w.key("tools").begin_object().end_object();
    if !eng.app.prompts().is_empty() {
        w.key("prompts").begin_object().end_object();
    }
    if serves_resources(&eng.app) {
        w.key("resources").begin_object().end_object();
    }
    if eng.app.serves_completions() {
        w.key("completions").begin_object().end_object();
    }
    w.end_object();
    if let Some(i) = eng.app.info().instructions {
        w.key("instructions").string(i);
    }
    cache_hints(eng, w);
}

fn cache_hints<A: App>(eng: &Engine<A>, w: &mut Writer<'_>) {
    w.key("ttlMs")
        .int(eng.config.list_ttl_ms.into())
        .key("cacheScope")
        .string("public");
}

fn tools_list<A: App>(eng: &Engine<A>, w: &mut Writer<'_>, id: Value<'_>) {
    open_result(w, id);
    w.key("tools").begin_array();
    for t in eng.app.tools().iter().map(|t| &t.info) {
        w.begin_object()
            .key("name")
            .string(t.name)
            .key("title")
            .string(t.title);
        w.key("description").string(t.description);
        w.key("inputSchema").raw(t.input_schema.as_bytes());
        w.key("annotations")
            .begin_object()
            .key("title")
            .string(t.title);
        w.key("readOnlyHint").bool(t.read_only);
        if !t.read_only {
            w.key("destructiveHint")
                .bool(t.destructive)
                .key("idempotentHint")
                .bool(t.idempotent);
        }
        w.key("openWorldHint").bool(false).end_object().end_object();
    }
    w.end_array();
    cache_hints(eng, w);
}

fn prompts_list<A: App>(eng: &Engine<A>, w: &mut Writer<'_>, id: Value<'_>) {
    open_result(w, id);
    w.key("prompts").begin_array();
    for p in eng.app.prompts() {
        w.begin_object()
            .key("name")
            .string(p.name)
            .key("title")
            .string(p.title);
        w.key("description").string(p.description);
        if !p.arguments.is_empty() {
            w.key("arguments").begin_array();
            for a in p.arguments {
                w.begin_object().key("name").string(a.name);
                w.key("description").string(a.description);
                w.key("required").bool(a.required).end_object();
            }
            w.end_array();
        }
        w.end_object();
    }
    w.end_array();
    cache_hints(eng, w);
}

fn resources_list<A: App>(eng: &Engine<A>, w: &mut Writer<'_>, id: Value<'_>) {
    open_result(w, id);
    w.key("resources").begin_array();
    for r in eng.app.resources() {
        w.begin_object()
            .key("uri")
            .string(r.uri)
            .key("name")
            .string(r.name);
        w.key("title")
            .string(r.title)
            .key("description")
            .string(r.description);
        w.key("mimeType").string(r.mime_type).end_object();
    }
    w.end_array();
    cache_hints(eng, w);
}

fn templates_list<A: App>(eng: &Engine<A>, w: &mut Writer<'_>, id: Value<'_>) {
    open_result(w, id);
    w.key("resourceTemplates").begin_array();
    for t in eng.app.resource_templates() {
        w.begin_object().key("uriTemplate").string(t.uri_template);
        w.key("name").string(t.name).key("title").string(t.title);
        w.key("description").string(t.description);
        w.key("mimeType").string(t.mime_type).end_object();
    }
    w.end_array();
    cache_hints(eng, w);
}

/// Everything one MRTR-capable request (`tools/call`, `prompts/get`, `resources/read`)
/// carries through the engine.
struct Invocation<'e, 'a, 'w, 'b, A: App> {
    eng: &'e mut Engine<A>,
    id: Value<'a>,
    meta: &'e RequestMeta<'a>,
    cx: &'e Context<'e>,
    w: &'w mut Writer<'b>,
    note: &'e mut Option<Note>,
    progress: &'e mut Progress<'a>,
}

/// The request a `requestState` is bound to, and how its answers count.
struct Target<'a> {
    method: &'static str,
    /// The tool or prompt name, or the resource URI (a JSON string).
    name: Value<'a>,
    args: Option<Value<'a>>,
    salient: Option<&'static [&'static str]>,
    answers_need_state: bool,
}

/// Reads the MRTR members every such request may carry: `inputResponses`, `requestState`.
fn mrtr_params<'a>(
    params: Value<'a>,
) -> Result<(InputResponses<'a>, Option<Value<'a>>), RpcError<'a>> {
    let responses = InputResponses::read(params.get("inputResponses"))
        .map_err(|e| RpcError::InvalidParams(e.message()))?;
    let state = params.get("requestState");
    if state.is_some_and(|s| s.kind() != Kind::String) {
        return Err(RpcError::InvalidParams(
            "params.requestState must be a string",
        ));
    }
    Ok((responses, state))
}

/// Verifies any `requestState`, lends the handler a [`Call`] and a [`Reply`], and maps its
/// error. Sealing, capability checks and progress live here, once for every method.
fn invoke<'a, A: App>(
    inv: &mut Invocation<'_, 'a, '_, '_, A>,
    target: Target<'a>,
    responses: InputResponses<'a>,
    state: Option<Value<'a>>,
    run: impl FnOnce(&mut A, &Call<'_>, Reply<'_, '_>) -> Result<Done, CallError>,
) -> Result<Answered, RpcError<'a>> {
    let (eng, cx) = (&mut *inv.eng, inv.cx);
    let origin = Origin {
        method: target.method,
        name: target.name,
        args: target.args,
        salient: target.salient,
    };
    let mut digest = None;
    let opened = match state {
        None => None,
        Some(s) => {
            let request = origin.digest();
            digest = Some(request);
            let bind = Binding {
                principal: cx.principal,
                epoch: eng.config.epoch,
                request,
            };
            // base64url never needs escapes, so the raw body is the token itself.
            let token = s.str_escaped().unwrap_or(b"");
            match seal::open(&eng.keys, &bind, cx.now, token) {
                Ok(o) => Some(o),
                Err(e) => {
                    *inv.note = Some(Note::StateRejected(e));
                    return Err(RpcError::BadState);
                }
            }
        }
    };
    // One logical operation keeps one nonce across rounds (at-most-once is keyed on it).
    let nonce = opened.as_ref().map_or(cx.entropy, |o| o.nonce);
    let call = Call {
        args: target.args,
        responses,
        state: opened.as_ref(),
        caps: inv.meta.caps,
        principal: cx.principal,
        now: cx.now,
        nonce,
        answers_need_state: target.answers_need_state,
    };
    let expires = cx
        .now
        .saturating_add(eng.config.state_ttl_s.into())
        .min(u32::MAX.into()) as u32;
    let sealer = Sealer {
        ring: &eng.keys,
        principal: cx.principal,
        epoch: eng.config.epoch,
        origin,
        digest,
        expires,
        nonce,
        caps: inv.meta.caps,
    };
    inv.progress.token = inv.meta.progress_token;
    let progress = match inv.progress.token {
        Some(_) => Some(&mut inv.progress.log),
        None => None,
    };
    let reply = Reply {
        w: &mut *inv.w,
        id: inv.id,
        sealer,
        progress,
    };
    match run(&mut eng.app, &call, reply) {
        Ok(done) => Ok(done.0),
        Err(e) => {
            *inv.note = e.note().or(*inv.note);
            let uri = (target.method == "resources/read").then_some(target.name);
            Err(e.rpc(uri))
        }
    }
}

fn tools_call<'a, A: App>(
    inv: &mut Invocation<'_, 'a, '_, '_, A>,
    params: Option<Value<'a>>,
) -> Result<(), RpcError<'a>> {
    let params = params.ok_or(RpcError::InvalidParams("tools/call needs params"))?;
    let name = params.get("name").filter(|n| n.kind() == Kind::String);
    let name = name.ok_or(RpcError::InvalidParams("params.name must be a string"))?;
    let args = params.get("arguments");
    if args.is_some_and(|a| a.kind() != Kind::Object) {
        return Err(RpcError::InvalidParams(
            "params.arguments must be an object",
        ));
    }
    let (responses, state) = mrtr_params(params)?;
    let entry = inv
        .eng
        .app
        .tools()
        .iter()
        .find(|t| name.eq_str(t.info.name));
    let entry = *entry.ok_or(RpcError::UnknownTool(name))?;
    let target = Target {
        method: "tools/call",
        name,
        args,
        salient: entry.info.salient,
        answers_need_state: entry.info.answers_need_state,
    };
    invoke(inv, target, responses, state, |app, call, reply| {
        app.call_tool(entry.tool, call, reply)
    })?;
    Ok(())
}

fn prompts_get<'a, A: App>(
    inv: &mut Invocation<'_, 'a, '_, '_, A>,
    params: Option<Value<'a>>,
) -> Result<(), RpcError<'a>> {
    let params = params.ok_or(RpcError::InvalidParams("prompts/get needs params"))?;
    let name = params.get("name").filter(|n| n.kind() == Kind::String);
    let name = name.ok_or(RpcError::InvalidParams("params.name must be a string"))?;
    let args = params.get("arguments");
    let strings = |a: Value<'_>| a.members().all(|(_, v)| v.kind() == Kind::String);
    if args.is_some_and(|a| a.kind() != Kind::Object || !strings(a)) {
        return Err(RpcError::InvalidParams(
            "params.arguments must be an object of strings",
        ));
    }
    let (responses, state) = mrtr_params(params)?;
    let index = inv
        .eng
        .app
        .prompts()
        .iter()
        .position(|p| name.eq_str(p.name));
    let index = index.ok_or(RpcError::UnknownPrompt(name))?;
    let prompt = inv.eng.app.prompts()[index];
    for a in prompt.arguments.iter().filter(|a| a.required) {
        if args.and_then(|v| v.get(a.name)).is_none() {
            return Err(RpcError::InvalidParams(
                "a required prompt argument is missing",
            ));
        }
    }
    let target = Target {
        method: "prompts/get",
        name,
        args,
        salient: None,
        answers_need_state: prompt.answers_need_state,
    };
    invoke(inv, target, responses, state, |app, call, reply| {
        app.get_prompt(index, call, reply)
    })?;
    Ok(())
}

fn resources_read<'a, A: App>(
    inv: &mut Invocation<'_, 'a, '_, '_, A>,
    params: Option<Value<'a>>,
) -> Result<(), RpcError<'a>> {
    let params = params.ok_or(RpcError::InvalidParams("resources/read needs params"))?;
    let uri = params.get("uri").filter(|n| n.kind() == Kind::String);
    let uri = uri.ok_or(RpcError::InvalidParams("params.uri must be a string"))?;
    let mut scratch = [0u8; MAX_STR];
    let decoded = uri.as_str(&mut scratch);
    let decoded = decoded.ok_or(RpcError::InvalidParams("params.uri is too long"))?;
    let (responses, state) = mrtr_params(params)?;
    let target = Target {
        method: "resources/read",
        name: uri,
        args: None,
        salient: None,
        answers_need_state: false,
    };
    let answered = invoke(inv, target, responses, state, |app, call, reply| {
        app.read_resource(decoded, call, reply)
    })?;
    if answered == Answered::Complete {
        cache_hints(inv.eng, inv.w);
    }
    Ok(())
}

fn complete<'a, A: App>(
    eng: &mut Engine<A>,
    id: Value<'a>,
    params: Option<Value<'a>>,
    w: &mut Writer<'_>,
    note: &mut Option<Note>,
) -> Result<(), RpcError<'a>> {
    let params = params.ok_or(RpcError::InvalidParams("completion/complete needs params"))?;
    let string = |v: Option<Value<'a>>| v.filter(|v| v.kind() == Kind::String);
    let r = params.get("ref").filter(|r| r.kind() == Kind::Object);
    let r = r.ok_or(RpcError::InvalidParams("params.ref must be an object"))?;
    let kind = string(r.get("type"));
    let reference = match kind {
        Some(t) if t.eq_str("ref/prompt") => string(r.get("name")).map(CompletionRef::Prompt),
        Some(t) if t.eq_str("ref/resource") => string(r.get("uri")).map(CompletionRef::Resource),
        _ => None,
    };
    let reference = reference.ok_or(RpcError::InvalidParams(
        "params.ref is not a prompt or resource reference",
    ))?;
    let arg = params.get("argument").filter(|a| a.kind() == Kind::Object);
    let (argument, value) = match arg {
        Some(a) => (string(a.get("name")), string(a.get("value"))),
        None => (None, None),
    };
    let (Some(argument), Some(value)) = (argument, value) else {
        return Err(RpcError::InvalidParams(
            "params.argument needs string name and value",
        ));
    };
    let context = params.get("context").and_then(|c| c.get("arguments"));
    let context = context.filter(|c| c.kind() == Kind::Object);
    let request = CompletionRequest {
        reference,
        argument,
        value,
        context,
    };
    open_result(w, id);
    w.key("completion")
        .begin_object()
        .key("values")
        .begin_array();
    let mut out = Completions {
        w: &mut *w,
        sent: 0,
        total: 0,
    };
    if let Err(e) = eng.app.complete(&request, &mut out) {
        *note = e.note().or(*note);
        return Err(e.rpc(None));
    }
    let (sent, total) = (out.sent, out.total);
    w.end_array()
        .key("total")
        .int(total.into())
        .key("hasMore")
        .bool(total > sent);
    w.end_object();
    Ok(())
}
