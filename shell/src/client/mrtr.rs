//! The client side of the red mark: requests with per-request `_meta`, and the MRTR loop that
//! answers every input request and retries with a new id, the same arguments, the
//! `inputResponses` and the `requestState` echoed byte for byte.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::form::Form;
use super::trace::trace;
use super::transport::{Outgoing, Transport, TransportError, PROTOCOL_VERSION};

/// How one question was answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Send this content.
    Accept(Map<String, Value>),
    /// The user said no.
    Decline,
    /// The user dismissed the whole operation.
    Cancel,
}

impl Reply {
    /// The `ElicitResult` sent back.
    pub fn to_json(&self) -> Value {
        match self {
            Reply::Accept(c) => json!({"action": "accept", "content": c}),
            Reply::Decline => json!({"action": "decline"}),
            Reply::Cancel => json!({"action": "cancel"}),
        }
    }
}

/// Why a call stopped short of a server's answer.
#[derive(Debug)]
pub enum Failure {
    /// The server broke the protocol (or we could not make sense of it).
    Protocol(String),
    /// The bytes did not get through.
    Transport(TransportError),
    /// A question needs an answer and nothing can give one.
    NeedInput(String),
    /// The command line answers a question wrongly.
    Usage(String),
    /// Still asking after this many rounds.
    TooManyRounds(usize, Vec<String>),
}

impl From<TransportError> for Failure {
    fn from(e: TransportError) -> Self {
        match e {
            TransportError::ServerRequest(m) => Failure::Protocol(m),
            e => Failure::Transport(e),
        }
    }
}

/// Answers the questions of an `InputRequiredResult`.
pub trait Answerer {
    /// Sees every question of a round before they are answered one by one.
    fn round(&mut self, questions: &[(String, Form)]) {
        let _ = questions;
    }

    /// Answers the form under `key`.
    fn answer(&mut self, key: &str, form: &Form) -> Result<Reply, Failure>;
}

/// A connection to one server: numbering, `_meta`, tracing.
pub struct Session<'t> {
    transport: &'t mut dyn Transport,
    next_id: u64,
}

#[derive(Serialize)]
struct Envelope<'a, P: Serialize> {
    jsonrpc: &'static str,
    id: u64,
    method: &'a str,
    params: P,
}

#[derive(Serialize)]
struct CallParams<'a> {
    name: &'a str,
    arguments: &'a Map<String, Value>,
    #[serde(rename = "inputResponses", skip_serializing_if = "Option::is_none")]
    input_responses: Option<&'a Map<String, Value>>,
    #[serde(rename = "requestState", skip_serializing_if = "Option::is_none")]
    request_state: Option<&'a RawValue>,
    #[serde(rename = "_meta")]
    meta: Value,
}

/// Just the raw `requestState` token of a response, to echo it byte for byte.
#[derive(Deserialize)]
struct StateProbe<'a> {
    #[serde(borrow)]
    result: Option<StateInResult<'a>>,
}

#[derive(Deserialize)]
struct StateInResult<'a> {
    #[serde(rename = "requestState", borrow)]
    request_state: Option<&'a RawValue>,
}

/// The `_meta` every request carries: version, the only capability this client can honour
/// (form elicitation), and who it is.
pub fn request_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "redmark", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// A response: the whole message, parsed, and its text.
pub struct Response {
    /// The message.
    pub msg: Value,
    /// Its raw text as received.
    pub text: String,
}

