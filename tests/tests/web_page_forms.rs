//! The booking page's words and forms in real headless Chromium: errors said in words, a pasted
//! token that signs in and stays in the tab, a requestState echoed byte for byte, every field
//! kind rendered labelled and read back, and the page behind the same guard as `/mcp`.

#![cfg_attr(not(browser_tools), allow(dead_code, unused_imports))]

use redmark_tests::browser::{key, Browser};
use redmark_tests::page::setup::{book_in_words, page_url, DAY};
use redmark_tests::page::{wait_cell, wait_says};
use redmark_tests::server::{http, post_mcp, tool_call, Server, TempDir};
use serde_json::{json, Value};

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn errors_are_said_in_words() {
    let data = TempDir::new("web-errors");
    let mut s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let b = Browser::start(1000, 1300);
    b.goto(&page_url(&s));
    wait_cell(&b, "studio-b", "09:00", "free");

    // A client without form elicitation: the rooms and the argument to give, in words.
    b.click(&b.find("#settings summary"));
    b.click(&b.find("#declare-form"));
    book_in_words(&b, 9, "the big room");
    let said = wait_says(&b, "error", "The tool reported an error: 'the big room'");
    assert!(said.contains("with room_id set to their pick"), "{said}");
    b.click(&b.find("#declare-form"));

    // A tool error.
    b.fill(&b.find("#tool-args [data-field=room_hint] input"), "");
    b.fill(&b.find("#tool-args [data-field=room_id] input"), "moon");
    b.click(&b.find("#call"));
    let said = wait_says(
        &b,
        "error",
        "The tool reported an error: There is no room 'moon'",
    );
    assert!(said.contains("atrium"), "{said}");

    // The server goes away: the next request says so.
    s.kill9();
    b.click(&b.find("#show-day"));
    let said = wait_says(&b, "error", "The connection to the server dropped");
    assert!(said.contains("redmark serve"), "{said}");
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn a_pasted_token_signs_in_and_stays_in_the_tab() {
    const TOKEN: &str = "alice-token-0123456789";
    let data = TempDir::new("web-token");
    let file = data.path().join("tokens.toml");
    const BOB: &str = "bob-token-0123456789ab";
    std::fs::write(&file, format!("alice = \"{TOKEN}\"\nbob = \"{BOB}\"\n")).unwrap();
    let s = Server::start(
        &["--http", "127.0.0.1:0", "--tokens", file.to_str().unwrap()],
        data.path(),
    );
    let b = Browser::start(1000, 1300);
    b.goto(&page_url(&s));
    wait_says(&b, "error", "The server needs a bearer token");
    let focused = b.js("return document.activeElement.id", json!([]));
    assert_eq!(focused, "token", "the focus goes to the token field");
    b.keys(&[TOKEN, key::ENTER]);
    wait_says(&b, "status", "Connected.");
    wait_cell(&b, "nook", "09:00", "free");
    b.click(&b.find("td[data-room=nook][data-start='09:00'] button"));
    wait_says(&b, "status", "Booked The Nook (4 seats)");
    wait_cell(&b, "nook", "09:00", "own");
    // Kept in the tab (sessionStorage), never in localStorage; a reload stays signed in.
    let stored: Value = b.js(
        "return [sessionStorage.getItem('redmark.token'),\
          JSON.stringify(Object.entries(localStorage)).includes(arguments[0])]",
        json!([TOKEN]),
    );
    assert_eq!(stored, json!([TOKEN, false]));
    b.refresh();
    wait_cell(&b, "nook", "09:00", "own");
    // Bob's booking is booked, not Alice's; hers made elsewhere (not on this page) is hers.
    for (n, (token, room)) in [(BOB, "atrium"), (TOKEN, "studio-b")]
        .into_iter()
        .enumerate()
    {
        let call = tool_call(
            n as u64 + 1,
            "book_room",
            json!({"day": DAY, "hour": 10, "room_id": room}),
            false,
        );
        let r = post_mcp(
            s.http[0],
            &call,
            &[("Authorization", &format!("Bearer {token}"))],
        );
        assert_eq!(
            r.json()["result"]["structuredContent"]["booked"],
            true,
            "{room}"
        );
    }
    b.click(&b.find("#show-day"));
    wait_cell(&b, "studio-b", "10:00", "own");
    wait_cell(&b, "atrium", "10:00", "booked");
    // Forgotten: the next request is refused, in words.
    b.click(&b.find("#forget"));
    b.click(&b.find("#show-day"));
    wait_says(&b, "error", "The server needs a bearer token");
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn the_page_echoes_request_state_byte_for_byte() {
    let data = TempDir::new("web-echo");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let b = Browser::start(800, 600);
    b.goto(&page_url(&s));
    // The page's own client module, run in the browser: the raw token is kept, escapes and all
    // (a JSON.parse/stringify round trip would give "a/b"), whatever comes around it.
    let got = b.js(
        r#"return import('/web/mcp.js').then((m) => [
            m.rawMember('{"jsonrpc":"2.0","id":1,"result":{"content":[{"a":"}"}],"requestState" : "a\\u002fb","x":1}}', ['result', 'requestState']),
            m.rawMember('{"result":{"inputRequests":{"requestState":"no"}}}', ['result', 'requestState']),
            m.headerValue('book_room'),
            m.headerValue('réserver'),
        ]);"#,
        json!([]),
    );
    assert_eq!(
        got,
        json!([
            r#""a\u002fb""#,
            null,
            "book_room",
            "=?base64?csOpc2VydmVy?="
        ])
    );
}

