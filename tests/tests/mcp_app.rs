//! The floor as an MCP App: `day_schedule` names `ui://redmark/floor` in its `_meta`,
//! `resources/list` lists it and `resources/read` serves the whole document (larger than the
//! engine's answer buffer) over stdio and HTTP; and in Chromium, a minimal host built on the
//! extension's host bridge (`@modelcontextprotocol/ext-apps/app-bridge` 2.0.x with the SDK v2
//! client, `scripts/app-peer.sh`) shows the app, which books through the host: a press on a
//! free time, and "the big room", asked by the host's form, answered wrong (the red mark) and
//! then right; the grid shows both bookings as yours, and one is cancelled (the host confirms).

#![cfg_attr(not(all(browser_tools, app_peer)), allow(dead_code, unused_imports))]

use std::path::{Path, PathBuf};

use redmark_core::limits::OUT;
use redmark_tests::app_host::{AppHost, Upstream};
use redmark_tests::browser::Browser;
use redmark_tests::page::{wait_cell, SHOW};
use redmark_tests::server::{meta, post_mcp, tool_call, Server, TempDir};
use serde_json::{json, Value};

/// The app's resource.
const URI: &str = "ui://redmark/floor";
/// The MIME type of an MCP App.
const MIME: &str = "text/html;profile=mcp-app";
/// The day every test books on: far enough ahead never to have started.
const DAY: &str = "2099-09-17";

fn request(id: u64, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta(json!({}));
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// tools/list, resources/list and resources/read of the app, as `ask` answers each.
fn check_the_app_is_served(mut ask: impl FnMut(&Value) -> Value) {
    let tools = ask(&request(1, "tools/list", json!({})));
    let tools = tools["result"]["tools"].as_array().expect("tools").clone();
    let with_ui: Vec<&str> = tools
        .iter()
        .filter(|t| t["_meta"]["ui"]["resourceUri"] == URI)
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(with_ui, ["day_schedule"], "{tools:?}");

    let listed = ask(&request(2, "resources/list", json!({})));
    let listed = &listed["result"]["resources"];
    let app = listed
        .as_array()
        .and_then(|l| l.iter().find(|r| r["uri"] == URI))
        .unwrap_or_else(|| panic!("{URI} not listed: {listed}"));
    assert_eq!(app["mimeType"], MIME);

    let read = ask(&request(3, "resources/read", json!({"uri": URI})));
    let doc = &read["result"]["contents"][0];
    assert_eq!(doc["uri"], URI, "{read}");
    assert_eq!(doc["mimeType"], MIME);
    let html = doc["text"].as_str().expect("the document's text");
    assert!(
        html.starts_with("<!doctype html>"),
        "{}",
        &html[..80.min(html.len())]
    );
    assert!(
        html.len() > OUT,
        "the whole document, more than the engine's buffer"
    );
    assert!(html.contains("ui/initialize") && html.contains("class FloorView"));

    let other = ask(&request(
        4,
        "resources/read",
        json!({"uri": "ui://redmark/nothing"}),
    ));
    assert!(other["error"].is_object(), "{other}");
}

#[test]
fn the_app_is_listed_and_read_over_stdio() {
    let data = TempDir::new("app-stdio");
    let mut s = Server::start(&[], data.path());
    let mut c = s.stdio();
    check_the_app_is_served(|m| c.request(m));
}

#[test]
fn the_app_is_listed_and_read_over_http() {
    let data = TempDir::new("app-http");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let addr = s.http[0];
    check_the_app_is_served(|m| {
        let r = post_mcp(addr, m, &[]);
        let v = r.json();
        assert_eq!(r.status == 200, v["error"].is_null(), "{v}");
        v
    });
}

/// A 2025-11-25 host (most installed ones) over stdio: `initialize` says resources are
/// served, and the bridge passes the tool's `_meta` and the whole document through.
#[test]
fn a_2025_11_25_host_is_told_of_resources_and_reads_the_app() {
    let data = TempDir::new("app-legacy");
    let mut s = Server::start(&[], data.path());
    let mut c = s.stdio();
    let init = c.request(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "clientInfo": {"name": "host", "version": "1"},
        "capabilities": {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [MIME]}}}}}),
    );
    assert!(
        init["result"]["capabilities"]["resources"].is_object(),
        "{init}"
    );
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let plain = |id: u64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let tools = c.request(&plain(2, "tools/list", json!({})));
    let day = tools["result"]["tools"]
        .as_array()
        .and_then(|l| l.iter().find(|t| t["name"] == "day_schedule"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(day["_meta"]["ui"]["resourceUri"], URI, "{tools}");
    let read = c.request(&plain(3, "resources/read", json!({"uri": URI})));
    let text = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("<!doctype html>") && text.len() > OUT,
        "{read}"
    );
}

/// The pinned host peer (`scripts/app-peer.sh`): its `node_modules` and the host page.
fn peer() -> (PathBuf, PathBuf) {
    let dir = PathBuf::from(option_env!("REDMARK_APP_PEER_DIR").unwrap_or("target/app-peer"));
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/app/host.html");
    (dir.join("node_modules"), page)
}

