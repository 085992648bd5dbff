//! Test harness: an engine on the default floor with a fixed key, a settable clock and
//! principal, and every response it emits checked against the official 2026-07-28 wire
//! types (`rust-mcp-schema`).
#![allow(dead_code)]

pub mod waiting;

use redmark_core::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
use redmark_core::engine::{Config, ServerInfo};
use redmark_core::limits::OUT;
use redmark_core::seal::{Key, KeyRing};
use redmark_core::{Context, Engine, Handled};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

pub const VERSION: &str = "2026-07-28";
pub type Panel = Engine<BookingApp<'static, MemStore<64>>>;

pub const INFO: ServerInfo = ServerInfo {
    name: "redmark",
    version: "test",
    instructions: None,
};

pub fn engine() -> Panel {
    let keys = KeyRing::new(Key::new(1, &[0x42; 32]).unwrap());
    Engine::new(
        BookingApp::new(DEFAULT_FLOOR, MemStore::new(), INFO),
        keys,
        Config::default(),
    )
}

/// Drives one engine like a client would, checking every response against the official wire types.
pub struct Client {
    pub engine: Panel,
    pub now: u64,
    pub principal: Vec<u8>,
    pub next_id: i64,
    pub counter: u64,
    /// What the host vouches for (a plain user by default).
    pub access: redmark_core::Access,
}

impl Default for Client {
    fn default() -> Self {
        Client {
            engine: engine(),
            now: 1_790_000_000,
            principal: b"alice".to_vec(),
            next_id: 1,
            counter: 0,
            access: redmark_core::Access::USER,
        }
    }
}

impl Client {
    /// Sends raw bytes; returns what the engine did and the text it wrote.
    pub fn raw(&mut self, input: &[u8]) -> (Handled, String) {
        self.counter += 1;
        let cx = Context {
            now: self.now,
            principal: &self.principal,
            entropy: self.counter.to_be_bytes(),
            access: self.access,
        };
        let mut out = vec![0u8; OUT];
        let h = self.engine.handle(input, &cx, &mut out);
        (
            h,
            String::from_utf8(out[..h.len].to_vec()).expect("engine wrote UTF-8"),
        )
    }

    /// Sends a request with a fresh id; returns the response, checked against the official wire types.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (h, text) = self.raw(msg.to_string().as_bytes());
        assert!(h.responded, "no response to {msg}");
        let resp: Value = serde_json::from_str(&text).expect("response is JSON");
        assert_eq!(resp["id"], json!(id), "id echoed");
        validate(Some(method), &resp);
        resp
    }

    /// `tools/call` with the given pieces.
    pub fn call(
        &mut self,
        name: &str,
        args: Value,
        caps: Value,
        responses: Option<Value>,
        state: Option<&str>,
    ) -> Value {
        let mut params = json!({"name": name, "arguments": args, "_meta": meta(caps)});
        if let Some(r) = responses {
            params["inputResponses"] = r;
        }
        if let Some(s) = state {
            params["requestState"] = json!(s);
        }
        self.request("tools/call", params)
    }

    /// `tool` with `args` from a client with forms, its confirmation asked and accepted: the
    /// retry's response.
    pub fn confirmed(&mut self, tool: &str, args: Value) -> Value {
        let asked = self.call(tool, args.clone(), form_caps(), None, None);
        let state = asked["result"]["requestState"]
            .as_str()
            .unwrap_or_else(|| panic!("asked to confirm: {asked}"))
            .to_owned();
        let yes = accept("confirm", json!({"confirm": true}));
        self.call(tool, args, form_caps(), Some(yes), Some(&state))
    }
}

pub fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "redmark-tests", "version": "0"}
    })
}

pub fn form_caps() -> Value {
    json!({"elicitation": {}})
}

pub fn accept(key: &str, content: Value) -> Value {
    json!({ key: {"action": "accept", "content": content} })
}

/// The official definition a response to `method` must satisfy (named as in the 2026-07-28
/// schema; [`check_def`] maps each name to its type in `rust-mcp-schema`).
pub fn def_for(method: Option<&str>, resp: &Value) -> &'static str {
    if resp.get("error").is_some() {
        return match resp["error"]["code"].as_i64() {
            Some(-32021) => "MissingRequiredClientCapabilityError",
            Some(-32022) => "UnsupportedProtocolVersionError",
            _ => "JSONRPCErrorResponse",
        };
    }
    match method {
        Some("server/discover") => "DiscoverResultResponse",
        Some("tools/list") => "ListToolsResultResponse",
        Some("tools/call") => "CallToolResultResponse",
        Some("prompts/list") => "ListPromptsResultResponse",
        Some("prompts/get") => "GetPromptResultResponse",
        Some("resources/list") => "ListResourcesResultResponse",
        Some("resources/templates/list") => "ListResourceTemplatesResultResponse",
        Some("resources/read") => "ReadResourceResultResponse",
        Some("completion/complete") => "CompleteResultResponse",
        _ => "JSONRPCResultResponse",
    }
}