impl<'t> Session<'t> {
    /// A session over `transport`, numbering requests from 1.
    pub fn new(transport: &'t mut dyn Transport) -> Session<'t> {
        Session::resuming(transport, 1)
    }

    /// A session over `transport` whose first request has id `next_id` (one that goes on
    /// from another's requests).
    pub fn resuming(transport: &'t mut dyn Transport, next_id: u64) -> Session<'t> {
        Session { transport, next_id }
    }

    /// The id the next request gets.
    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// Sends one request whose params serialize from `params`; returns its response.
    fn send<P: Serialize>(
        &mut self,
        method: &str,
        name: Option<&str>,
        params: P,
    ) -> Result<Response, Failure> {
        let id = self.next_id;
        self.next_id += 1;
        let body = serde_json::to_string(&Envelope {
            jsonrpc: "2.0",
            id,
            method,
            params,
        })
        .map_err(|e| Failure::Protocol(format!("cannot encode the request: {e}")))?;
        trace("→", &body);
        let got = self.transport.exchange(&Outgoing {
            id,
            method,
            name,
            body: &body,
        })?;
        response(got)
    }

    /// Sends `method` with only `_meta` (and `extra` members) as params.
    pub fn request(
        &mut self,
        method: &str,
        extra: Map<String, Value>,
    ) -> Result<Response, Failure> {
        let mut params = extra;
        params.insert("_meta".into(), request_meta());
        self.send(method, None, Value::Object(params))
    }

    /// Calls a tool and runs the MRTR loop for at most `max_rounds` requests.
    /// [`Attempt::NotUnderstood`]: the first request was not understood as a 2026-07-28 one.
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments: &Map<String, Value>,
        answerer: &mut dyn Answerer,
        max_rounds: usize,
    ) -> Result<Attempt, Failure> {
        let mut responses: Option<Map<String, Value>> = None;
        let mut state: Option<Box<RawValue>> = None;
        let mut declined = false;
        let mut cancelled = false;
        let mut asked = Vec::new();
        for round in 1..=max_rounds.max(1) {
            let params = CallParams {
                name,
                arguments,
                input_responses: responses.as_ref(),
                request_state: state.as_deref(),
                meta: request_meta(),
            };
            let resp = match self.send("tools/call", Some(name), params) {
                Ok(r) => r,
                // Over HTTP a 2025-11-25 server refuses a request without a session (400).
                Err(Failure::Transport(e @ TransportError::Protocol(_))) if round == 1 => {
                    return Ok(Attempt::NotUnderstood(NotUnderstood::Refused(e)));
                }
                Err(e) => return Err(e),
            };
            if let Some(err) = resp.msg.get("error") {
                // A server that did not understand a 2026-07-28 request may be an older one
                // (spec §7): the caller may try another revision.
                if round == 1 && !is_modern_error(err) {
                    return Ok(Attempt::NotUnderstood(NotUnderstood::Error(err.clone())));
                }
                return Ok(Attempt::Done(Called {
                    outcome: Outcome::Error(err.clone()),
                    declined,
                    cancelled,
                    rounds: round,
                }));
            }
            let Some(result) = resp.msg.get("result").filter(|r| r.is_object()) else {
                return Err(Failure::Protocol(format!(
                    "the response has neither result nor error: {}",
                    resp.text
                )));
            };
            match result.get("resultType") {
                // Only servers older than 2026-07-28 leave it out; their results are final.
                None => {}
                Some(Value::String(t)) if t == "complete" => {}
                Some(Value::String(t)) if t == "input_required" => {
                    let (questions, next_state) = read_input_required(result, &resp.text)?;
                    asked = questions.iter().map(|(k, _)| k.clone()).collect();
                    if round == max_rounds {
                        return Err(Failure::TooManyRounds(max_rounds, asked));
                    }
                    let mut answers = Map::new();
                    answerer.round(&questions);
                    for (key, form) in &questions {
                        let reply = answerer.answer(key, form)?;
                        declined |= reply == Reply::Decline;
                        cancelled |= reply == Reply::Cancel;
                        answers.insert(key.clone(), reply.to_json());
                    }
                    responses = if questions.is_empty() {
                        None
                    } else {
                        Some(answers)
                    };
                    state = next_state;
                    continue;
                }
                Some(other) => {
                    return Err(Failure::Protocol(format!(
                        "unknown resultType {other}: a client must treat it as invalid"
                    )));
                }
            }
            if result.get("content").is_some_and(|c| !c.is_array()) {
                return Err(Failure::Protocol(
                    "the result's content is not an array".into(),
                ));
            }
            return Ok(Attempt::Done(Called {
                outcome: Outcome::Complete(result.clone()),
                declined,
                cancelled,
                rounds: round,
            }));
        }
        Err(Failure::TooManyRounds(max_rounds, asked))
    }
}

/// The response among the messages an exchange returned (the last), checked to be JSON-RPC 2.0.
pub(crate) fn response(got: Vec<String>) -> Result<Response, Failure> {
    let text = got
        .into_iter()
        .last()
        .ok_or(Failure::Transport(TransportError::Closed))?;
    let msg: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::Protocol(format!("the response is not JSON ({e}): {text}")))?;
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Failure::Protocol(format!(
            "the response is not JSON-RPC 2.0: {text}"
        )));
    }
    Ok(Response { msg, text })
}

