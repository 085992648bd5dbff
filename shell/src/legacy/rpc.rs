//! The JSON-RPC pieces the bridge reads and writes: result and error lines, routing keys, and
//! the tests that tell a 2026-07-28 message or an `initialize` from the rest.

use redmark_core::wire::meta::KEY_VERSION;
use serde_json::{json, Value};

/// A JSON-RPC error line.
pub fn error(id: &Value, code: i64, message: &str) -> Vec<u8> {
    json!({"jsonrpc":"2.0","id":id,"error":{"code":code,"message":message}})
        .to_string()
        .into_bytes()
}

/// A JSON-RPC result line.
pub fn result(id: &Value, result: Value) -> Vec<u8> {
    json!({"jsonrpc":"2.0","id":id,"result":result})
        .to_string()
        .into_bytes()
}

/// `id` as the routing key of the bridge's actions.
pub fn key_of(id: &Value) -> String {
    id.to_string()
}

/// Whether `msg` carries the 2026-07-28 `_meta` (then it is served statelessly).
pub fn is_modern(msg: &Value) -> bool {
    msg.pointer("/params/_meta")
        .and_then(|m| m.get(KEY_VERSION))
        .is_some_and(Value::is_string)
}

/// The `isError` result a bridged call ends with when the bridge gives up.
pub fn tool_error(text: &str) -> Value {
    json!({"content":[{"type":"text","text":text}],"isError":true})
}

/// Whether `bytes` hold the JSON string `"initialize"` (the one method that opens a 2025-11-25
/// session): a byte scan that lets every other message skip the JSON parse.
pub fn names_initialize(bytes: &[u8]) -> bool {
    bytes.windows(12).any(|w| w == b"\"initialize\"")
}