/// Checks `msg` against official definition `def`: it must deserialize as the
/// `rust-mcp-schema` type of that name, and serializing the typed value back must give `msg`
/// again, so no member was unknown to the type (serde ignores those), misspelt, or dropped.
/// Every result must also carry a known `resultType` (the schema only says it is a string).
pub fn check_def(def: &str, msg: &Value) -> Result<(), String> {
    use rust_mcp_schema as s;
    match def {
        "DiscoverResultResponse" => exact::<s::DiscoverResultResponse>(msg),
        "ListToolsResultResponse" => exact::<s::ListToolsResultResponse>(msg),
        "ListPromptsResultResponse" => exact::<s::ListPromptsResultResponse>(msg),
        "ListResourcesResultResponse" => exact::<s::ListResourcesResultResponse>(msg),
        "ListResourceTemplatesResultResponse" => {
            exact::<s::ListResourceTemplatesResultResponse>(msg)
        }
        "CompleteResultResponse" => exact::<s::CompleteResultResponse>(msg),
        "CallToolResultResponse" => mrtr::<s::CallToolResultResponse, s::CallToolResult>(msg),
        "GetPromptResultResponse" => mrtr::<s::GetPromptResultResponse, s::GetPromptResult>(msg),
        "ReadResourceResultResponse" => {
            mrtr::<s::ReadResourceResultResponse, s::ReadResourceResult>(msg)
        }
        "JSONRPCResultResponse" => exact::<s::JsonrpcResultResponse>(msg),
        "JSONRPCErrorResponse" => exact::<s::JsonrpcErrorResponse>(msg),
        "MissingRequiredClientCapabilityError" => {
            exact::<s::MissingRequiredClientCapabilityError>(msg)
        }
        "UnsupportedProtocolVersionError" => exact::<s::UnsupportedProtocolVersionError>(msg),
        "ProgressNotification" => exact::<s::ProgressNotification>(msg),
        _ => panic!("no type for definition {def}"),
    }?;
    if let Some(result) = msg.get("result") {
        let rt = result["resultType"].as_str();
        if !matches!(rt, Some("complete") | Some("input_required")) {
            return Err("resultType on every result, complete or input_required".into());
        }
    }
    Ok(())
}

/// A check of one JSON value: `Err` says what is wrong, and where.
type Check = fn(&Value) -> Result<(), String>;

/// `msg` as a `T`, and `T` written back is `msg` again.
fn exact<T: DeserializeOwned + Serialize>(msg: &Value) -> Result<(), String> {
    let typed: T = serde_json::from_value(msg.clone()).map_err(|e| e.to_string())?;
    let back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    same(msg, &back, &mut Vec::new())
}

/// A response whose `result` is `InputRequiredResult | Complete` (an untagged enum in
/// `rust-mcp-schema`, `anyOf` in the schema). serde takes the first variant that
/// deserializes, and `InputRequiredResult` needs only `resultType`, so a complete result would
/// come back as one with its content dropped. So the whole response is typed as `Resp` (its
/// envelope compared exactly), and `result` is compared exactly as the variant its
/// `resultType` names, the way `rust-mcp-schema`'s own `ServerResult` picks it.
fn mrtr<Resp, Complete>(msg: &Value) -> Result<(), String>
where
    Resp: DeserializeOwned + Serialize,
    Complete: DeserializeOwned + Serialize,
{
    let typed: Resp = serde_json::from_value(msg.clone()).map_err(|e| e.to_string())?;
    let mut back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    let mut envelope = msg.clone();
    for v in [&mut back, &mut envelope] {
        if let Some(o) = v.as_object_mut() {
            o.remove("result");
        }
    }
    same(&envelope, &back, &mut Vec::new())?;
    let result = &msg["result"];
    match result["resultType"].as_str() {
        Some("input_required") => exact::<rust_mcp_schema::InputRequiredResult>(result),
        _ => exact::<Complete>(result),
    }
    .map_err(|e| format!("in result: {e}"))
}

