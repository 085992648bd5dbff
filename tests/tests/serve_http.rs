//! Streamable HTTP at the wire: every status the spec pins, the MCP headers checked against
//! the body, the DNS-rebinding guard, bearer tokens, and the body limit.

use redmark_tests::server::{
    discover, http, meta, post_mcp, post_mcp_headers, tool_call, HttpResponse, Server, TempDir,
    VERSION,
};
use serde_json::{json, Value};

fn code(r: &HttpResponse) -> i64 {
    r.json()["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error in {}", String::from_utf8_lossy(&r.body)))
}

#[test]
fn statuses_headers_and_limits() {
    let data = TempDir::new("http");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let a = s.http[0];
    assert!(
        s.stderr().contains("anonymous"),
        "no --tokens warns: {}",
        s.stderr()
    );

    let r = post_mcp(a, &discover(1), &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert!(r.header("mcp-session-id").is_none());
    assert_eq!(r.json()["id"], 1);

    let call = tool_call(
        2,
        "book_room",
        json!({"day":"2099-12-21","hour":9,"room_hint":"the big room"}),
        true,
    );
    let body = serde_json::to_vec(&call).unwrap();
    // All three headers right: an InputRequiredResult, 200.
    let ok = post_mcp_headers(
        a,
        &body,
        Some(VERSION),
        Some("tools/call"),
        Some("book_room"),
        &[],
    );
    assert_eq!(ok.status, 200);
    assert_eq!(ok.json()["result"]["resultType"], "input_required");
    // Base64-encoded header values are decoded before comparing.
    let b64 = post_mcp_headers(
        a,
        &body,
        Some(VERSION),
        Some("tools/call"),
        Some("=?base64?Ym9va19yb29t?="),
        &[],
    );
    assert_eq!(b64.status, 200, "{}", String::from_utf8_lossy(&b64.body));
    // Mismatched or missing headers: 400, -32020.
    for (v, m, n) in [
        (Some("2025-11-25"), Some("tools/call"), Some("book_room")),
        (None, Some("tools/call"), Some("book_room")),
        (Some(VERSION), Some("tools/list"), Some("book_room")),
        (Some(VERSION), None, Some("book_room")),
        (Some(VERSION), Some("tools/call"), Some("list_rooms")),
        (Some(VERSION), Some("tools/call"), None),
    ] {
        let r = post_mcp_headers(a, &body, v, m, n, &[]);
        assert_eq!((r.status, code(&r)), (400, -32020), "{v:?} {m:?} {n:?}");
        assert_eq!(r.json()["id"], 2, "errors carry the request id");
    }
    // No form elicitation: a question with a stand-in argument is a tool error the model
    // reads, 200 (the core's fixtures pin -32021 as 400 for a question without one).
    let bare = tool_call(
        3,
        "book_room",
        json!({"day":"2099-12-21","hour":9,"room_hint":"the big room"}),
        false,
    );
    let r = post_mcp(a, &bare, &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["result"]["isError"], true, "{:?}", r.json());
    // Unsupported version (header and body agree): 400, -32022.
    let mut old = discover(4);
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let r = post_mcp(a, &old, &[]);
    assert_eq!((r.status, code(&r)), (400, -32022));
    // _meta missing: 400, -32602.
    let r = post_mcp_headers(
        a,
        br#"{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{}}"#,
        Some(VERSION),
        Some("server/discover"),
        None,
        &[],
    );
    assert_eq!((r.status, code(&r)), (400, -32602));
    // Method not found: 404, -32601.
    for m in ["initialize", "ping", "no/such"] {
        let msg = json!({"jsonrpc":"2.0","id":6,"method":m,"params":{"_meta": meta(json!({}))}});
        let r = post_mcp(a, &msg, &[]);
        assert_eq!((r.status, code(&r)), (404, -32601), "{m}");
    }
    // A notification: 202, no body.
    let note = json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"_meta": meta(json!({}))}});
    let r = post_mcp(a, &note, &[]);
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty());
    // A notification's headers are checked too: a wrong Mcp-Method gets 400, -32020.
    let body = serde_json::to_vec(&note).unwrap();
    let r = post_mcp_headers(a, &body, Some(VERSION), Some("tools/call"), None, &[]);
    assert_eq!((r.status, code(&r)), (400, -32020));
    let r = post_mcp_headers(a, &body, Some(VERSION), None, None, &[]);
    assert_eq!((r.status, code(&r)), (400, -32020), "missing Mcp-Method");
    let r = post_mcp_headers(
        a,
        &body,
        Some(VERSION),
        Some("notifications/cancelled"),
        None,
        &[],
    );
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    assert!(r.body.is_empty());
    // Not JSON: a JSON-RPC parse error.
    let r = post_mcp_headers(a, b"{", Some(VERSION), Some("server/discover"), None, &[]);
    assert_eq!(code(&r), -32700);
    // Too large: 413 with an id-less -32600; the server goes on.
    let big = vec![b' '; 16 * 1024 + 1];
    let r = post_mcp_headers(a, &big, Some(VERSION), Some("server/discover"), None, &[]);
    assert_eq!((r.status, code(&r)), (413, -32600));
    // GET and DELETE: 405 with Allow: POST; other paths 404.
    for m in ["GET", "DELETE"] {
        let r = http(a, m, "/mcp", &[], b"");
        assert_eq!(r.status, 405, "{m}");
        assert_eq!(r.header("allow"), Some("POST"));
    }
    assert_eq!(http(a, "POST", "/other", &[], b"{}").status, 404);
    assert_eq!(post_mcp(a, &discover(7), &[]).status, 200);
}

