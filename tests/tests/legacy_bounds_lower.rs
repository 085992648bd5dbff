//! The lower items of issue 35 (point 5), end to end: valid JSON nested too deeply is answered
//! "nested too deeply" with its id; RFC 9112 Host rules (two `Host` lines 400, an absolute-form
//! target's authority is the host the DNS-rebinding guard checks); idle unauthenticated
//! connections cannot take every place; a PostgreSQL outage is logged once, then its end.
//! (The damaged-store refusal on one line is tested beside `store/redb/open.rs`.)
#![cfg_attr(not(pg_tools), allow(dead_code, unused_imports))]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use redmark_tests::server::{meta, post_mcp, tool_call, Server, TempDir};
use serde_json::{json, Value};

/// A `tools/list` with id `deep-7` whose `_meta` holds arrays nested `levels` deep.
fn deep(levels: usize) -> String {
    let inner = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    format!(r#"{{"jsonrpc":"2.0","id":"deep-7","method":"tools/list","params":{{"x":{inner}}}}}"#)
}

fn assert_too_deep(answer: &Value) {
    assert_eq!(answer["id"], "deep-7", "the id is kept: {answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let m = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(m.contains("nested too deeply"), "{answer}");
}

#[test]
fn json_nested_too_deeply_is_said_with_its_id() {
    let data = TempDir::new("bounds-deep");
    let s = Server::start(
        &["--tcp", "127.0.0.1:0", "--http", "127.0.0.1:0"],
        data.path(),
    );
    let mut c = s.tcp_client();
    let line: Value = serde_json::from_str(&deep(40)).expect("valid JSON");
    assert_too_deep(&c.request(&line));
    let r = post_mcp(s.http[0], &line, &[]);
    assert_eq!(r.status, 400);
    assert_too_deep(&r.json());
    // Within the limit it is served as before.
    let fine =
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":meta(json!({}))}});
    assert!(c.request(&fine)["result"].is_object());
}

/// A raw request (its bytes as given) on its own connection: the status, 0 if none came.
fn raw_status(addr: SocketAddr, bytes: &[u8]) -> u16 {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    s.write_all(bytes).expect("write");
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out)
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

fn discover_post(target: &str, host_lines: &str) -> Vec<u8> {
    let body = serde_json::to_vec(&redmark_tests::server::discover(1)).expect("json");
    let mut r = format!(
        "POST {target} HTTP/1.1\r\n{host_lines}Content-Type: application/json\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend(body);
    r
}

#[test]
fn host_rules_of_rfc_9112() {
    let data = TempDir::new("bounds-host");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let a = s.http[0];
    let one = format!("Host: {a}\r\n");
    assert_eq!(raw_status(a, &discover_post("/mcp", &one)), 200);
    let two = format!("Host: {a}\r\nHost: {a}\r\n");
    assert_eq!(raw_status(a, &discover_post("/mcp", &two)), 400, "two Host");
    assert_eq!(raw_status(a, &discover_post("/mcp", "")), 400, "no Host");
    // Absolute form: accepted (RFC 9112 §3.2.2), and its authority is the host checked.
    let local = format!("http://{a}/mcp");
    assert_eq!(raw_status(a, &discover_post(&local, &one)), 200);
    let foreign = "http://evil.example/mcp";
    assert_eq!(
        raw_status(a, &discover_post(foreign, &one)),
        403,
        "the target's authority, not the Host line, is the host"
    );
}

/// With `--tokens` and `--max-connections 64`, 200 idle connections from one address hold at
/// most [`MAX_UNAUTHENTICATED_PER_SOURCE`](32) places: a client from another address still
/// gets in and is served.
#[test]
fn idle_unauthenticated_connections_leave_room() {
    let data = TempDir::new("bounds-idle");
    let file = data.path().join("tokens.toml");
    std::fs::write(&file, "alice = \"alice-token-0123456789\"\n").expect("tokens");
    let s = Server::start(
        &[
            "--http",
            "127.0.0.1:0",
            "--tokens",
            file.to_str().expect("path"),
            "--max-connections",
            "64",
        ],
        data.path(),
    );
    let a = s.http[0];
    let idle: Vec<TcpStream> = (0..200)
        .filter_map(|_| TcpStream::connect(a).ok())
        .collect();
    // Let the server accept (or refuse) them all.
    std::thread::sleep(Duration::from_millis(500));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let other = rt.block_on(async {
        let sock = tokio::net::TcpSocket::new_v4().expect("socket");
        sock.bind("127.0.0.2:0".parse().expect("addr"))
            .expect("bind 127.0.0.2");
        sock.connect(a).await.expect("connect").into_std()
    });
    let mut other = other.expect("std stream");
    other.set_nonblocking(false).expect("blocking");
    other
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let body = serde_json::to_vec(&redmark_tests::server::discover(1)).expect("json");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {a}\r\nAuthorization: Bearer alice-token-0123456789\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: server/discover\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let sent = other
        .write_all(head.as_bytes())
        .and_then(|_| other.write_all(&body));
    let mut out = Vec::new();
    let _ = other.read_to_end(&mut out);
    assert!(
        sent.is_ok() && out.starts_with(b"HTTP/1.1 200"),
        "a client from another address was not served: {:?}",
        String::from_utf8_lossy(&out)
    );
    assert!(
        s.stderr().matches("refused").count() <= 2,
        "refusals are logged once per burst:\n{}",
        s.stderr()
    );
    drop(idle);
}

/// PostgreSQL stopped under requests: one ERROR line for the outage (not one per request),
/// then one line when it is back.
#[test]
#[cfg_attr(not(pg_tools), ignore = "PostgreSQL is not installed")]
fn a_postgres_outage_is_logged_once_then_its_end() {
    use redmark_tests::pg::Cluster;
    let pg = Cluster::start();
    let data = TempDir::new("bounds-pg");
    let s = Server::start(
        &["--http", "127.0.0.1:0", "--store", &pg.url()],
        data.path(),
    );
    let a = s.http[0];
    let book = |id: u64, hour: u64| {
        tool_call(
            id,
            "book_room",
            json!({"day": "2097-03-03", "hour": hour, "room_id": "nook"}),
            false,
        )
    };
    assert_eq!(
        post_mcp(a, &book(1, 8), &[]).json()["result"]["isError"],
        false
    );
    pg.pg_ctl_stop();
    for i in 0..30 {
        let r = post_mcp(a, &book(10 + i, 9), &[]).json();
        assert_eq!(r["error"]["code"], -32603, "{r}");
    }
    pg.pg_ctl_start();
    let mut back = Value::Null;
    for _ in 0..50 {
        back = post_mcp(a, &book(99, 10), &[]).json();
        if back["result"]["isError"] == false {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(back["result"]["isError"], false, "{back}");
    assert!(s.wait_stderr("booking store reachable again"));
    let log = s.stderr();
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
    assert_eq!(errors.len(), 1, "one ERROR line for the outage:\n{log}");
    assert_eq!(log.matches("reachable again").count(), 1, "{log}");
}