/// Places (path suffixes; `*` is any member) where `rust-mcp-schema` has an untagged enum
/// whose serde order loses data: serde keeps the first variant that deserializes, and an
/// earlier variant can take a value meant for a later one, silently dropping its members.
/// There the value is checked against each variant of the schema's `anyOf` on its own, and
/// must come back exactly as (at least) one of them, which is what `anyOf` means.
///
/// `PrimitiveSchemaDefinition` (an elicitation form field): `StringSchema` comes first and
/// matches every `"type": "string"` field, so an enum field (`enum`, `oneOf`, `enumNames`)
/// would lose its choices.
const ANY_OF: &[(&[&str], Check)] = &[(&["requestedSchema", "properties", "*"], primitive_schema)];

fn primitive_schema(v: &Value) -> Result<(), String> {
    use rust_mcp_schema as s;
    let variants: [Check; 8] = [
        exact::<s::StringSchema>,
        exact::<s::NumberSchema>,
        exact::<s::BooleanSchema>,
        exact::<s::UntitledSingleSelectEnumSchema>,
        exact::<s::TitledSingleSelectEnumSchema>,
        exact::<s::UntitledMultiSelectEnumSchema>,
        exact::<s::TitledMultiSelectEnumSchema>,
        exact::<s::LegacyTitledEnumSchema>,
    ];
    let mut errors = Vec::new();
    for check in variants {
        match check(v) {
            Ok(()) => return Ok(()),
            Err(e) => errors.push(e),
        }
    }
    Err(format!(
        " is no PrimitiveSchemaDefinition: {}",
        errors.join("; ")
    ))
}

/// `a` and `b` are the same JSON value; the error names the first place they differ. Member
/// order is not compared (it carries nothing in JSON). The one representation-only
/// difference allowed: an integer the schema types as `number` (`f64` in `rust-mcp-schema`,
/// e.g. `ProgressNotification`'s `progress`) comes back as a float of exactly the same value.
fn same(a: &Value, b: &Value, at: &mut Vec<String>) -> Result<(), String> {
    let here = |at: &[String]| at.iter().map(|k| format!("/{k}")).collect::<String>();
    if let Some((_, check)) = ANY_OF.iter().find(|(suffix, _)| {
        at.len() >= suffix.len()
            && at[at.len() - suffix.len()..]
                .iter()
                .zip(suffix.iter())
                .all(|(k, s)| *s == "*" || k == s)
    }) {
        return check(a).map_err(|e| format!("{}{e}", here(at)));
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                at.push(k.clone());
                match y.get(k) {
                    Some(w) => same(v, w, at)?,
                    None => {
                        return Err(format!("{}: member unknown to the official type", here(at)))
                    }
                }
                at.pop();
            }
            if let Some(k) = y.keys().find(|k| !x.contains_key(*k)) {
                return Err(format!(
                    "{}/{k}: member added by the official type",
                    here(at)
                ));
            }
            Ok(())
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                at.push(i.to_string());
                same(v, w, at)?;
                at.pop();
            }
            Ok(())
        }
        (Value::Number(x), Value::Number(y))
            if y.is_f64()
                && x.as_i64().is_some_and(|i| {
                    let f = y.as_f64().unwrap();
                    f == i as f64 && f as i64 == i
                }) =>
        {
            Ok(())
        }
        _ if a == b => Ok(()),
        _ => Err(format!("{}: {a} came back as {b}", here(at))),
    }
}

/// Checks `msg` against official definition `def` ([`check_def`]); panics with what is wrong.
pub fn validate_def(def: &str, msg: &Value) {
    if let Err(e) = check_def(def, msg) {
        panic!("{def} invalid: {e}\n{msg:#}");
    }
}

/// Checks a response to `method` against the official 2026-07-28 wire types, and the MRTR
/// rules the schema cannot say.
pub fn check(method: Option<&str>, resp: &Value) -> Result<(), String> {
    check_def(def_for(method, resp), resp)?;
    if let Some(result) = resp.get("result") {
        if result["resultType"] == "input_required" {
            if result.get("inputRequests").is_none() && result.get("requestState").is_none() {
                return Err("input_required without inputRequests or requestState".into());
            }
            if !matches!(
                method,
                Some("tools/call" | "prompts/get" | "resources/read")
            ) {
                return Err(format!("input_required answers {method:?}"));
            }
        }
    }
    Ok(())
}

/// [`check`], panicking with what is wrong.
pub fn validate(method: Option<&str>, resp: &Value) {
    if let Err(e) = check(method, resp) {
        panic!("response to {method:?} invalid: {e}\n{resp:#}");
    }
}
