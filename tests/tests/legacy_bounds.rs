//! The 2025-11-25 HTTP bridge under a hostile client (issue 35): every resource bounded
//! whatever the client sends. One test per numbered item of the issue:
//! 1. a pipelined `ping` flood into a session with a waiting question keeps the server's RSS
//!    within [`RSS_GROWTH_BOUND_KB`] of its level before (one timer per session, not one per
//!    request);
//! 2. every waiting question of a session times out, not just the first;
//! 3. one principal opening sessions without end never ends another's session;
//! 4. a second request with the id of a call in flight is refused, the first keeps its answer;
//!
//! and of point 5: `DELETE` of a session without a token is 401.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use redmark_tests::server::{http, HttpResponse, Server, TempDir};
use serde_json::{json, Value};

/// How long the flood of test 1 lasts (the reproduction ran 20 s; 10 s keeps the
/// suite fast and already took today's code past the bound: see the test).
const FLOOD: Duration = Duration::from_secs(10);

/// How far the server's RSS may rise over its level before the flood, through the flood and
/// after it. Measured on a debug build, 10 s, about 65 000 pings: before the fix it rose by
/// about 40 MB (one 120 s timer kept per ping); after, by under 1 MB.
const RSS_GROWTH_BOUND_KB: u64 = 8 * 1024;

/// How long a read of these tests waits before it counts as hung.
const READ: Duration = Duration::from_secs(20);

/// A keep-alive HTTP/1.1 connection to the server.
struct Conn {
    addr: SocketAddr,
    r: BufReader<TcpStream>,
    w: TcpStream,
}

/// The head of a response: status and headers (names lower-cased).
struct Head {
    status: u16,
    headers: Vec<(String, String)>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Conn {
    fn open(addr: SocketAddr) -> Conn {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(READ)).expect("timeout");
        Conn {
            addr,
            r: BufReader::new(s.try_clone().expect("clone")),
            w: s,
        }
    }

    /// Writes one POST of `msg` (a 2025-11-25 client's headers; session and token if given).
    fn post(&mut self, msg: &Value, session: Option<&str>, token: Option<&str>) {
        let body = serde_json::to_vec(msg).expect("json");
        self.w
            .write_all(&request(self.addr, &body, session, token))
            .expect("write");
    }

    fn head(&mut self) -> Head {
        let mut line = String::new();
        self.r.read_line(&mut line).expect("status line");
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("status line {line:?}"));
        let mut headers = Vec::new();
        loop {
            let mut l = String::new();
            self.r.read_line(&mut l).expect("header");
            let l = l.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
        }
        Head { status, headers }
    }

    /// A whole `Content-Length` body.
    fn body(&mut self, head: &Head) -> Vec<u8> {
        let n: usize = head
            .header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut b = vec![0; n];
        self.r.read_exact(&mut b).expect("body");
        b
    }

    /// The next SSE event of a chunked `text/event-stream` body; `None` when it ends.
    fn event(&mut self, pending: &mut Vec<u8>) -> Option<Value> {
        loop {
            if let Some(end) = pending.windows(2).position(|w| w == b"\n\n") {
                let ev: Vec<u8> = pending.drain(..end + 2).collect();
                let text = String::from_utf8_lossy(&ev);
                let data = text.lines().find_map(|l| l.strip_prefix("data: "))?;
                return Some(serde_json::from_str(data).expect("json event"));
            }
            let mut size = String::new();
            if self.r.read_line(&mut size).ok()? == 0 {
                return None;
            }
            let n = usize::from_str_radix(size.trim(), 16).ok()?;
            let mut chunk = vec![0; n + 2];
            self.r.read_exact(&mut chunk).ok()?;
            if n == 0 {
                return None;
            }
            pending.extend_from_slice(&chunk[..n]);
        }
    }
}

/// The bytes of a keep-alive POST to `/mcp`.
fn request(addr: SocketAddr, body: &[u8], session: Option<&str>, token: Option<&str>) -> Vec<u8> {
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(s) = session {
        req.push_str(&format!(
            "Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        ));
    }
    if let Some(t) = token {
        req.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    req.push_str("\r\n");
    let mut out = req.into_bytes();
    out.extend_from_slice(body);
    out
}

/// One POST on its own connection, read whole.
fn post(addr: SocketAddr, msg: &Value, session: Option<&str>, token: Option<&str>) -> HttpResponse {
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let auth = token.map(|t| format!("Bearer {t}"));
    if let Some(a) = &auth {
        h.push(("Authorization", a));
    }
    if let Some(s) = session {
        h.push(("Mcp-Session-Id", s));
        h.push(("MCP-Protocol-Version", "2025-11-25"));
    }
    http(
        addr,
        "POST",
        "/mcp",
        &h,
        &serde_json::to_vec(msg).expect("json"),
    )
}

/// Opens an initialized session that can answer questions; its id.
fn session(addr: SocketAddr, token: Option<&str>) -> String {
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},
        "clientInfo":{"name":"hostile","version":"1"}}});
    let r = post(addr, &init, None, token);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let sid = r.header("mcp-session-id").expect("session id").to_owned();
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    assert_eq!(post(addr, &note, Some(&sid), token).status, 202);
    sid
}

