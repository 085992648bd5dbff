//! The JSON-RPC messages a test sends `redmark serve`: `_meta` with client capabilities,
//! `server/discover`, `tools/call`, and a call's MRTR retry.

use serde_json::{json, Value};

use super::VERSION;

/// `_meta` of a 2026-07-28 request with these client capabilities.
pub fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "redmark-tests", "version": "0"},
    })
}

/// A `server/discover` request with id `id`.
pub fn discover(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"server/discover","params":{"_meta": meta(json!({}))}})
}

/// A `tools/call` request (form-elicitation capable when `form` is true).
pub fn tool_call(id: u64, name: &str, args: Value, form: bool) -> Value {
    let caps = if form {
        json!({"elicitation": {"form": {}}})
    } else {
        json!({})
    };
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args,"_meta":meta(caps)}})
}

/// `request` turned into its MRTR retry: new id, `inputResponses` and the echoed state.
pub fn retry(request: &Value, id: u64, responses: Value, state: &str) -> Value {
    let mut r = request.clone();
    r["id"] = json!(id);
    r["params"]["inputResponses"] = responses;
    r["params"]["requestState"] = json!(state);
    r
}