/// What a tool call came to.
#[derive(Debug)]
pub struct Called {
    /// The server's final word.
    pub outcome: Outcome,
    /// Whether any question was declined on the way.
    pub declined: bool,
    /// Whether any question was cancelled on the way.
    pub cancelled: bool,
    /// Requests sent.
    pub rounds: usize,
}

/// What [`Session::call_tool`] came to.
#[derive(Debug)]
pub enum Attempt {
    /// The server understood the call; this is where it ended.
    Done(Called),
    /// The first request was not understood as a 2026-07-28 one: the server may speak an older
    /// revision (spec §7).
    NotUnderstood(NotUnderstood),
}

/// How the first `tools/call` was not understood.
#[derive(Debug)]
pub enum NotUnderstood {
    /// Refused below JSON-RPC (over HTTP, a 2025-11-25 server answers a request without a
    /// session with 400).
    Refused(TransportError),
    /// A JSON-RPC error no 2026-07-28 server would send for it.
    Error(Value),
}

impl NotUnderstood {
    /// What the call came to as a 2026-07-28 call, when the server speaks no older revision
    /// (or none is tried).
    pub fn into_final(self) -> Result<Called, Failure> {
        match self {
            NotUnderstood::Refused(e) => Err(Failure::Transport(e)),
            NotUnderstood::Error(err) => Ok(Called {
                outcome: Outcome::Error(err),
                declined: false,
                cancelled: false,
                rounds: 1,
            }),
        }
    }
}

/// The server's final word on a call.
#[derive(Debug)]
pub enum Outcome {
    /// A complete `CallToolResult`.
    Complete(Value),
    /// A JSON-RPC error object.
    Error(Value),
}

type Questions = Vec<(String, Form)>;

/// Whether a JSON-RPC error is one only a 2026-07-28 server sends (then it is no reason to
/// try 2025-11-25): a version, header or capability error, or one naming supported versions.
pub(crate) fn is_modern_error(err: &Value) -> bool {
    let code = err.get("code").and_then(Value::as_i64);
    let data = err.get("data");
    matches!(code, Some(-32022..=-32020))
        || data.is_some_and(|d| d.get("supportedVersions").is_some())
        || data.is_some_and(|d| d.get("requiredCapabilities").is_some())
}

