//! The JSON-RPC lines a test sends a UART panel and the checks on what it answers: requests,
//! `tools/call`s with their MRTR answers and state, the `redmark/time` answer, and a panel
//! booted and told the test time.

use serde_json::{json, Value};

use super::{firmware, Board, Build, Panel};
use crate::server::meta;

/// A panel on `board` booted with its standard image and told the test time, as its host
/// would.
pub fn boot_with_test_time(board: Board) -> Panel {
    let mut p = Panel::boot_on(board, &firmware(Build::standard(board)));
    p.set_time();
    p
}

/// Client capabilities that can answer a form.
pub fn form_caps() -> Value {
    json!({"elicitation": {}})
}

/// `book_room` arguments for `hour` on 2026-09-17 with the ambiguous hint "the big room".
pub fn big_room(hour: u8) -> Value {
    json!({"day": "2026-09-17", "hour": hour, "room_hint": "the big room"})
}

/// A JSON-RPC request line.
pub fn request(id: i64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A `tools/call` request line with these client capabilities, MRTR answers and state.
pub fn call(
    id: i64,
    name: &str,
    args: Value,
    caps: Value,
    responses: Option<Value>,
    state: Option<&str>,
) -> String {
    let mut params = json!({"name": name, "arguments": args, "_meta": meta(caps)});
    if let Some(r) = responses {
        params["inputResponses"] = r;
    }
    if let Some(s) = state {
        params["requestState"] = json!(s);
    }
    request(id, "tools/call", params)
}

/// An MRTR answer accepting the form `key` with `content`.
pub fn accept(key: &str, content: Value) -> Value {
    json!({ key: {"action": "accept", "content": content} })
}

/// A reply line as JSON, failing the test if it is not.
pub fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
}

/// Sends a message and parses the reply, checking the id is echoed.
pub fn rpc(panel: &mut Panel, id: i64, line: &str) -> Value {
    let r = parse(&panel.exchange(line));
    assert_eq!(r["jsonrpc"], "2.0", "{r}");
    assert_eq!(r["id"], json!(id), "reply to {line}: {r}");
    r
}

/// The `requestState` of an `input_required` result, failing the test otherwise.
pub fn state_of(r: &Value) -> String {
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    r["result"]["requestState"]
        .as_str()
        .expect("top-level requestState")
        .to_owned()
}

/// Fails the test unless the reply is the invalid-`requestState` error.
pub fn assert_bad_state(r: &Value) {
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["message"], "Invalid requestState", "{r}");
}

/// A `book_room` call naming the room exactly, from a client that cannot be asked.
pub fn book_exact(id: i64, day: &str, hour: u8, room: &str) -> String {
    call(
        id,
        "book_room",
        json!({"day": day, "hour": hour, "room_id": room}),
        json!({}),
        None,
        None,
    )
}

/// The `redmark/time` request for challenge `nonce` (16 hex digits) and time `t`, tagged with
/// `key_hex`: `HMAC-SHA256(key, "redmark-panel time v1" ‖ nonce ‖ t as 8 bytes BE)`.
pub fn time_answer(nonce: &str, t: u64, key_hex: &str) -> String {
    use hmac::{Hmac, Mac};
    let bytes = |h: &str| -> Vec<u8> {
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex"))
            .collect()
    };
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&bytes(key_hex)).expect("HMAC key");
    mac.update(b"redmark-panel time v1");
    mac.update(&bytes(nonce));
    mac.update(&t.to_be_bytes());
    let tag: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        r#"{{"jsonrpc":"2.0","id":"time","method":"redmark/time","params":{{"t":{t},"tag":"{tag}"}}}}"#
    )
}
