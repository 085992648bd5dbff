//! One connection's (or HTTP session's) dual-era state, sans-IO: feed it client lines, core
//! answers and the time; it returns [`Action`]s. It never reads a clock or touches a socket.
//!
//! Before an `initialize` every line goes to the core unchanged (2026-07-28 rules). An
//! `initialize` without 2026-07-28 `_meta` makes the session legacy: from then on requests
//! without that `_meta` are translated for the core and their answers back, `ping` is answered
//! here, and a `tools/call` the core answers with `input_required` is bridged (module doc of
//! [`super`]). Requests carrying 2026-07-28 `_meta` always go to the core unchanged.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use redmark_core::limits::MAX_MESSAGE;
use redmark_core::wire::meta::{KEY_CAPS, KEY_VERSION};
use serde_json::{json, Map, Value};

use super::rpc::{error, is_modern, key_of, names_initialize, result, tool_error};
use super::shape::{legacy_result, refuses_subscriptions, server_capabilities};
use super::{
    CORE_VERSION, LEGACY_VERSIONS, MAX_CALLS_PER_SESSION, MAX_QUESTIONS_PER_CALL, MAX_ROUNDS,
};

/// What the caller must do next.
#[derive(Debug, PartialEq)]
pub enum Action {
    /// Write `line` (one JSON-RPC message, no newline) to the client. `reply_to` is the id (as
    /// JSON text) of the client request it belongs to; `last` marks that request's answer.
    Send {
        line: Vec<u8>,
        reply_to: Option<String>,
        last: bool,
    },
    /// Run `line` through the core engine and hand its answer to [`Session::core_answer`]
    /// with this `ticket`. `reply_to` as for `Send` (for routing the core's own lines).
    Core {
        ticket: u64,
        line: Vec<u8>,
        reply_to: Option<String>,
    },
}

/// What a ticket's core answer is for.
enum Ticket {
    /// Sent as the core wrote it (2026-07-28 request, or before `initialize`).
    Raw { reply_to: Option<String> },
    /// A legacy request: the answer is translated back.
    Legacy { reply_to: String },
    /// A bridged `tools/call` (by call number).
    Call(u64),
}

/// A legacy `tools/call` being bridged.
struct Call {
    /// Bridge-internal number.
    n: u64,
    /// The client's request id.
    id: Value,
    /// The client's `params` (name, arguments), without `_meta`.
    params: Map<String, Value>,
    /// The sealed state of the current round.
    state: Value,
    rounds: u32,
    /// Questions not yet asked: `(inputRequests key, elicitation/create params)`.
    queue: VecDeque<(String, Value)>,
    /// The question on the wire: `(our request id, key, deadline)`.
    asked: Option<(String, String, Instant)>,
    /// Answers collected this round.
    answers: Map<String, Value>,
    /// The core has this call (an answer is awaited under a ticket).
    at_core: bool,
    /// Questions are held until `notifications/initialized`, at most until this time.
    held_until: Option<Instant>,
}

/// The legacy half, after `initialize`.
struct Legacy {
    /// `capabilities` from `initialize`, minus `tasks`, as the core's `clientCapabilities`.
    caps: Value,
    /// `notifications/initialized` arrived (questions wait for it).
    initialized: bool,
}

/// One connection's dual-era state.
pub struct Session {
    legacy: Option<Legacy>,
    tickets: Vec<(u64, Ticket)>,
    calls: Vec<Call>,
    next_ticket: u64,
    next_call: u64,
    next_question: u64,
    /// How long a question may wait ([`super::question_wait`]).
    wait: Duration,
    /// The app serves resources (`initialize` says so: the MCP App's `ui://` document).
    resources: bool,
}

#[path = "session_new.rs"]
mod new;

impl Session {
    /// Whether an `initialize` made this session legacy.
    pub fn is_legacy(&self) -> bool {
        self.legacy.is_some()
    }

    /// Bridged `tools/call`s in flight (at the core or waiting for answers).
    pub fn calls_in_flight(&self) -> usize {
        self.calls.len()
    }