/// Reads an `InputRequiredResult`: every question (all checked before any is asked) and the
/// raw `requestState` token to echo.
fn read_input_required(
    result: &Value,
    text: &str,
) -> Result<(Questions, Option<Box<RawValue>>), Failure> {
    let probe: StateProbe<'_> = serde_json::from_str(text)
        .map_err(|e| Failure::Protocol(format!("unreadable InputRequiredResult: {e}")))?;
    let state = probe.result.and_then(|r| r.request_state);
    if let Some(s) = state {
        if !s.get().starts_with('"') {
            return Err(Failure::Protocol(format!(
                "requestState is not a string: {}",
                s.get()
            )));
        }
    }
    let state = state.map(RawValue::to_owned);
    let mut questions = Vec::new();
    match result.get("inputRequests") {
        None => {}
        Some(Value::Object(reqs)) => {
            for (key, r) in reqs {
                let method = r.get("method").and_then(Value::as_str).unwrap_or("");
                let params = r.get("params").cloned().unwrap_or(Value::Null);
                match method {
                    "elicitation/create" => {
                        match params.get("mode").and_then(Value::as_str) {
                            None | Some("form") => {}
                            Some(mode) => {
                                return Err(Failure::Protocol(format!(
                                    "input request '{key}' is an elicitation in {mode} mode, which this client did not \
                                     declare (it declares form only)"
                                )))
                            }
                        }
                        let form = Form::parse(&params)
                            .map_err(|e| Failure::Protocol(format!("the form of input request '{key}' is malformed: {e}")))?;
                        questions.push((key.clone(), form));
                    }
                    "" => return Err(Failure::Protocol(format!("input request '{key}' has no method"))),
                    other => {
                        return Err(Failure::Protocol(format!(
                            "input request '{key}' is {other}, which this client did not declare (it declares \
                             elicitation in form mode only)"
                        )))
                    }
                }
            }
        }
        Some(_) => return Err(Failure::Protocol("inputRequests is not an object".into())),
    }
    if questions.is_empty() && state.is_none() {
        return Err(Failure::Protocol(
            "an InputRequiredResult with neither inputRequests nor requestState".into(),
        ));
    }
    Ok((questions, state))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::transport::in_process::InProcess;

    struct Pick(&'static str);

    impl Answerer for Pick {
        fn answer(&mut self, key: &str, form: &Form) -> Result<Reply, Failure> {
            assert_eq!(key, "room");
            assert!(form.message.contains("the big room"));
            match self.0 {
                "decline" => Ok(Reply::Decline),
                "cancel" => Ok(Reply::Cancel),
                room => {
                    let mut c = Map::new();
                    c.insert("room_id".into(), json!(room));
                    Ok(Reply::Accept(c))
                }
            }
        }
    }

    /// The end of a call the in-process server understood.
    fn done(a: Result<Attempt, Failure>) -> Called {
        match a.unwrap() {
            Attempt::Done(c) => c,
            other => panic!("{other:?}"),
        }
    }

    fn args() -> Map<String, Value> {
        json!({"day": "2099-09-17", "hour": 9, "room_hint": "the big room"})
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn books_after_one_question() {
        let mut t = InProcess::scratch(redmark_core::booking::DEFAULT_SITE).unwrap();
        let mut s = Session::new(&mut t);
        let c = done(s.call_tool("book_room", &args(), &mut Pick("studio-b"), 10));
        assert_eq!(c.rounds, 2);
        let Outcome::Complete(r) = c.outcome else {
            panic!("{:?}", c.outcome)
        };
        assert_eq!(r["structuredContent"]["booking"]["room_id"], "studio-b");
        assert!(!c.declined && !c.cancelled);
    }

    #[test]
    fn decline_and_cancel_are_reported() {
        let mut t = InProcess::scratch(redmark_core::booking::DEFAULT_SITE).unwrap();
        let mut s = Session::new(&mut t);
        let c = done(s.call_tool("book_room", &args(), &mut Pick("decline"), 10));
        assert!(c.declined);
        let c = done(s.call_tool("book_room", &args(), &mut Pick("cancel"), 10));
        assert!(c.cancelled);
    }

    /// An error no 2026-07-28 server would send for a first call is handed back, not final:
    /// the caller decides whether an older revision is worth a try.
    #[test]
    fn a_first_error_of_an_older_kind_is_not_understood() {
        let mut t = InProcess::scratch(redmark_core::booking::DEFAULT_SITE).unwrap();
        let mut s = Session::new(&mut t);
        let a = s.call_tool("no_such_tool", &args(), &mut Pick("studio-b"), 10);
        let Ok(Attempt::NotUnderstood(n @ NotUnderstood::Error(_))) = a else {
            panic!("{a:?}")
        };
        assert_eq!(s.next_id(), 2);
        let c = n.into_final().unwrap();
        assert!(
            matches!(c.outcome, Outcome::Error(_)) && c.rounds == 1,
            "{c:?}"
        );
    }

    #[test]
    fn rounds_are_bounded() {
        let mut t = InProcess::scratch(redmark_core::booking::DEFAULT_SITE).unwrap();
        let mut s = Session::new(&mut t);
        let e = s
            .call_tool("book_room", &args(), &mut Pick("studio-b"), 1)
            .unwrap_err();
        assert!(matches!(e, Failure::TooManyRounds(1, ref k) if k == &["room"]));
    }

    #[test]
    fn state_is_echoed_byte_for_byte() {
        let text = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"a\u002fb"}}"#;
        let v: Value = serde_json::from_str(text).unwrap();
        let (q, s) = read_input_required(&v["result"], text).unwrap();
        assert!(q.is_empty());
        assert_eq!(s.unwrap().get(), r#""a\u002fb""#);
    }

    #[test]
    fn undeclared_input_requests_are_protocol_errors() {
        let text = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"s":{"method":"sampling/createMessage","params":{}}}}}"#;
        let v: Value = serde_json::from_str(text).unwrap();
        let e = read_input_required(&v["result"], text).unwrap_err();
        assert!(matches!(e, Failure::Protocol(ref m) if m.contains("sampling/createMessage")));
    }
}