#[test]
fn dns_rebinding_guard_on_loopback() {
    let data = TempDir::new("http-origin");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let a = s.http[0];
    let port = a.port();
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        "[::1]".to_string(),
    ] {
        let r = post_mcp(a, &discover(1), &[("Host", &host)]);
        assert_eq!(r.status, 200, "Host {host}");
    }
    let r = post_mcp(a, &discover(1), &[("Origin", &format!("http://{a}"))]);
    assert_eq!(r.status, 200, "the same origin");
    for (k, v) in [
        ("Host", "evil.example"),
        ("Host", "evil.example:80"),
        ("Origin", "http://evil.example"),
        ("Origin", "null"),
        ("Origin", "http://127.0.0.1.evil.example"),
    ] {
        let r = post_mcp(a, &discover(1), &[(k, v)]);
        assert_eq!(r.status, 403, "{k}: {v}");
    }
    // Also before the method check: a rebinding GET gets 403, not 405.
    assert_eq!(
        http(a, "GET", "/mcp", &[("Origin", "http://evil.example")], b"").status,
        403
    );
}

/// A page of another site (a page on another local port is one) cannot drive the server with
/// a "simple" cross-origin request, which a browser sends without a preflight (issue 40, item
/// 6): a POST that is not `application/json` gets 415 in both eras, so a `text/plain`
/// 2025-11-25 `initialize` opens no session (and so evicts none of the user's); an Origin that
/// is not the Host gets 403. Clients that send no Origin (curl, the SDKs) and same-origin
/// pages (the booking page at `/`) are served.
#[test]
fn cross_origin_simple_requests_are_refused() {
    let data = TempDir::new("http-cross-origin");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let a = s.http[0];
    let port = a.port();
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"a page","version":"0"}}});
    let init = serde_json::to_vec(&init).unwrap();
    let modern = serde_json::to_vec(&discover(2)).unwrap();
    let page = format!("http://localhost:{}", port.wrapping_add(1));
    for body in [&init, &modern] {
        for ct in [
            Some("text/plain"),
            Some("text/plain;charset=UTF-8"),
            Some("application/x-www-form-urlencoded"),
            Some("multipart/form-data; boundary=x"),
            None,
        ] {
            let mut h: Vec<(&str, &str)> = vec![("Origin", &page)];
            h.extend(ct.map(|ct| ("Content-Type", ct)));
            // From the page: 403 (its Origin); with no Origin at all, still 415.
            for (h, status) in [(&h[..], 403), (&h[1..], 415)] {
                let r = http(a, "POST", "/mcp", h, body);
                let text = String::from_utf8_lossy(&r.body);
                assert_eq!(r.status, status, "{h:?}: {text}");
                assert!(r.header("mcp-session-id").is_none());
            }
        }
    }
    // JSON from another local port: 403.
    let json = ("Content-Type", "application/json");
    for origin in [
        page.clone(),
        format!("http://127.0.0.1:{}", port.wrapping_add(1)),
        format!("http://localhost:{port}"),
    ] {
        let r = http(a, "POST", "/mcp", &[json, ("Origin", &origin)], &init);
        assert_eq!(r.status, 403, "Origin {origin}");
    }
    // No Origin (curl, the SDKs), or the same origin (a page of this server): served.
    let r = http(a, "POST", "/mcp", &[json], &init);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert!(r.header("mcp-session-id").is_some());
    let same = format!("http://127.0.0.1:{port}");
    let r = http(a, "POST", "/mcp", &[json, ("Origin", &same)], &init);
    assert_eq!(r.status, 200);
    let local = format!("localhost:{port}");
    let same = format!("http://{local}");
    let r = post_mcp(a, &discover(3), &[("Host", &local), ("Origin", &same)]);
    assert_eq!(r.status, 200);
    let with_charset = [
        ("Content-Type", "application/json; charset=utf-8"),
        ("MCP-Protocol-Version", VERSION),
        ("Mcp-Method", "server/discover"),
    ];
    assert_eq!(http(a, "POST", "/mcp", &with_charset, &modern).status, 200);
}