/// A `tools/call` that asks which "big room" is meant.
fn ambiguous_call(id: u64, hour: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"book_room",
        "arguments":{"day":"2099-09-17","hour":hour,"room_hint":"the big room"}}})
}

/// Starts call `id` in session `sid` on a connection of its own; returns the connection (its
/// stream open) after reading the pushed question, and the question.
fn waiting_call(
    addr: SocketAddr,
    sid: &str,
    token: Option<&str>,
    id: u64,
    hour: u64,
) -> (Conn, Vec<u8>, Value) {
    let mut c = Conn::open(addr);
    c.post(&ambiguous_call(id, hour), Some(sid), token);
    let head = c.head();
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-type"), Some("text/event-stream"));
    let mut pending = Vec::new();
    let q = c.event(&mut pending).expect("a question");
    assert_eq!(q["method"], "elicitation/create", "{q}");
    (c, pending, q)
}

/// The server's resident set size, from `/proc/<pid>/status`.
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// Item 1: pipelined `ping`s into a session whose question waits, on two keep-alive
/// connections for [`FLOOD`]: RSS stays under its level before plus [`RSS_GROWTH_BOUND_KB`]
/// throughout and after.
#[test]
fn a_ping_flood_beside_a_waiting_question_keeps_memory_bounded() {
    let data = TempDir::new("bounds-flood");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let addr = s.http[0];
    let sid = session(addr, None);
    let (_call, _, _) = waiting_call(addr, &sid, None, 1, 9);
    let before = rss_kb(s.pid());
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    for conn in 0..2u64 {
        let c = Conn::open(addr);
        let mut w = c.w.try_clone().expect("clone");
        let stop_w = Arc::clone(&stop);
        let sid = sid.clone();
        threads.push(thread::spawn(move || {
            let mut batch = Vec::new();
            for i in 0..64u64 {
                let ping =
                    json!({"jsonrpc":"2.0","id":conn * 1_000_000_000 + i + 10,"method":"ping"});
                let body = serde_json::to_vec(&ping).expect("json");
                batch.extend(request(addr, &body, Some(&sid), None));
            }
            while !stop_w.load(Ordering::Relaxed) {
                if w.write_all(&batch).is_err() {
                    break;
                }
            }
            let _ = w.shutdown(std::net::Shutdown::Write);
        }));
        let counter = Arc::clone(&answered);
        let mut r = c.r;
        threads.push(thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let got = buf[..n].windows(4).filter(|w| w == b"HTTP").count();
                counter.fetch_add(got as u64, Ordering::Relaxed);
            }
        }));
    }
    let start = Instant::now();
    let mut peak = before;
    while start.elapsed() < FLOOD {
        thread::sleep(Duration::from_millis(200));
        peak = peak.max(rss_kb(s.pid()));
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    thread::sleep(Duration::from_millis(500));
    let after = rss_kb(s.pid());
    let pings = answered.load(Ordering::Relaxed);
    eprintln!(
        "flood: {pings} pings answered in {:?}; RSS {before} kB before, peak {peak} kB, {after} kB after",
        FLOOD
    );
    assert!(
        pings > 1000,
        "the flood did not get through: {pings} answers"
    );
    let bound = before + RSS_GROWTH_BOUND_KB;
    assert!(
        peak.max(after) < bound,
        "RSS reached {} kB (bound {bound} kB) with {pings} pings",
        peak.max(after)
    );
}

