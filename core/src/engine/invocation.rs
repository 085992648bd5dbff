//! The methods that run app code: `tools/call`, `prompts/get`, `resources/read` (through one
//! [`invoke`]: state verified, [`Call`] and [`Reply`] lent, errors mapped) and
//! `completion/complete`.

use super::error::RpcError;
use super::lists::{cache_hints, open_result};
use super::reply::{Answered, Progress, Sealer};
use super::{App, Context, Engine, Note};
use super::{Call, CompletionRef, CompletionRequest, Completions, Reply};
use crate::limits::MAX_STR;
use crate::mrtr::InputResponses;
use crate::seal::{self, Binding, Origin};
use crate::wire::json::{Kind, Value};
use crate::wire::meta::RequestMeta;
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

/// The app code an [`invoke`] runs.
enum Handler<'u, T> {
    /// [`App::call_tool`] (the one that may wait for its store).
    Tool(T),
    /// [`App::get_prompt`] of this index.
    Prompt(usize),
    /// [`App::read_resource`] of this (decoded) URI.
    Resource(&'u str),
}

/// Verifies any `requestState`, lends the handler a [`Call`] and a [`Reply`], and maps its
/// error. Sealing, capability checks and progress live here, once for every method.
async fn invoke<'a, A: App>(
    inv: &mut Invocation<'_, 'a, '_, '_, A>,
    target: Target<'a>,
    responses: InputResponses<'a>,
    state: Option<Value<'a>>,
    handler: Handler<'_, A::Tool>,
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
    let app = &mut eng.app;
    let ran = match handler {
        Handler::Tool(tool) => app.call_tool(tool, &call, reply).await,
        Handler::Prompt(index) => app.get_prompt(index, &call, reply),
        Handler::Resource(uri) => app.read_resource(uri, &call, reply),
    };
    match ran {
        Ok(done) => Ok(done.0),
        Err(e) => {
            *inv.note = e.note().or(*inv.note);
            let uri = (target.method == "resources/read").then_some(target.name);
            Err(e.rpc(uri))
        }
    }
}

pub(super) async fn tools_call<'a, A: App>(
    inv: &mut Invocation<'_, 'a, '_, '_, A>,
    params: Option<Value<'a>>,
) -> Result<(), RpcError<'a>> {
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
    invoke(inv, target, responses, state, Handler::Tool(entry.tool)).await?;
    Ok(())
}

pub(super) async fn prompts_get<'a, A: App>(
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
    invoke(inv, target, responses, state, Handler::Prompt(index)).await?;
    Ok(())
}

pub(super) async fn resources_read<'a, A: App>(
    inv: &mut Invocation<'_, 'a, '_, '_, A>,
    params: Option<Value<'a>>,
) -> Result<(), RpcError<'a>> {
    let params = params.ok_or(RpcError::InvalidParams("resources/read needs params"))?;
    let [uri, responses, state] = params.pick(["uri", "inputResponses", "requestState"]);
    let uri = uri.filter(|n| n.kind() == Kind::String);
    let uri = uri.ok_or(RpcError::InvalidParams("params.uri must be a string"))?;
    let mut scratch = [0u8; MAX_STR];
    let decoded = uri.as_str(&mut scratch);
    let decoded = decoded.ok_or(RpcError::InvalidParams("params.uri is too long"))?;
    let (responses, state) = mrtr_params(responses, state)?;
    let target = Target {
        method: "resources/read",
        name: uri,
        args: None,
        salient: None,
        answers_need_state: false,
    };
    let answered = invoke(inv, target, responses, state, Handler::Resource(decoded)).await?;
    if answered == Answered::Complete {
        cache_hints(inv.eng, inv.w);
    }
    Ok(())
}

pub(super) fn complete<'a, A: App>(
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