#[test]
fn bearer_tokens() {
    let data = TempDir::new("http-tokens");
    let file = data.path().join("tokens.toml");
    std::fs::write(&file, "alice = \"alice-token-0123456789\"\n").unwrap();
    let s = Server::start(
        &["--http", "127.0.0.1:0", "--tokens", file.to_str().unwrap()],
        data.path(),
    );
    let a = s.http[0];
    for auth in [
        None,
        Some("Bearer wrong-token-0123456789"),
        Some("Basic YWxpY2U6eA=="),
    ] {
        let extra: Vec<(&str, &str)> = auth.iter().map(|v| ("Authorization", *v)).collect();
        let r = post_mcp(a, &discover(1), &extra);
        assert_eq!(r.status, 401, "{auth:?}");
        assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    }
    let r = post_mcp(
        a,
        &discover(1),
        &[("Authorization", "Bearer alice-token-0123456789")],
    );
    assert_eq!(r.status, 200);
    assert!(
        !s.stderr().contains("alice-token"),
        "tokens are never logged"
    );
}

#[test]
fn a_thousand_concurrent_http_connections() {
    use std::io::{Read, Write};
    let data = TempDir::new("http-many");
    let s = Server::start(
        &["--http", "127.0.0.1:0", "--max-connections", "2000"],
        data.path(),
    );
    let a = s.http[0];
    let body = serde_json::to_vec(&discover(1)).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {a}\r\nContent-Type: application/json\r\nMCP-Protocol-Version: {VERSION}\r\n\
         Mcp-Method: server/discover\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let mut conns: Vec<std::net::TcpStream> = (0..1000)
        .map(|_| std::net::TcpStream::connect(a).expect("connect"))
        .collect();
    for c in &mut conns {
        c.write_all(head.as_bytes())
            .and_then(|_| c.write_all(&body))
            .expect("send");
    }
    for (i, c) in conns.iter_mut().enumerate() {
        c.set_read_timeout(Some(redmark_tests::server::WAIT))
            .unwrap();
        let mut raw = Vec::new();
        c.read_to_end(&mut raw).expect("read");
        assert!(
            raw.starts_with(b"HTTP/1.1 200"),
            "connection {i}: {}",
            String::from_utf8_lossy(&raw)
        );
    }
}

