//! The methods that run app code: `tools/call`, `prompts/get`, `resources/read` (state
//! verified, [`Call`] and [`Reply`] lent, errors mapped, in [`invoke_tool`], [`invoke_read`]
//! and [`invoke_now`]) and `completion/complete`.

use super::error::CallError;
use super::error::RpcError;
#[cfg(feature = "resources")]
use super::lists::cache_hints;
use super::lists::open_result;
use super::reply::{Progress, ResultKind, Sealer};
use super::{App, Config, Context, Done, Engine, Note};
use super::{Call, CompletionRef, CompletionRequest, Completions, Reply};
#[cfg(feature = "resources")]
use crate::limits::MAX_STR;
use crate::mrtr::InputResponses;
use crate::seal::{self, Binding, KeyRing, Opened, Origin, SealError};
use crate::wire::json::{Kind, Value};
use crate::wire::meta::{ClientCaps, RequestMeta};
use crate::wire::write::Writer;

/// Everything one MRTR-capable request (`tools/call`, `prompts/get`, `resources/read`)
/// carries through the engine.
pub(super) struct Invocation<'e, 'a, 'w, 'b, A: App> {
    pub(super) eng: &'e mut Engine<A>,
    pub(super) id: Value<'a>,
    pub(super) meta: &'e RequestMeta<'a>,
    pub(super) cx: &'e Context<'e>,
    pub(super) w: &'w mut Writer<'b>,
    pub(super) note: &'e mut Option<Note>,
    pub(super) progress: &'e mut Progress<'a>,
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

/// `name`, `arguments` and the MRTR members of a `tools/call` or `prompts/get`, in one walk.
fn pick_params(params: Value<'_>) -> [Option<Value<'_>>; 4] {
    params.pick(["name", "arguments", "inputResponses", "requestState"])
}

/// Checks the MRTR members every such request may carry: `inputResponses`, `requestState`.
fn mrtr_params<'a>(
    responses: Option<Value<'a>>,
    state: Option<Value<'a>>,
) -> Result<(InputResponses<'a>, Option<Value<'a>>), RpcError<'a>> {
    let responses =
        InputResponses::read(responses).map_err(|e| RpcError::InvalidParams(e.message()))?;
    if state.is_some_and(|s| s.kind() != Kind::String) {
        return Err(RpcError::InvalidParams(
            "params.requestState must be a string",
        ));
    }
    Ok((responses, state))
}

/// What a handler is lent besides the request: the verified state, and what sealing a new one
/// takes. Kept by the caller while the handler runs ([`Reply`] borrows its [`Sealer`]).
struct Lent<'e> {
    opened: Option<Opened>,
    sealer: Sealer<'e>,
    now: u64,
    access: super::access::Access,
}

/// Verifies any `requestState` against the request it must come back with (`target`), and
/// makes what the handler is lent. Not generic, and kept out of line: one copy for every app
/// and method.
#[inline(never)]
fn lend<'e>(
    keys: &'e KeyRing,
    config: &Config,
    cx: &Context<'e>,
    caps: ClientCaps,
    target: &Target<'e>,
    state: Option<Value<'e>>,
) -> Result<Lent<'e>, SealError> {
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
                epoch: config.epoch,
                request,
            };
            // base64url never needs escapes, so the raw body is the token itself.
            let token = s.str_escaped().unwrap_or(b"");
            Some(seal::open(keys, &bind, cx.now, token)?)
        }
    };
    let expires = cx.now.saturating_add(config.state_ttl_s.into());
    let sealer = Sealer {
        ring: keys,
        principal: cx.principal,
        epoch: config.epoch,
        origin,
        digest,
        expires: expires.min(u32::MAX.into()) as u32,
        // One logical operation keeps one nonce across rounds (at-most-once is keyed on it).
        nonce: opened.as_ref().map_or(cx.entropy, |o| o.nonce),
        caps,
    };
    Ok(Lent {
        opened,
        sealer,
        now: cx.now,
        access: cx.access,
    })
}

impl<'e> Lent<'e> {
    /// The call as the handler sees it.
    fn call(&self, target: &Target<'e>, responses: InputResponses<'e>) -> Call<'_> {
        Call {
            args: target.args,
            responses,
            state: self.opened.as_ref(),
            caps: self.sealer.caps,
            principal: self.sealer.principal,
            now: self.now,
            access: self.access,
            nonce: self.sealer.nonce,
            answers_need_state: target.answers_need_state,
        }
    }
}