#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn every_field_kind_renders_labelled_and_reads_back() {
    let data = TempDir::new("web-kinds");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let b = Browser::start(800, 600);
    b.goto(&page_url(&s));
    // Every PrimitiveSchemaDefinition kind, through the page's own renderer in the browser.
    let schema = json!({"type": "object", "required": ["name", "ok"], "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 5, "default": "Al"},
        "email": {"type": "string", "format": "email"},
        "when": {"type": "string", "format": "date", "default": "2099-09-17"},
        "n": {"type": "integer", "minimum": 1, "maximum": 9, "default": 3},
        "x": {"type": "number"},
        "ok": {"type": "boolean", "default": true},
        "color": {"type": "string", "enum": ["red", "green"]},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}], "default": "l"},
        "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["Apple", "Banana"]},
        "many": {"type": "string", "enum": ["1", "2", "3", "4", "5", "6"]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "default": ["y"]},
        "fruit": {"type": "array", "items": {"anyOf": [{"const": "p", "title": "Pears"}, {"const": "q", "title": "Quinces"}]}, "maxItems": 2},
        "note": {"type": "string", "description": "Say more — last answer: 'zzzzzz' is longer than 5 characters"},
    }});
    let got = b.js(
        r#"return import('/web/form.js').then((f) => {
            const div = document.createElement('div');
            document.body.append(div);
            const r = f.renderFields(div, arguments[0], { email: 'a@b.example' }, 't');
            const before = r.read();
            const q = (s) => div.querySelector(s);
            q('[data-field=x] input').value = '2.5';
            q('[data-field=many] select').value = '6';
            [...div.querySelectorAll('[data-field=fruit] input')].forEach((c) => { c.checked = true; });
            q('[data-field=ok] input').checked = false;
            const unlabelled = [...div.querySelectorAll('input, select, textarea')]
                .filter((c) => !(c.labels && c.labels.length)).map((c) => c.name);
            return [before, r.read(), unlabelled,
                [...div.querySelectorAll('.field')].map((e) => e.className),
                q('.field.marked').dataset.field, q('.field.marked .mark').textContent,
                q('[data-field=legacy]').textContent, q('[data-field=name] .hint').textContent];
        });"#,
        json!([schema]),
    );
    assert_eq!(
        got[0],
        json!({"name": "Al", "email": "a@b.example", "when": "2099-09-17", "n": 3, "ok": true,
               "size": "l", "tags": ["y"]}),
        "defaults and the values given"
    );
    assert_eq!(
        got[1],
        json!({"name": "Al", "email": "a@b.example", "when": "2099-09-17", "n": 3, "x": 2.5,
               "ok": false, "size": "l", "many": "6", "tags": ["y"], "fruit": ["p", "q"]})
    );
    assert_eq!(got[2], json!([]), "every control has a label");
    let kinds: Vec<&str> = got[3]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().split(' ').nth(1).unwrap())
        .collect();
    // In the order the schema lists them (this crate's serde_json sorts keys).
    assert_eq!(
        kinds,
        [
            "field-single",  // color: enum
            "field-text",    // email
            "field-multi",   // fruit: items.anyOf
            "field-single",  // legacy: enum + enumNames
            "field-single",  // many: a list box
            "field-number",  // n: integer
            "field-text",    // name
            "field-text",    // note
            "field-boolean", // ok
            "field-single",  // size: oneOf
            "field-multi",   // tags: items.enum
            "field-text",    // when: date
            "field-number",  // x: number
        ]
    );
    assert_eq!(got[4], "note");
    assert_eq!(got[5], "✗ 'zzzzzz' is longer than 5 characters");
    assert!(got[6].as_str().unwrap().contains("Banana"), "{}", got[6]);
    assert_eq!(got[7], "2 to 5 characters");
}

/// No browser needed: the page through the real server, its headers, and the same
/// Host/Origin guard as `/mcp` (no CORS header is added anywhere).
#[test]
fn the_page_is_served_behind_the_same_guard() {
    let data = TempDir::new("web-guard");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let a = s.http[0];
    let r = http(a, "GET", "/", &[], b"");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    let csp = r.header("content-security-policy").unwrap_or_default();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("connect-src 'self'"),
        "{csp}"
    );
    assert!(String::from_utf8_lossy(&r.body).contains("/web/app.js"));
    let js = http(a, "GET", "/web/mcp.js", &[], b"");
    assert_eq!(js.status, 200);
    assert_eq!(
        js.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    let etag = js.header("etag").unwrap().to_string();
    let again = http(a, "GET", "/web/mcp.js", &[("If-None-Match", &etag)], b"");
    assert_eq!(again.status, 304);
    for r in [&r, &js] {
        assert!(r.header("access-control-allow-origin").is_none());
    }
    // DNS rebinding: a foreign Host or Origin is refused for the page as for /mcp.
    let evil = http(a, "GET", "/", &[("Host", "evil.example")], b"");
    assert_eq!(evil.status, 403);
    let evil = http(
        a,
        "GET",
        "/web/app.js",
        &[("Origin", "http://evil.example")],
        b"",
    );
    assert_eq!(evil.status, 403);
    assert_eq!(http(a, "GET", "/web/nope.js", &[], b"").status, 404);
}