/// Several answer lines (progress notifications, then the response) go out as one
/// `text/event-stream`, one `data:` event per message, the response last; a single answer is
/// plain JSON. Uses the conformance fixtures' `test_tool_with_progress`.
#[test]
fn progress_then_response_as_an_event_stream() {
    let data = TempDir::new("http-sse");
    let s = Server::start(&["--http", "127.0.0.1:0", "--fixtures"], data.path());
    let mut call = json!({"jsonrpc":"2.0","id":9,"method":"tools/call",
        "params":{"name":"test_tool_with_progress","arguments":{},"_meta": meta(json!({}))}});
    let plain = post_mcp(s.http[0], &call, &[]);
    assert_eq!(plain.header("content-type"), Some("application/json"));
    call["params"]["_meta"]["progressToken"] = json!("p-1");
    let r = post_mcp(s.http[0], &call, &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    let text = String::from_utf8(r.body.clone()).unwrap();
    let events: Vec<Value> = text
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let data = e
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .expect("a data line");
            serde_json::from_str(data).expect("one JSON message per event")
        })
        .collect();
    assert!(events.len() >= 2, "{text}");
    let (last, before) = events.split_last().unwrap();
    assert_eq!(last["id"], 9, "the response comes last: {text}");
    assert!(
        before
            .iter()
            .all(|n| n["method"] == "notifications/progress"),
        "{text}"
    );
}

/// `Mcp-Param-*` headers reach the engine, which checks them against arguments marked
/// `x-mcp-header` (SEP-2243; the fixtures' `test_custom_header` mirrors `region`).
#[test]
fn mcp_param_headers_are_checked() {
    let data = TempDir::new("http-param");
    let s = Server::start(&["--http", "127.0.0.1:0", "--fixtures"], data.path());
    let call = tool_call(1, "test_custom_header", json!({"region": "eu-west"}), false);
    let ok = post_mcp(s.http[0], &call, &[("Mcp-Param-Region", "eu-west")]);
    assert_eq!(ok.status, 200, "{}", String::from_utf8_lossy(&ok.body));
    for extra in [vec![], vec![("Mcp-Param-Region", "us-east")]] {
        let r = post_mcp(s.http[0], &call, &extra);
        assert_eq!((r.status, code(&r)), (400, -32020), "{extra:?}");
    }
}

#[test]
fn sigterm_stops_an_http_server_cleanly() {
    let data = TempDir::new("http-term");
    let mut s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    assert_eq!(post_mcp(s.http[0], &discover(1), &[]).status, 200);
    s.signal("TERM");
    let st = s.wait_exit().expect("redmark did not exit on SIGTERM");
    assert!(st.success(), "{st:?}\n{}", s.stderr());
}

/// A client that pipelines requests and never reads its answers is closed after the write
/// timeout, freeing its place under the connection cap; with --tokens it needs no token to
/// try (`GET /mcp` is answered 405 before authentication).
#[test]
fn a_client_that_never_reads_is_closed_after_the_write_timeout() {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::{Duration, Instant};
    let data = TempDir::new("http-unread");
    let file = data.path().join("tokens.toml");
    std::fs::write(&file, "alice = \"alice-token-0123456789\"\n").unwrap();
    let s = Server::start(
        &[
            "--http",
            "127.0.0.1:0",
            "--tokens",
            file.to_str().unwrap(),
            "--max-connections",
            "1",
            "--write-timeout",
            "1",
        ],
        data.path(),
    );
    let a = s.http[0];
    let mut hog = TcpStream::connect(a).expect("connect");
    let flood = std::thread::spawn(move || {
        let get = format!("GET /mcp HTTP/1.1\r\nHost: {a}\r\n\r\n").repeat(1000);
        // Writes until the server, whose answers nobody reads, gives up on the connection.
        while hog.write_all(get.as_bytes()).is_ok() {}
    });
    // The one place under the cap comes back once the server closes the hog.
    let body = serde_json::to_vec(&discover(1)).unwrap();
    let ask = format!(
        "POST /mcp HTTP/1.1\r\nHost: {a}\r\nAuthorization: Bearer alice-token-0123456789\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(
            Instant::now() < deadline,
            "the client that never reads still holds its connection; stderr:\n{}",
            s.stderr()
        );
        std::thread::sleep(Duration::from_millis(200));
        let Ok(mut c) = TcpStream::connect(a) else {
            continue;
        };
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        if c.write_all(ask.as_bytes())
            .and_then(|()| c.write_all(&body))
            .is_err()
        {
            continue;
        }
        let mut got = Vec::new();
        let _ = c.read_to_end(&mut got);
        // Served at all (rather than closed on accept): the place is free again.
        if got.starts_with(b"HTTP/1.1 ") {
            break;
        }
    }
    flood
        .join()
        .expect("the flood ends once the server closes it");
}

