//! Test harness: an engine on the default floor with a fixed key, a settable clock and
//! principal, and schema validation of everything it emits.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use redmark_core::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
use redmark_core::engine::{Config, ServerInfo};
use redmark_core::limits::OUT;
use redmark_core::seal::{Key, KeyRing};
use redmark_core::{Context, Engine, Handled};
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

/// Drives one engine like a client would, validating every response against the schema.
pub struct Client {
    pub engine: Panel,
    pub now: u64,
    pub principal: Vec<u8>,
    pub next_id: i64,
    pub counter: u64,
}

impl Default for Client {
    fn default() -> Self {
        Client {
            engine: engine(),
            now: 1_790_000_000,
            principal: b"alice".to_vec(),
            next_id: 1,
            counter: 0,
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
            headers: None,
        };
        let mut out = vec![0u8; OUT];
        let h = self.engine.handle(input, &cx, &mut out);
        (
            h,
            String::from_utf8(out[..h.len].to_vec()).expect("engine wrote UTF-8"),
        )
    }

    /// Sends a request with a fresh id; returns the response, checked against the schema.
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

pub fn spec_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/spec")
}

/// The schema definition a response to `method` must satisfy.
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

/// Validates `msg` against schema definition `def`; panics with the errors. Every result
/// must also carry a known `resultType`.
pub fn validate_def(def: &'static str, msg: &Value) {
    static CACHE: OnceLock<Mutex<HashMap<&'static str, &'static jsonschema::Validator>>> =
        OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let validator = *cache.lock().unwrap().entry(def).or_insert_with(|| {
        let text =
            std::fs::read_to_string(spec_dir().join("schema-2026-07-28.json")).expect("schema");
        let mut schema: Value = serde_json::from_str(&text).unwrap();
        schema["$ref"] = json!(format!("#/$defs/{def}"));
        Box::leak(Box::new(
            jsonschema::validator_for(&schema).expect("schema compiles"),
        ))
    });
    let errors: Vec<String> = validator
        .iter_errors(msg)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{def} invalid: {errors:#?}\n{msg:#}");
    if let Some(result) = msg.get("result") {
        let rt = result["resultType"].as_str();
        assert!(
            matches!(rt, Some("complete") | Some("input_required")),
            "resultType on every result: {msg}"
        );
    }
}

/// Validates a response to `method` against the official 2026-07-28 schema, and the MRTR
/// rules the schema cannot say.
pub fn validate(method: Option<&str>, resp: &Value) {
    validate_def(def_for(method, resp), resp);
    if let Some(result) = resp.get("result") {
        if result["resultType"] == "input_required" {
            assert!(result.get("inputRequests").is_some() || result.get("requestState").is_some());
            assert!(matches!(
                method,
                Some("tools/call" | "prompts/get" | "resources/read")
            ));
        }
    }
}