/// The handler's [`Reply`]: it writes the result into `w`, progress into `progress` (when the
/// request carried a `progressToken`), and seals with `sealer`.
fn reply<'w, 'b, 'a: 'w>(
    w: &'w mut Writer<'b>,
    id: Value<'w>,
    progress: &'w mut Progress<'a>,
    meta: &RequestMeta<'a>,
    sealer: &'w Sealer<'w>,
) -> Reply<'w, 'b> {
    progress.token = meta.progress_token;
    let progress = match progress.token {
        Some(_) => Some(&mut progress.log),
        None => None,
    };
    Reply {
        w,
        id,
        sealer,
        progress,
    }
}

/// A refused `requestState`: the reason for the log, one error for the wire.
fn rejected(note: &mut Option<Note>, e: SealError) -> RpcError<'static> {
    *note = Some(Note::StateRejected(e));
    RpcError::BadState
}

/// The handler's error as the request's answer (`resources/read` names the URI).
fn finish<'a>(
    note: &mut Option<Note>,
    target: &Target<'a>,
    ran: Result<Done, CallError>,
) -> Result<ResultKind, RpcError<'a>> {
    match ran {
        Ok(done) => Ok(done.0),
        Err(e) => {
            *note = e.note().or(*note);
            let uri = (target.method == "resources/read").then_some(target.name);
            Err(e.rpc(uri))
        }
    }
}

/// Runs prompt number `index` with a [`Call`] and a [`Reply`] lent (state verified, errors
/// mapped): at once (the app's prompts cannot wait), so it never holds a waiting handling.
#[inline(never)]
fn invoke_now<'a, A: App>(
    inv: &mut Invocation<'_, 'a, '_, '_, A>,
    target: Target<'a>,
    responses: InputResponses<'a>,
    state: Option<Value<'a>>,
    index: usize,
) -> Result<ResultKind, RpcError<'a>> {
    let eng = &mut *inv.eng;
    let lent = lend(
        &eng.keys,
        &eng.config,
        inv.cx,
        inv.meta.caps,
        &target,
        state,
    );
    let lent = lent.map_err(|e| rejected(inv.note, e))?;
    let call = lent.call(&target, responses);
    let reply = reply(
        &mut *inv.w,
        inv.id,
        &mut *inv.progress,
        inv.meta,
        &lent.sealer,
    );
    let ran = eng.app.get_prompt(index, &call, reply);
    finish(inv.note, &target, ran)
}

/// Runs a checked `tools/call` ([`invoke_now`] for a tool, which may wait for its store): the
/// one await of a handling. `inv.meta` is `call`'s.
pub(super) async fn invoke_tool<'a, A: App>(
    inv: &mut Invocation<'_, 'a, '_, '_, A>,
    call: &ToolCall<'a, A::Tool>,
) -> Result<(), RpcError<'a>> {
    let target = &call.target;
    let eng = &mut *inv.eng;
    let lent = lend(
        &eng.keys,
        &eng.config,
        inv.cx,
        inv.meta.caps,
        target,
        call.state,
    );
    let lent = lent.map_err(|e| rejected(inv.note, e))?;
    let args = lent.call(target, call.responses);
    let reply = reply(
        &mut *inv.w,
        inv.id,
        &mut *inv.progress,
        inv.meta,
        &lent.sealer,
    );
    let ran = eng.app.call_tool(call.tool, &args, reply).await;
    finish(inv.note, target, ran).map(|_| ())
}

/// A `tools/call` checked and ready to run: the one request whose handler may wait, so the
/// one thing a waiting handling holds besides the response being written.
pub(crate) struct ToolCall<'a, T> {
    meta: RequestMeta<'a>,
    target: Target<'a>,
    responses: InputResponses<'a>,
    state: Option<Value<'a>>,
    tool: T,
}

/// Checks a `tools/call`'s params and finds its tool.
pub(super) fn tools_call<'a, A: App>(
    eng: &Engine<A>,
    meta: RequestMeta<'a>,
    params: Option<Value<'a>>,
) -> Result<ToolCall<'a, A::Tool>, RpcError<'a>> {
    let params = params.ok_or(RpcError::InvalidParams("tools/call needs params"))?;
    let [name, args, responses, state] = pick_params(params);
    let name = name.filter(|n| n.kind() == Kind::String);
    let name = name.ok_or(RpcError::InvalidParams("params.name must be a string"))?;
    if args.is_some_and(|a| a.kind() != Kind::Object) {
        return Err(RpcError::InvalidParams(
            "params.arguments must be an object",
        ));
    }
    let (responses, state) = mrtr_params(responses, state)?;
    let entry = eng.app.tools().iter().find(|t| name.eq_str(t.info.name));
    let entry = *entry.ok_or(RpcError::UnknownTool(name))?;
    let target = Target {
        method: "tools/call",
        name,
        args,
        salient: entry.info.salient,
        answers_need_state: entry.info.answers_need_state,
    };
    Ok(ToolCall {
        meta,
        target,
        responses,
        state,
        tool: entry.tool,
    })
}

