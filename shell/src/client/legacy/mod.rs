//! `redmark call` against a 2025-11-25 server (spec 2026-07-28 §7, client side): when a
//! 2026-07-28 `tools/call` is not understood (a JSON-RPC error that is not a 2026-07-28 one, or
//! over HTTP a refusal without one) and `server/discover` gets no DiscoverResult, the client
//! opens a 2025-11-25 session (`initialize`, `notifications/initialized`; over HTTP the
//! `Mcp-Session-Id` it is given, `DELETE` at the end), calls the tool again without `_meta`,
//! and answers each `elicitation/create` the server pushes with the same
//! [`Answerer`] (terminal form or command-line flags). A pushed question has no key: the n-th
//! of the call is named `qN` (`--decline q1`); `--answer FIELD=VALUE` answers it by field.

mod bridge;
mod http;
mod lines;

pub use bridge::Bridge;
pub use http::HttpSessions;

use serde_json::{json, Map, Value};

use super::form::Form;
use super::mrtr::{
    is_modern_error, response, Answerer, Called, Failure, Outcome, Reply, Response, Session,
};
use super::trace::trace;
use super::transport::{Outgoing, TransportError};
use bridge::{Serve, LEGACY_VERSION};

/// Probes the server behind `bridge` and, if it speaks 2025-11-25, calls `name` in a
/// 2025-11-25 session; request ids go on from `next_id`. `Ok(None)`: it is not such a server
/// (the caller reports what it got before).
pub fn call(
    bridge: &mut dyn Bridge,
    next_id: u64,
    name: &str,
    arguments: &Map<String, Value>,
    answerer: &mut dyn Answerer,
) -> Result<Option<Called>, Failure> {
    let mut probe = Session::resuming(&mut *bridge, next_id);
    let probed = probe.request("server/discover", Map::new());
    let mut legacy = Legacy {
        next_id: probe.next_id(),
        bridge,
    };
    legacy.call(probed, name, arguments, answerer)
}

/// A 2025-11-25 session being opened over a bridge.
struct Legacy<'b> {
    bridge: &'b mut dyn Bridge,
    next_id: u64,
}

impl Legacy<'_> {
    /// [`call`], once `server/discover` has been `probed`.
    fn call(
        &mut self,
        probed: Result<Response, Failure>,
        name: &str,
        arguments: &Map<String, Value>,
        answerer: &mut dyn Answerer,
    ) -> Result<Option<Called>, Failure> {
        // A 2026-07-28 server answers server/discover; then the first error stands.
        match probed {
            Ok(r) if r.msg.get("result").is_some() => return Ok(None),
            Ok(r) if r.msg.get("error").is_some_and(is_modern_error) => return Ok(None),
            Ok(_) | Err(Failure::Transport(TransportError::Protocol(_))) => {}
            Err(_) => return Ok(None),
        }
        let init = json!({
            "protocolVersion": LEGACY_VERSION,
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "redmark", "version": env!("CARGO_PKG_VERSION")},
        });
        let mut refuse = |_: &Value| None;
        let Ok(r) = self.send_legacy("initialize", init, &mut refuse) else {
            return Ok(None);
        };
        let Some(version) = r
            .msg
            .pointer("/result/protocolVersion")
            .and_then(Value::as_str)
        else {
            return Ok(None);
        };
        if version != LEGACY_VERSION {
            return Err(Failure::Protocol(format!(
                "the server offers protocol {version}; this client speaks 2026-07-28 and {LEGACY_VERSION}"
            )));
        }
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"}).to_string();
        trace("→", &note);
        self.bridge.notify(&note)?;
        let mut pushed = 0usize;
        let (mut declined, mut cancelled) = (false, false);
        let mut failure = None;
        let mut serve = |req: &Value| -> Option<Value> {
            let id = req.get("id").cloned().unwrap_or(Value::Null);
            let method = req.get("method").and_then(Value::as_str).unwrap_or("");
            let reply = |result: Value| Some(json!({"jsonrpc":"2.0","id":id,"result":result}));
            match method {
                "ping" => reply(json!({})),
                "elicitation/create" => {
                    pushed += 1;
                    let key = format!("q{pushed}");
                    let params = req.get("params").cloned().unwrap_or(Value::Null);
                    let answer = pushed_answer(&key, &params, answerer);
                    match answer {
                        Ok(r) => {
                            declined |= r == Reply::Decline;
                            cancelled |= r == Reply::Cancel;
                            reply(r.to_json())
                        }
                        Err(f) => {
                            failure = Some(f);
                            None
                        }
                    }
                }
                other => Some(json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,
                    "message":format!("Method not found: this client does not serve {other}")}})),
            }
        };
        let params = json!({"name": name, "arguments": arguments});
        let sent = self.send_legacy("tools/call", params, &mut serve);
        let resp = match sent {
            Ok(r) => r,
            Err(Failure::Transport(TransportError::Aborted)) => {
                return Err(failure.unwrap_or(Failure::Transport(TransportError::Aborted)))
            }
            Err(f) => return Err(f),
        };
        let outcome = if let Some(err) = resp.msg.get("error") {
            Outcome::Error(err.clone())
        } else {
            match resp.msg.get("result") {
                Some(r) if r.get("content").is_some_and(Value::is_array) => {
                    Outcome::Complete(r.clone())
                }
                _ => {
                    return Err(Failure::Protocol(format!(
                        "not a CallToolResult: {}",
                        resp.text
                    )))
                }
            }
        };
        Ok(Some(Called {
            outcome,
            declined,
            cancelled,
            rounds: 1,
        }))
    }

    /// Sends a request with exactly these `params` (no `_meta` added), answering any server
    /// request meanwhile with `serve`.
    fn send_legacy(
        &mut self,
        method: &str,
        params: Value,
        serve: &mut Serve<'_>,
    ) -> Result<Response, Failure> {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}).to_string();
        trace("→", &body);
        let got = self.bridge.exchange_serving(
            &Outgoing {
                id,
                method,
                name: None,
                body: &body,
            },
            serve,
        )?;
        response(got)
    }
}

/// Answers one pushed `elicitation/create` (form mode only: this client declares no other).
fn pushed_answer(key: &str, params: &Value, answerer: &mut dyn Answerer) -> Result<Reply, Failure> {
    match params.get("mode").and_then(Value::as_str) {
        None | Some("form") => {}
        Some(mode) => {
            return Err(Failure::Protocol(format!(
                "the server pushed an elicitation in {mode} mode, which this client did not declare"
            )))
        }
    }
    let form = Form::parse(params)
        .map_err(|e| Failure::Protocol(format!("the pushed form is malformed: {e}")))?;
    answerer.answer(key, &form)
}