/// Item 2: three calls waiting in one session, started 200 ms apart: each stream carries its
/// question's cancellation and the call's tool error, then ends.
#[test]
fn every_waiting_question_times_out() {
    let data = TempDir::new("bounds-timers");
    let env = [
        ("REDMARK_KEY", redmark_tests::server::TEST_KEY),
        ("REDMARK_TEST_QUESTION_WAIT_MS", "600"),
    ];
    let s = Server::start_with(&["--http", "127.0.0.1:0"], data.path(), &env);
    let addr = s.http[0];
    let sid = session(addr, None);
    let mut calls = Vec::new();
    for n in 0..3 {
        calls.push(waiting_call(addr, &sid, None, 10 + n, 9 + n));
        thread::sleep(Duration::from_millis(200));
    }
    let started = Instant::now();
    for (mut c, mut pending, q) in calls {
        let mut rest = Vec::new();
        while let Some(e) = c.event(&mut pending) {
            rest.push(e);
        }
        assert_eq!(rest.len(), 2, "after {q}: {rest:?}");
        assert_eq!(rest[0]["method"], "notifications/cancelled");
        assert_eq!(rest[0]["params"]["requestId"], q["id"]);
        assert_eq!(rest[1]["result"]["isError"], true, "{}", rest[1]);
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-0123456789ab";

fn with_tokens(tag: &str) -> (TempDir, Server) {
    let data = TempDir::new(tag);
    let file = data.path().join("tokens.toml");
    std::fs::write(&file, format!("alice = \"{ALICE}\"\nbob = \"{BOB}\"\n")).expect("tokens");
    let s = Server::start(
        &[
            "--http",
            "127.0.0.1:0",
            "--tokens",
            file.to_str().expect("path"),
        ],
        data.path(),
    );
    (data, s)
}

/// Item 3: bob opening 300 sessions does not end alice's, whose question waits: she can still
/// answer it and her stream gets the booking.
#[test]
fn a_session_flood_never_ends_another_principals_session() {
    let (_data, s) = with_tokens("bounds-principals");
    let addr = s.http[0];
    let sid = session(addr, Some(ALICE));
    let (mut alice, mut pending, q) = waiting_call(addr, &sid, Some(ALICE), 7, 9);
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bob","version":"1"}}});
    for _ in 0..300 {
        assert_eq!(post(addr, &init, None, Some(BOB)).status, 200);
    }
    let ping = json!({"jsonrpc":"2.0","id":8,"method":"ping"});
    let r = post(addr, &ping, Some(&sid), Some(ALICE));
    assert_eq!(r.status, 200, "alice's session is gone");
    let answer = json!({"jsonrpc":"2.0","id":q["id"],"result":{"action":"accept",
        "content":{"room_id":"studio-b"}}});
    assert_eq!(post(addr, &answer, Some(&sid), Some(ALICE)).status, 202);
    let done = alice.event(&mut pending).expect("alice's result");
    assert_eq!(done["id"], 7);
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert!(alice.event(&mut pending).is_none(), "the stream ends");
}

/// Item 4: a second `tools/call` with the id of one in flight is refused at once; the first
/// keeps its question and gets its own result.
#[test]
fn a_duplicate_id_in_flight_is_refused() {
    let data = TempDir::new("bounds-ids");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let addr = s.http[0];
    let sid = session(addr, None);
    let (mut first, mut pending, q) = waiting_call(addr, &sid, None, 5, 9);
    let mut second = Conn::open(addr);
    second.post(&ambiguous_call(5, 10), Some(&sid), None);
    let head = second.head();
    assert_eq!(head.status, 200);
    assert_eq!(
        head.header("content-type"),
        Some("application/json"),
        "the second call was taken"
    );
    let refused: Value = serde_json::from_slice(&second.body(&head)).expect("json");
    assert_eq!(refused["id"], 5);
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let answer = json!({"jsonrpc":"2.0","id":q["id"],"result":{"action":"accept",
        "content":{"room_id":"studio-b"}}});
    assert_eq!(post(addr, &answer, Some(&sid), None).status, 202);
    let done = first.event(&mut pending).expect("the first call's result");
    assert_eq!(done["id"], 5);
    assert_eq!(done["result"]["isError"], false, "{done}");
    let text = done["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("09:00"), "the first call's booking: {text}");
}

/// Point 5: `DELETE` (or `GET`) of a session without a valid token is 401, not 405.
#[test]
fn a_session_request_without_a_token_is_unauthorized() {
    let (_data, s) = with_tokens("bounds-401");
    let addr = s.http[0];
    let sid = session(addr, Some(ALICE));
    for method in ["DELETE", "GET"] {
        for auth in [None, Some("Bearer wrong-token-0123456789")] {
            let mut h = vec![("Mcp-Session-Id", sid.as_str())];
            if let Some(a) = auth {
                h.push(("Authorization", a));
            }
            let r = http(addr, method, "/mcp", &h, b"");
            assert_eq!(r.status, 401, "{method} {auth:?}");
            assert_eq!(r.header("www-authenticate"), Some("Bearer"));
        }
    }
    let bob = format!("Bearer {BOB}");
    let h = [("Mcp-Session-Id", sid.as_str()), ("Authorization", &bob)];
    assert_eq!(
        http(addr, "DELETE", "/mcp", &h, b"").status,
        404,
        "not bob's"
    );
    let alice = format!("Bearer {ALICE}");
    let h = [("Mcp-Session-Id", sid.as_str()), ("Authorization", &alice)];
    assert_eq!(http(addr, "DELETE", "/mcp", &h, b"").status, 200);
}