/// Waits until the host shows the app (or says why not); what the host found.
fn wait_shown(b: &Browser) -> Value {
    let v = b.wait_js(
        "the host to show the app",
        "return window.hostError ? { error: window.hostError } : (window.appReady ? window.found : null);",
        SHOW,
    );
    assert!(v["error"].is_null(), "the host failed: {}", v["error"]);
    v
}

/// The app in `b` (the host page loaded), driven through the host: a press books Atrium at
/// 10:00; "the big room" at 09:00 is asked by the host's form, answered "moon" (red mark) and
/// then "studio-b". Both show as yours; Atrium's pressed again is cancelled, the host
/// confirming.
fn book_through_the_host(b: &Browser) {
    let found = wait_shown(b);
    assert_eq!(found["tool"], "day_schedule", "{found}");
    assert_eq!(found["uri"], URI);
    assert_eq!(found["listed"], true);
    assert_eq!(found["mime"], MIME);
    b.js(
        "window.answers.push({ action: 'accept', content: { room_id: 'moon' } },\
         { action: 'accept', content: { room_id: 'studio-b' } });",
        json!([]),
    );

    let frame = b.find("#app");
    b.frame(Some(&frame));
    wait_cell(b, "atrium", "10:00", "free");
    b.click(&b.find("#grid td[data-room=\"atrium\"][data-start=\"10:00\"] button"));
    wait_cell(b, "atrium", "10:00", "own");

    b.fill(&b.find("#hint"), "the big room");
    b.fill(&b.find("#start"), "09:00");
    b.click(&b.find("#describe-book"));
    wait_cell(b, "studio-b", "09:00", "own");
    let status = b.text(&b.find("#status"));
    assert!(status.contains("Studio B"), "{status}");

    // One of yours pressed: cancel_booking's confirmation, asked by the host too.
    b.frame(None);
    b.js(
        "window.answers.push({ action: 'accept', content: { confirm: true } });",
        json!([]),
    );
    b.frame(Some(&frame));
    b.click(&b.find("#grid td[data-room=\"atrium\"][data-start=\"10:00\"] button"));
    wait_cell(b, "atrium", "10:00", "free");
    b.frame(None);

    let asked = b.js("return window.asked;", json!([]));
    let asked = asked.as_array().expect("the questions the host was asked");
    let why = "which room (twice: the red mark), then the confirmation";
    assert_eq!(asked.len(), 3, "{why}: {asked:?}");
    let field = |q: &Value| q["requestedSchema"]["properties"]["room_id"]["description"].clone();
    assert!(
        !field(&asked[0]).to_string().contains("last answer"),
        "{asked:?}"
    );
    let mark = field(&asked[1]).to_string();
    assert!(
        mark.contains("last answer: 'moon' is not one of the options offered"),
        "{mark}"
    );
    let confirm = &asked[2]["requestedSchema"]["properties"]["confirm"];
    assert_eq!(confirm["type"], "boolean", "{asked:?}");
    let proxied = b.js("return window.proxied;", json!([]));
    let proxied: Vec<&str> = proxied
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        proxied.iter().filter(|n| **n == "book_room").count(),
        2,
        "{proxied:?}"
    );
    assert!(proxied.contains(&"day_schedule") && proxied.contains(&"cancel_booking"));
}

#[test]
#[cfg_attr(
    not(all(browser_tools, app_peer)),
    ignore = "needs chromium (scripts/browser.sh) and the MCP Apps host peer (scripts/app-peer.sh)"
)]
fn the_app_books_through_the_host_over_http() {
    let (modules, page) = peer();
    let data = TempDir::new("app-host-http");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let host = AppHost::start(&page, &modules, Upstream::Http(s.http[0]));
    let b = Browser::start(1100, 1400);
    b.goto(&host.url(&format!("mode=http&day={DAY}")));
    book_through_the_host(&b);
    // What the server itself says: both rooms taken at those times.
    let r = post_mcp(
        s.http[0],
        &tool_call(9, "day_schedule", json!({"day": DAY}), false),
        &[],
    );
    let rooms = r.json()["result"]["structuredContent"]["rooms"].clone();
    let booked = |id: &str| {
        rooms
            .as_array()
            .and_then(|l| l.iter().find(|x| x["id"] == id))
            .map(|x| x["booked"].to_string())
            .unwrap_or_default()
    };
    assert!(booked("studio-b").contains("09:00"), "{rooms}");
    assert!(
        !booked("atrium").contains("10:00"),
        "cancelled through the host: {rooms}"
    );
}

#[test]
#[cfg_attr(
    not(all(browser_tools, app_peer)),
    ignore = "needs chromium (scripts/browser.sh) and the MCP Apps host peer (scripts/app-peer.sh)"
)]
fn the_app_books_through_the_host_over_stdio() {
    let (modules, page) = peer();
    let data = TempDir::new("app-host-stdio");
    let mut s = Server::start(&[], data.path());
    let (stdin, stdout) = s.take_stdio();
    let host = AppHost::start(&page, &modules, Upstream::Stdio(stdin, stdout));
    let b = Browser::start(1100, 1400);
    b.goto(&host.url(&format!("mode=stdio&day={DAY}")));
    book_through_the_host(&b);
}
