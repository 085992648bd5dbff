//! What redmark's own code reads of an HTTP request: the MCP headers (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`, every `Mcp-Param-*`) and the body, through `Engine::handle_http`
//! as the shell calls it. Never a panic; any answer is lines of valid JSON, the last one the
//! response, with the status a Streamable HTTP transport can send.
//!
//! Input layout (seedable by hand, see `core/fuzz/seeds/http_headers/`): one flags byte, then
//! fields separated by `0xFF` (a byte no UTF-8 text holds):
//! `flags version 0xFF method 0xFF name (0xFF param-name 0xFF param-value)* 0xFF body`.
//! The body is everything after the last separator; header fields become text the way the
//! shell makes them (`String::from_utf8_lossy`).
//! Flags: bit 0/1/2 = `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` sent; bit 3 = the
//! conformance fixtures app instead of the booking floor (the fixtures have an `x-mcp-header`
//! argument, progress notifications, prompts and resources); bit 4 = no headers at all (a
//! byte-stream transport: `Engine::handle`).
#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use redmark_core::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
use redmark_core::engine::{Config, ServerInfo};
use redmark_core::fixtures::Fixtures;
use redmark_core::limits::OUT;
use redmark_core::seal::{Key, KeyRing};
use redmark_core::{App, Context, Engine, HttpHeaders};

/// Most `Mcp-Param-*` headers passed on (hyper bounds the header block; this bounds the work).
const MAX_PARAMS: usize = 8;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let fields: Vec<&[u8]> = rest.split(|&b| b == 0xFF).collect();
    let (body, fields) = fields
        .split_last()
        .expect("split yields at least one field");
    let text: Vec<Cow<'_, str>> = fields.iter().map(|f| String::from_utf8_lossy(f)).collect();
    let field = |i: usize, bit: u8| match text.get(i) {
        Some(t) if flags & bit != 0 => Some(t.as_ref()),
        _ => None,
    };
    let params: Vec<(&str, &str)> = text
        .get(3..)
        .unwrap_or_default()
        .chunks_exact(2)
        .take(MAX_PARAMS)
        .map(|p| (p[0].as_ref(), p[1].as_ref()))
        .collect();
    let headers = HttpHeaders {
        version: field(0, 1),
        method: field(1, 2),
        name: field(2, 4),
        params: &params,
    };
    let http = (flags & 16 == 0).then_some(headers);
    if flags & 8 != 0 {
        run(Fixtures, body, http);
    } else {
        let info = ServerInfo {
            name: "fuzz",
            version: "0",
            instructions: None,
        };
        run(
            BookingApp::new(DEFAULT_FLOOR, MemStore::<8>::new(), info),
            body,
            http,
        );
    }
});

fn run<A: App>(app: A, body: &[u8], http: Option<HttpHeaders<'_>>) {
    let Ok(key) = Key::new(1, &[3; 32]) else {
        return;
    };
    let mut engine = Engine::new(app, KeyRing::new(key), Config::default());
    let cx = Context {
        now: 1_790_000_000,
        principal: b"http:fuzz",
        entropy: [0; 8],
        access: redmark_core::Access::USER,
    };
    let mut out = vec![0u8; OUT];
    let h = match http {
        Some(headers) => engine.handle_http(body, &cx, &headers, &mut out),
        None => engine.handle(body, &cx, &mut out),
    };
    if !h.responded {
        assert_eq!(h.len, 0);
        assert!(h.status == 202 || h.status >= 500, "status {}", h.status);
        return;
    }
    assert!(h.len > 0 && h.len <= out.len());
    assert!((200..600).contains(&h.status), "status {}", h.status);
    // Notifications (progress) first, one a line; the response last. The shell sends one
    // line as application/json and several as one SSE `data:` event each.
    let lines: Vec<&[u8]> = out[..h.len].split(|&b| b == b'\n').collect();
    for line in &lines {
        let v = redmark_core::wire::parse(line).expect("every line is one JSON value");
        assert!(v.get("jsonrpc").is_some_and(|j| j.eq_str("2.0")));
    }
    let (response, notes) = lines.split_last().expect("at least one line");
    let response = redmark_core::wire::parse(response).unwrap();
    assert!(response.get("result").is_some() != response.get("error").is_some());
    assert!(response.get("method").is_none());
    for n in notes {
        let n = redmark_core::wire::parse(n).unwrap();
        assert!(n.get("id").is_none() && n.get("method").is_some());
    }
}