impl<'a, T> ToolCall<'a, T> {
    /// The request's `_meta`.
    pub(super) fn meta(&self) -> &RequestMeta<'a> {
        &self.meta
    }
}

#[inline(never)]
pub(super) fn prompts_get<'a, A: App>(
    inv: &mut Invocation<'_, 'a, '_, '_, A>,
    params: Option<Value<'a>>,
) -> Result<(), RpcError<'a>> {
    let params = params.ok_or(RpcError::InvalidParams("prompts/get needs params"))?;
    let [name, args, responses, state] = pick_params(params);
    let name = name.filter(|n| n.kind() == Kind::String);
    let name = name.ok_or(RpcError::InvalidParams("params.name must be a string"))?;
    let strings = |a: Value<'_>| a.members().all(|(_, v)| v.kind() == Kind::String);
    if args.is_some_and(|a| a.kind() != Kind::Object || !strings(a)) {
        return Err(RpcError::InvalidParams(
            "params.arguments must be an object of strings",
        ));
    }
    let (responses, state) = mrtr_params(responses, state)?;
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
    invoke_now(inv, target, responses, state, index)?;
    Ok(())
}

/// A `resources/read` checked and ready to run: its handler may wait for the app's store
/// (a room's day), so it is awaited like a [`ToolCall`].
#[cfg(feature = "resources")]
pub(crate) struct ResourceRead<'a> {
    meta: RequestMeta<'a>,
    target: Target<'a>,
    responses: InputResponses<'a>,
    state: Option<Value<'a>>,
}

#[cfg(feature = "resources")]
impl<'a> ResourceRead<'a> {
    /// The request's `_meta`.
    pub(super) fn meta(&self) -> &RequestMeta<'a> {
        &self.meta
    }
}

/// Checks a `resources/read`'s params (its URI decodes into [`MAX_STR`] bytes).
#[cfg(feature = "resources")]
#[inline(never)]
pub(super) fn resources_read<'a>(
    meta: RequestMeta<'a>,
    params: Option<Value<'a>>,
) -> Result<ResourceRead<'a>, RpcError<'a>> {
    let params = params.ok_or(RpcError::InvalidParams("resources/read needs params"))?;
    let [uri, responses, state] = params.pick(["uri", "inputResponses", "requestState"]);
    let uri = uri.filter(|n| n.kind() == Kind::String);
    let uri = uri.ok_or(RpcError::InvalidParams("params.uri must be a string"))?;
    if uri.as_str(&mut [0u8; MAX_STR]).is_none() {
        return Err(RpcError::InvalidParams("params.uri is too long"));
    }
    let (responses, state) = mrtr_params(responses, state)?;
    let target = Target {
        method: "resources/read",
        name: uri,
        args: None,
        salient: None,
        answers_need_state: false,
    };
    Ok(ResourceRead {
        meta,
        target,
        responses,
        state,
    })
}

/// Runs a checked `resources/read` (like [`invoke_tool`]: the app's read may wait for its
/// store). `inv.meta` is `read`'s.
#[cfg(feature = "resources")]
pub(super) async fn invoke_read<'a, A: App>(
    inv: &mut Invocation<'_, 'a, '_, '_, A>,
    read: &ResourceRead<'a>,
) -> Result<(), RpcError<'a>> {
    let target = &read.target;
    let mut scratch = [0u8; MAX_STR];
    let uri = target.name.as_str(&mut scratch);
    let uri = uri.ok_or(RpcError::InvalidParams("params.uri is too long"))?;
    let eng = &mut *inv.eng;
    let lent = lend(
        &eng.keys,
        &eng.config,
        inv.cx,
        inv.meta.caps,
        target,
        read.state,
    );
    let lent = lent.map_err(|e| rejected(inv.note, e))?;
    let call = lent.call(target, read.responses);
    let reply = reply(
        &mut *inv.w,
        inv.id,
        &mut *inv.progress,
        inv.meta,
        &lent.sealer,
    );
    let ran = eng.app.read_resource(uri, &call, reply).await;
    match finish(inv.note, target, ran)? {
        ResultKind::Complete => cache_hints(inv.eng, inv.w),
        ResultKind::Private => {
            inv.w
                .key("ttlMs")
                .int(0)
                .key("cacheScope")
                .string("private");
        }
        ResultKind::InputRequired => {}
    }
    Ok(())
}

pub(super) fn complete<'a, A: App>(
    eng: &mut Engine<A>,
    id: Value<'a>,
    params: Option<Value<'a>>,
    now: u64,
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
        now,
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