/// On a loopback server without tokens the server's own user is the local user over HTTP too
/// (the bookings of stdio, `--tcp` and `redmark call` are theirs), and another user of the
/// machine never is: a process of `nobody` is the anonymous principal and sees none of them.
/// Needs root to run a client as `nobody`, so it is ignored by default; as root run it with
/// `cargo test -p redmark-tests --test serve_http -- --ignored another_users_http_client`
/// (it fails, rather than passing vacuously, when run without root or setpriv).
#[test]
#[ignore = "needs root and setpriv: run as root with `cargo test -p redmark-tests --test serve_http -- --ignored another_users_http_client`"]
fn another_users_http_client_is_not_the_local_user() {
    use std::process::Command;
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0\n"))
        .unwrap_or(false);
    assert!(root, "needs root, to connect as another user (nobody)");
    let data = TempDir::new("http-uid");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let addr = s.http[0];
    let day = json!({"day": "2099-09-17"});
    // Booked by the local user through the serve's data folder (`redmark call`).
    let booked = Command::new(redmark_tests::server::redmark_bin())
        .args(["call", "--no-input", "--data"])
        .arg(data.path())
        .args(["book_room", "day=2099-09-17", "hour=9", "room_id=nook"])
        .output()
        .expect("run redmark call");
    assert!(booked.status.success(), "{booked:?}");
    let list = tool_call(2, "list_bookings", day, true);
    let mine = post_mcp(addr, &list, &[]);
    let text = |v: &Value| {
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    assert!(
        text(&mine.json()).contains("bk_1"),
        "the same user: {:?}",
        mine.json()
    );
    // The same request as `nobody` (bash's /dev/tcp), with the headers post_mcp sends.
    let body = list.to_string();
    let port = addr.port();
    let script = format!(
        "exec 3<>/dev/tcp/127.0.0.1/{port} && printf 'POST /mcp HTTP/1.1\\r\\nHost: 127.0.0.1:{port}\\r\\n\
         Content-Type: application/json\\r\\nAccept: application/json, text/event-stream\\r\\n\
         MCP-Protocol-Version: 2026-07-28\\r\\nMcp-Method: tools/call\\r\\nMcp-Name: list_bookings\\r\\n\
         Content-Length: {}\\r\\nConnection: close\\r\\n\\r\\n%s' \"$1\" >&3 && timeout 20 cat <&3",
        body.len()
    );
    let as_nobody = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["bash", "-c", &script, "bash", &body])
        .output()
        .expect("run setpriv (util-linux)");
    let reply = String::from_utf8_lossy(&as_nobody.stdout).into_owned();
    let json = reply.split("\r\n\r\n").nth(1).unwrap_or_default();
    let theirs: Value = serde_json::from_str(json).unwrap_or_else(|e| {
        panic!(
            "no answer for nobody ({e}): {reply}{}",
            String::from_utf8_lossy(&as_nobody.stderr)
        )
    });
    assert_eq!(
        text(&theirs),
        "You have no bookings on 2099-09-17.",
        "another user is not the local user: {theirs}"
    );
}