    /// Whether a request with this id is still being answered.
    fn in_flight(&self, id: &Value) -> bool {
        let key = key_of(id);
        self.calls.iter().any(|c| &c.id == id)
            || self.tickets.iter().any(|(_, t)| match t {
                Ticket::Legacy { reply_to } => *reply_to == key,
                Ticket::Raw { reply_to } => reply_to.as_deref() == Some(key.as_str()),
                Ticket::Call(_) => false,
            })
    }

    /// The earliest time [`Session::tick`] has something to do.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.calls.iter().filter_map(Call::deadline).min()
    }

    /// Whether `line` needs this session: always once it is a 2025-11-25 session; before, only
    /// a line naming `initialize` can change anything (the rest skip the JSON parse, and a
    /// transport may run them on its fast path).
    pub fn takes(&self, line: &[u8]) -> bool {
        self.legacy.is_some() || names_initialize(line)
    }

    /// Takes one client line.
    pub fn client_line(&mut self, line: &[u8], now: Instant) -> Vec<Action> {
        let raw = |s: &mut Session, reply_to| vec![s.core(line.to_vec(), Ticket::Raw { reply_to })];
        if !self.takes(line) {
            return raw(self, None);
        }
        let Ok(Value::Object(mut msg)) = serde_json::from_slice::<Value>(line) else {
            return raw(self, None);
        };
        let id = msg.get("id").cloned();
        let reply_to = id.as_ref().map(key_of);
        let Some(method) = msg.get("method").and_then(Value::as_str).map(str::to_owned) else {
            // A response: only to a question of ours.
            if let Some(id) = id.filter(|_| msg.contains_key("result") || msg.contains_key("error"))
            {
                if let Some(a) = self.answer(&id, &msg, now) {
                    return a;
                }
                if self.is_legacy() {
                    tracing::info!("legacy: ignored a response to id {id}, not a pending question");
                    return Vec::new();
                }
            }
            return raw(self, reply_to);
        };
        let msg_v = Value::Object(msg.clone());
        if is_modern(&msg_v) {
            return raw(self, reply_to);
        }
        if method == "initialize" {
            return match id {
                Some(id) => vec![self.initialize(&id, msg.get("params"))],
                None => Vec::new(),
            };
        }
        if self.legacy.is_none() {
            return raw(self, reply_to);
        }
        let Some(id) = id else {
            return self.notification(&method, msg.get("params"), now);
        };
        if self.in_flight(&id) {
            // JSON-RPC ids are unique among a sender's requests in flight: a second one would
            // cross the answers (its stream would get the first call's result).
            let e = error(&id, -32600, "Invalid request: this id is already in flight");
            return vec![send(e, true, &id)];
        }
        if method == "ping" {
            return vec![send(result(&id, json!({})), true, &id)];
        }
        if let Some(why) = refuses_subscriptions(&method) {
            return vec![send(error(&id, -32601, why), true, &id)];
        }
        // Translate for the core: the session's version and capabilities in `_meta`.
        let mut params = match msg.remove("params") {
            Some(Value::Object(p)) => p,
            None | Some(Value::Null) => Map::new(),
            Some(_) => return vec![send(error(&id, -32602, "Invalid params"), true, &id)],
        };
        params.remove("task");
        if method == "tools/call" {
            if self.calls.len() >= MAX_CALLS_PER_SESSION {
                let e = error(&id, -32600, "Too many tool calls waiting for answers");
                return vec![send(e, true, &id)];
            }
            let mut own = params.clone();
            own.remove("_meta");
            let n = self.next_call;
            self.next_call += 1;
            self.calls.push(Call {
                n,
                id: id.clone(),
                params: own,
                state: Value::Null,
                rounds: 0,
                queue: VecDeque::new(),
                asked: None,
                answers: Map::new(),
                at_core: true,
                held_until: None,
            });
            return vec![self.for_core(&id, &method, params, Ticket::Call(n))];
        }
        let t = Ticket::Legacy {
            reply_to: key_of(&id),
        };
        vec![self.for_core(&id, &method, params, t)]
    }

    /// Takes the core's answer (its lines joined by `\n`) to `ticket`.
    pub fn core_answer(&mut self, ticket: u64, bytes: &[u8], now: Instant) -> Vec<Action> {
        let Some(at) = self.tickets.iter().position(|t| t.0 == ticket) else {
            return Vec::new();
        };
        let (_, t) = self.tickets.swap_remove(at);
        let lines = bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty());
        let reply_to = match &t {
            Ticket::Raw { reply_to } => reply_to.clone(),
            Ticket::Legacy { reply_to } => Some(reply_to.clone()),
            Ticket::Call(n) => match self.calls.iter().find(|c| c.n == *n) {
                Some(c) => Some(key_of(&c.id)),
                // The client cancelled the call meanwhile: nothing is sent.
                None => return Vec::new(),
            },
        };
        let mut out = Vec::new();
        let mut answered = false;
        for line in lines {
            let parsed = serde_json::from_slice::<Value>(line).ok();
            let is_response = parsed
                .as_ref()
                .is_some_and(|v| v.get("result").is_some() || v.get("error").is_some());
            answered |= is_response;
            match (&t, parsed) {
                (Ticket::Call(n), Some(v)) if is_response => {
                    out.extend(self.call_answer(*n, v, now))
                }
                (Ticket::Legacy { .. }, Some(mut v)) if is_response => {
                    if let Some(r) = v.get_mut("result") {
                        legacy_result(r);
                    }
                    out.push(Action::Send {
                        line: v.to_string().into_bytes(),
                        reply_to: reply_to.clone(),
                        last: true,
                    });
                }
                _ => out.push(Action::Send {
                    line: line.to_vec(),
                    reply_to: reply_to.clone(),
                    last: is_response,
                }),
            }
        }
        if !answered {
            // The core answered a request with nothing: end it rather than hold its call (and
            // its HTTP stream) open for ever.
            let id = match &t {
                Ticket::Call(n) => self.take_call(*n).map(|c| c.id),
                Ticket::Legacy { reply_to } => serde_json::from_str(reply_to).ok(),
                Ticket::Raw { .. } => None,
            };
            if let Some(id) = id {
                out.push(send(error(&id, -32603, "Internal error"), true, &id));
            }
        }
        out
    }

    /// Gives up every question whose wait has passed: the question is cancelled and its call
    /// ends with a tool error (nothing was booked: the core only books on an accepted answer).
    pub fn tick(&mut self, now: Instant) -> Vec<Action> {
        let mut out = Vec::new();
        let expired: Vec<u64> = self
            .calls
            .iter()
            .filter(|c| c.deadline().is_some_and(|d| d <= now))
            .map(|c| c.n)
            .collect();
        for n in expired {
            if let Some(c) = self.take_call(n) {
                out.extend(cancel_question(&c, "the question was not answered in time"));
                let text = "The question was not answered in time; nothing was done.";
                out.push(send(result(&c.id, tool_error(text)), true, &c.id));
            }
        }
        out
    }

    fn core(&mut self, line: Vec<u8>, t: Ticket) -> Action {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let reply_to = match &t {
            Ticket::Raw { reply_to } => reply_to.clone(),
            Ticket::Legacy { reply_to } => Some(reply_to.clone()),
            Ticket::Call(n) => self.calls.iter().find(|c| c.n == *n).map(|c| key_of(&c.id)),
        };
        self.tickets.push((ticket, t));
        Action::Core {
            ticket,
            line,
            reply_to,
        }
    }

    /// A legacy request for the core, with the 2026-07-28 `_meta` added.
    fn for_core(
        &mut self,
        id: &Value,
        method: &str,
        mut params: Map<String, Value>,
        t: Ticket,
    ) -> Action {
        let caps = self.legacy.as_ref().map_or(json!({}), |l| l.caps.clone());
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        if let Some(m) = meta.as_object_mut() {
            m.insert(KEY_VERSION.into(), CORE_VERSION.into());
            m.insert(KEY_CAPS.into(), caps);
        }
        let line = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}).to_string();
        if line.len() > MAX_MESSAGE {
            if let Ticket::Call(n) = t {
                self.take_call(n);
            }
            return send(
                error(id, -32600, "Invalid request: message too large"),
                true,
                id,
            );
        }
        self.core(line.into_bytes(), t)
    }

    /// Answers `initialize`: 2025-11-25 version negotiation, and the session becomes legacy.
    fn initialize(&mut self, id: &Value, params: Option<&Value>) -> Action {
        if self.legacy.is_some() {
            return send(
                error(id, -32600, "Invalid request: already initialized"),
                true,
                id,
            );
        }
        let Some(p) = params.filter(|p| p.is_object()) else {
            return send(
                error(id, -32602, "Invalid params: initialize needs params"),
                true,
                id,
            );
        };
        let asked = p.get("protocolVersion").and_then(Value::as_str);
        let version = LEGACY_VERSIONS
            .iter()
            .find(|v| Some(**v) == asked)
            .unwrap_or(&LEGACY_VERSIONS[0]);
        let mut caps = p.get("capabilities").cloned().unwrap_or(json!({}));
        if let Some(c) = caps.as_object_mut() {
            c.remove("tasks");
        } else {
            caps = json!({});
        }
        self.legacy = Some(Legacy {
            caps,
            initialized: false,
        });
        let r = json!({
            "protocolVersion": version,
            "capabilities": server_capabilities(self.resources),
            "serverInfo": {"name": "redmark", "version": env!("CARGO_PKG_VERSION")},
        });
        send(result(id, r), true, id)
    }

    /// A legacy notification.
    fn notification(&mut self, method: &str, params: Option<&Value>, now: Instant) -> Vec<Action> {
        match method {
            "notifications/initialized" => {
                if let Some(l) = &mut self.legacy {
                    l.initialized = true;
                }
                let waiting: Vec<u64> = self
                    .calls
                    .iter()
                    .filter(|c| c.asked.is_none() && !c.at_core && !c.queue.is_empty())
                    .map(|c| c.n)
                    .collect();
                waiting
                    .into_iter()
                    .flat_map(|n| self.ask_next(n, now))
                    .collect()
            }
            "notifications/cancelled" => {
                let Some(req) = params.and_then(|p| p.get("requestId")) else {
                    return Vec::new();
                };
                let Some(n) = self.calls.iter().find(|c| &c.id == req).map(|c| c.n) else {
                    return Vec::new();
                };
                let mut out = match self.take_call(n) {
                    Some(c) => cancel_question(&c, "tools/call was cancelled"),
                    None => Vec::new(),
                };
                // No answer follows for a cancelled call: the question's cancellation is the
                // last line of its stream (an HTTP SSE stream ends there).
                if let Some(Action::Send { last, .. }) = out.last_mut() {
                    *last = true;
                }
                out
            }
            _ => Vec::new(),
        }
    }

    fn take_call(&mut self, n: u64) -> Option<Call> {
        let at = self.calls.iter().position(|c| c.n == n)?;
        Some(self.calls.swap_remove(at))
    }

    fn call_mut(&mut self, n: u64) -> Option<&mut Call> {
        self.calls.iter_mut().find(|c| c.n == n)
    }

    /// The core answered bridged call `n` with response `v`.
    fn call_answer(&mut self, n: u64, mut v: Value, now: Instant) -> Vec<Action> {
        let initialized = self.legacy.as_ref().is_some_and(|l| l.initialized);
        let wait = self.wait;
        let Some(call) = self.call_mut(n) else {
            return Vec::new();
        };
        call.at_core = false;
        let id = call.id.clone();
        let input_required =
            v.pointer("/result/resultType").and_then(Value::as_str) == Some("input_required");
        if !input_required {
            self.take_call(n);
            if let Some(r) = v.get_mut("result") {
                legacy_result(r);
            }
            return vec![send(v.to_string().into_bytes(), true, &id)];
        }
        call.rounds += 1;
        let give_up = |s: &mut Session, text: &str| {
            s.take_call(n);
            vec![send(result(&id, tool_error(text)), true, &id)]
        };
        if call.rounds > MAX_ROUNDS {
            return give_up(self, "The tool kept asking; nothing was done.");
        }
        let requests = v
            .pointer("/result/inputRequests")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if requests.is_empty() || requests.len() > MAX_QUESTIONS_PER_CALL {
            return give_up(
                self,
                "The tool asked too many questions at once; nothing was done.",
            );
        }
        let mut queue = VecDeque::new();
        for (key, req) in requests {
            if req.get("method").and_then(Value::as_str) != Some("elicitation/create") {
                return give_up(
                    self,
                    "The tool needs a kind of input this 2025-11-25 session cannot give; nothing was done.",
                );
            }
            queue.push_back((key, req.get("params").cloned().unwrap_or(json!({}))));
        }
        call.state = v
            .pointer("/result/requestState")
            .cloned()
            .unwrap_or(Value::Null);
        call.queue = queue;
        call.answers = Map::new();
        if initialized {
            self.ask_next(n, now)
        } else {
            call.held_until = Some(now + wait);
            Vec::new()
        }
    }

    /// Pushes call `n`'s next question, or retries the core when all are answered.
    fn ask_next(&mut self, n: u64, now: Instant) -> Vec<Action> {
        let qid = format!("rm-{}", self.next_question);
        let Some(call) = self.calls.iter_mut().find(|c| c.n == n) else {
            return Vec::new();
        };
        let id = call.id.clone();
        call.held_until = None;
        if let Some((key, mut params)) = call.queue.pop_front() {
            self.next_question += 1;
            // 2025-11-25 URL-mode elicitations carry an id of the server's; the bridge's own
            // request id serves (2026-07-28 has none).
            if let Some(p) = params.as_object_mut() {
                if p.get("mode").and_then(Value::as_str) == Some("url") {
                    p.entry("elicitationId")
                        .or_insert_with(|| qid.clone().into());
                }
            }
            let req =
                json!({"jsonrpc":"2.0","id":qid,"method":"elicitation/create","params":params});
            call.asked = Some((qid, key, now + self.wait));
            return vec![send(req.to_string().into_bytes(), false, &id)];
        }
        call.asked = None;
        call.at_core = true;
        let mut params = call.params.clone();
        params.insert(
            "inputResponses".into(),
            Value::Object(std::mem::take(&mut call.answers)),
        );
        params.insert("requestState".into(), call.state.clone());
        vec![self.for_core(&id, "tools/call", params, Ticket::Call(n))]
    }

    /// A client response: the answer to one of our questions, if it is one.
    fn answer(
        &mut self,
        id: &Value,
        msg: &Map<String, Value>,
        now: Instant,
    ) -> Option<Vec<Action>> {
        let qid = id.as_str()?;
        let call = self
            .calls
            .iter_mut()
            .find(|c| c.asked.as_ref().is_some_and(|a| a.0 == qid))?;
        let (_, key, _) = call.asked.take()?;
        let answer = match msg.get("result") {
            Some(r @ Value::Object(_)) => r.clone(),
            // An error (or a malformed result) means the client would not answer: cancel.
            _ => json!({"action":"cancel"}),
        };
        call.answers.insert(key, answer);
        let n = call.n;
        Some(self.ask_next(n, now))
    }
}

impl Call {
    /// When the bridge gives this call up unless something happens first.
    fn deadline(&self) -> Option<Instant> {
        self.asked.as_ref().map(|a| a.2).or(self.held_until)
    }
}

/// A `Send` of `line` that belongs to client request `id`.
fn send(line: Vec<u8>, last: bool, id: &Value) -> Action {
    Action::Send {
        line,
        reply_to: Some(key_of(id)),
        last,
    }
}

/// Cancels `call`'s question on the wire, if one is.
fn cancel_question(call: &Call, reason: &str) -> Vec<Action> {
    let Some((qid, _, _)) = &call.asked else {
        return Vec::new();
    };
    let n = json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":qid,"reason":reason}});
    vec![send(n.to_string().into_bytes(), false, &call.id)]
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
