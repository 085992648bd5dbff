//! Live changes end to end: `subscriptions/listen` over HTTP, stdio, the relay, PostgreSQL.
//!
//! Live changes: a `subscriptions/listen` stream over HTTP hears `notifications/resources/updated`
//! for the room-days it names when a booking changes them, on this instance or another one on the
//! same PostgreSQL, keeps alive while idle, and ends with its result when the server stops.
#![cfg_attr(not(pg_tools), allow(dead_code, unused_imports))]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use redmark_tests::pg::Cluster;
use redmark_tests::server::{http, meta, post_mcp, tool_call, Server, TempDir};
use serde_json::{json, Value};

/// One thing an event stream carried.
#[derive(Debug)]
enum Event {
    /// A `message` event's JSON.
    Message(Value),
    /// A comment line (`: …`), a keep-alive.
    Comment,
}

/// A `subscriptions/listen` POST whose response is read as it streams.
struct Stream {
    r: BufReader<TcpStream>,
    /// Body bytes read but not yet split into events.
    pending: Vec<u8>,
    /// The body ended (the last chunk came).
    ended: bool,
}

fn listen_msg(id: &str, uris: &[&str]) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"subscriptions/listen","params":{
        "notifications":{"resourceSubscriptions":uris},"_meta":meta(json!({}))}})
}

impl Stream {
    /// Opens a stream on `addr` for `uris`, with id `id`; panics unless it answers 200 with
    /// an event stream.
    fn open(addr: SocketAddr, id: &str, uris: &[&str]) -> Stream {
        Stream::open_as(addr, None, id, uris)
    }

    /// [`Stream::open`] with a bearer token.
    fn open_as(addr: SocketAddr, token: Option<&str>, id: &str, uris: &[&str]) -> Stream {
        let body = serde_json::to_vec(&listen_msg(id, uris)).unwrap();
        let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
        let mut s = TcpStream::connect(addr).expect("connect");
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: subscriptions/listen\r\n{auth}Content-Length: {}\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(&body).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut r = BufReader::new(s);
        let mut status = String::new();
        r.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        let mut chunked = false;
        loop {
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            let l = line.to_ascii_lowercase();
            assert!(
                !l.starts_with("content-type:") || l.contains("text/event-stream"),
                "{l}"
            );
            chunked |= l.starts_with("transfer-encoding:") && l.contains("chunked");
            if line == "\r\n" {
                break;
            }
        }
        assert!(chunked, "an open stream has no length");
        Stream {
            r,
            pending: Vec::new(),
            ended: false,
        }
    }

    /// The next event, waiting up to `wait` (`None`: none came, or the body ended).
    fn next(&mut self, wait: Duration) -> Option<Event> {
        let until = Instant::now() + wait;
        loop {
            if let Some(end) = self.pending.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = self.pending.drain(..end + 2).collect();
                let text = String::from_utf8(event).expect("utf-8 event");
                if text.starts_with(':') {
                    return Some(Event::Comment);
                }
                let data = text
                    .lines()
                    .find_map(|l| l.strip_prefix("data: "))
                    .expect("data line");
                assert!(text.starts_with("event: message\n"), "{text}");
                return Some(Event::Message(serde_json::from_str(data).expect("JSON")));
            }
            let left = until.checked_duration_since(Instant::now())?;
            if self.ended {
                return None;
            }
            self.r.get_ref().set_read_timeout(Some(left)).unwrap();
            let mut size = String::new();
            if self.r.read_line(&mut size).is_err() || size.is_empty() {
                return None;
            }
            let n = usize::from_str_radix(size.trim(), 16).expect("chunk size");
            if n == 0 {
                self.ended = true;
                continue;
            }
            let mut chunk = vec![0u8; n + 2];
            self.r.read_exact(&mut chunk).expect("chunk");
            self.pending.extend_from_slice(&chunk[..n]);
        }
    }

    /// The next message event, skipping keep-alives, within `wait`.
    fn message(&mut self, wait: Duration) -> Option<Value> {
        let until = Instant::now() + wait;
        loop {
            let left = until.checked_duration_since(Instant::now())?;
            match self.next(left)? {
                Event::Message(v) => return Some(v),
                Event::Comment => continue,
            }
        }
    }
}

/// The `redmark_listen_streams_open` gauge of the server at `addr` (a listener without tokens).
fn streams_open(addr: SocketAddr) -> String {
    let r = http(addr, "GET", "/metrics", &[], b"");
    let text = String::from_utf8(r.body).expect("UTF-8");
    text.lines()
        .find_map(|l| l.strip_prefix("redmark_listen_streams_open "))
        .unwrap_or_else(|| panic!("no listen gauge in:\n{text}"))
        .to_owned()
}

/// Long enough for any change to travel (a booking, a commit, a NOTIFY): a bound, not a goal.
const HEARD_WITHIN: Duration = Duration::from_secs(20);

fn uri(room: &str, day: &str) -> String {
    format!("redmark://rooms/{room}/{day}")
}

/// Books `room` on `day` at `hour` through `addr`; the booking's id.
fn book(addr: SocketAddr, id: u64, room: &str, day: &str, hour: u64) -> String {
    let call = tool_call(
        id,
        "book_room",
        json!({"day": day, "hour": hour, "room_id": room}),
        false,
    );
    let r = post_mcp(addr, &call, &[]).json();
    assert_eq!(r["result"]["isError"], false, "{r}");
    r["result"]["structuredContent"]["booking"]["id"]
        .as_str()
        .expect("booking id")
        .to_owned()
}

/// Asserts `v` is the update of `uri` on the stream `id`.
fn assert_updated(v: &Value, uri: &str, id: &str) {
    assert_eq!(v["method"], "notifications/resources/updated", "{v}");
    assert_eq!(v["params"]["uri"], uri, "{v}");
    assert_eq!(
        v["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], id,
        "{v}"
    );
    assert!(v.get("id").is_none(), "a notification: {v}");
}

/// The acknowledgement comes first, naming the URIs and the stream.
fn acknowledged(s: &mut Stream, id: &str, uris: &[&str]) {
    let ack = s.message(HEARD_WITHIN).expect("acknowledgement");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!(uris)
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );
}

#[test]
fn a_booking_on_this_instance_updates_the_followed_day_only() {
    let data = TempDir::new("listen-local");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let day = "2099-12-21";
    let (followed, next_day) = (uri("atrium", day), uri("atrium", "2099-12-22"));
    assert_eq!(streams_open(s.http[0]), "0");
    let mut stream = Stream::open(s.http[0], "live-1", &[&followed, &next_day]);
    acknowledged(&mut stream, "live-1", &[&followed, &next_day]);
    assert_eq!(
        streams_open(s.http[0]),
        "1",
        "the stream counted while open"
    );
    // Another room first, then the followed one: the first update is the followed day's.
    book(s.http[0], 1, "studio-b", day, 9);
    let id = book(s.http[0], 2, "atrium", day, 10);
    let v = stream.message(HEARD_WITHIN).expect("an update");
    assert_updated(&v, &followed, "live-1");
    // Cancelled: the day changed again.
    let cancel = tool_call(4, "cancel_booking", json!({"booking_id": id}), false);
    let r = post_mcp(s.http[0], &cancel, &[]).json();
    assert_eq!(r["result"]["isError"], false, "{r}");
    let v = stream
        .message(HEARD_WITHIN)
        .expect("an update for the cancel");
    assert_updated(&v, &followed, "live-1");
}

#[test]
fn an_idle_stream_keeps_alive_and_ends_with_its_result_at_shutdown() {
    let data = TempDir::new("listen-idle");
    let s = Server::start(&["--http", "127.0.0.1:0", "--keep-alive", "1"], data.path());
    let followed = uri("nook", "2099-12-21");
    let mut stream = Stream::open(s.http[0], "idle", &[&followed]);
    acknowledged(&mut stream, "idle", &[&followed]);
    for _ in 0..3 {
        // One interval (1 s) and then some: a keep-alive, nothing else.
        match stream.next(Duration::from_secs(5)) {
            Some(Event::Comment) => {}
            other => panic!("expected a keep-alive, got {other:?}"),
        }
    }
    // A second stream, dropped by its client: no longer counted once the server's next
    // keep-alive finds it gone.
    let mut gone = Stream::open(s.http[0], "gone", &[&followed]);
    acknowledged(&mut gone, "gone", &[&followed]);
    assert_eq!(streams_open(s.http[0]), "2");
    drop(gone);
    let until = Instant::now() + HEARD_WITHIN;
    while streams_open(s.http[0]) != "1" && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(streams_open(s.http[0]), "1", "the dropped stream uncounted");
    s.signal("TERM");
    let end = stream.message(HEARD_WITHIN).expect("the closing result");
    assert_eq!(end["id"], "idle", "{end}");
    assert_eq!(end["result"]["resultType"], "complete", "{end}");
    assert_eq!(
        end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "idle"
    );
    assert!(
        stream.next(HEARD_WITHIN).is_none(),
        "the body ends after the result"
    );
}

/// Ten minutes idle, with the default keep-alive: the stream is still open and still hears.
#[test]
#[ignore = "takes ten minutes; an_idle_stream_keeps_alive_… covers the keep-alive quickly"]
fn a_stream_survives_ten_minutes_idle() {
    let data = TempDir::new("listen-ten-minutes");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let followed = uri("atrium", "2099-12-23");
    let mut stream = Stream::open(s.http[0], "long", &[&followed]);
    acknowledged(&mut stream, "long", &[&followed]);
    let until = Instant::now() + Duration::from_secs(600);
    while Instant::now() < until {
        assert!(matches!(
            stream.next(Duration::from_secs(30)),
            Some(Event::Comment)
        ));
    }
    book(s.http[0], 1, "atrium", "2099-12-23", 9);
    let v = stream
        .message(HEARD_WITHIN)
        .expect("an update after ten minutes");
    assert_updated(&v, &followed, "long");
}

#[test]
fn a_listen_naming_no_room_day_is_refused() {
    let data = TempDir::new("listen-refused");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let r = post_mcp(
        s.http[0],
        &listen_msg("x", &["redmark://rooms/cellar/2099-12-21"]),
        &[],
    );
    assert_eq!(r.status, 400);
    let v = r.json();
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert_eq!(
        v["error"]["data"]["uri"],
        "redmark://rooms/cellar/2099-12-21"
    );
    let d = post_mcp(s.http[0], &redmark_tests::server::discover(1), &[]).json();
    assert_eq!(
        d["result"]["capabilities"]["resources"]["subscribe"], true,
        "{d}"
    );
}

#[test]
#[cfg_attr(not(pg_tools), ignore = "PostgreSQL is not installed")]
fn a_booking_on_another_instance_reaches_the_stream_through_postgres() {
    let pg = Cluster::start();
    let url = pg.url();
    let (da, db) = (TempDir::new("listen-pg-a"), TempDir::new("listen-pg-b"));
    let a = Server::start(&["--http", "127.0.0.1:0", "--store", &url], da.path());
    let b = Server::start(&["--http", "127.0.0.1:0", "--store", &url], db.path());
    let day = "2099-12-21";
    let followed = uri("atrium", day);
    let mut stream = Stream::open(a.http[0], "pg", &[&followed]);
    acknowledged(&mut stream, "pg", &[&followed]);
    // On B: a room A's client does not follow, then the one it does (committed in that order,
    // and PostgreSQL delivers notifications in commit order).
    book(b.http[0], 1, "nook", day, 9);
    book(b.http[0], 2, "atrium", day, 11);
    let v = stream
        .message(HEARD_WITHIN)
        .expect("an update from instance B");
    assert_updated(&v, &followed, "pg");
}

/// Sends `msg` on a line client and returns the lines that come back until `done` says one
/// is the last wanted (answers and notifications interleave).
fn lines_until<R, W>(
    c: &mut redmark_tests::server::LineClient<R, W>,
    mut done: impl FnMut(&[Value]) -> bool,
) -> Vec<Value>
where
    R: std::io::Read + Send + 'static,
    W: std::io::Write,
{
    let mut got = Vec::new();
    while !done(&got) {
        got.push(c.recv());
    }
    got
}

fn book_call(id: u64, room: &str, day: &str, hour: u64) -> Value {
    tool_call(
        id,
        "book_room",
        json!({"day": day, "hour": hour, "room_id": room}),
        false,
    )
}

fn cancelled(id: &str) -> Value {
    json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}})
}

#[test]
fn over_stdio_updates_interleave_with_answers_and_a_cancel_ends_the_stream() {
    let data = TempDir::new("listen-stdio");
    let mut s = Server::start(&[], data.path());
    let mut c = s.stdio();
    let day = "2099-12-21";
    let followed = uri("atrium", day);
    c.send(&listen_msg("s1", &[&followed]));
    let ack = c.recv();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "s1"
    );
    // The booking's answer and the stream's update, on the one channel.
    c.send(&book_call(2, "atrium", day, 9));
    let got = lines_until(&mut c, |g| g.len() == 2);
    let answer = got
        .iter()
        .find(|v| v["id"] == 2)
        .expect("the booking's answer");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let update = got
        .iter()
        .find(|v| v.get("id").is_none())
        .expect("an update");
    assert_updated(update, &followed, "s1");
    // The client ends s1 and opens s2: the next booking updates s2 only.
    c.send(&cancelled("s1"));
    c.send(&listen_msg("s2", &[&followed]));
    let ack = c.recv();
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "s2"
    );
    c.send(&book_call(3, "atrium", day, 10));
    let got = lines_until(&mut c, |g| g.len() == 2);
    let updates: Vec<&Value> = got.iter().filter(|v| v.get("id").is_none()).collect();
    assert_eq!(updates.len(), 1, "{got:?}");
    assert_updated(updates[0], &followed, "s2");
    // The server stops: it ends s2 with notifications/cancelled naming it.
    s.signal("TERM");
    let end = c.recv();
    assert_eq!(end["method"], "notifications/cancelled", "{end}");
    assert_eq!(end["params"]["requestId"], "s2", "{end}");
}

#[test]
fn through_the_shared_folder_relay_a_stream_hears_the_owner_s_bookings() {
    let data = TempDir::new("listen-relay");
    let mut owner = Server::start(&[], data.path());
    let mut o = owner.stdio();
    let d = o.request(&redmark_tests::server::discover(1));
    assert_eq!(
        d["result"]["capabilities"]["resources"]["subscribe"], true,
        "{d}"
    );
    let mut relayed = Server::start(&[], data.path());
    assert!(
        relayed.wait_stderr("passing this one's messages"),
        "{}",
        relayed.stderr()
    );
    let mut r = relayed.stdio();
    let day = "2099-12-22";
    let followed = uri("nook", day);
    r.send(&listen_msg("via-relay", &[&followed]));
    let ack = r.recv();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    // Booked on the owner's own stdio, heard through the relay.
    let booked = o.request(&book_call(2, "nook", day, 14));
    assert_eq!(booked["result"]["isError"], false, "{booked}");
    let v = r.recv();
    assert_updated(&v, &followed, "via-relay");
}

#[test]
#[cfg_attr(not(pg_tools), ignore = "PostgreSQL is not installed")]
fn the_python_sdk_2_3_hears_a_booking_on_another_instance() {
    let Some(py) = redmark_tests::peers::python_sdk_2_3("REDMARK_REQUIRE_PG") else {
        return;
    };
    let pg = Cluster::start();
    let url = pg.url();
    let (da, db) = (TempDir::new("listen-sdk-a"), TempDir::new("listen-sdk-b"));
    let a = Server::start(&["--http", "127.0.0.1:0", "--store", &url], da.path());
    let b = Server::start(&["--http", "127.0.0.1:0", "--store", &url], db.path());
    let day = "2099-12-24";
    let followed = uri("studio-b", day);
    let (la, lb) = (
        format!("http://{}/mcp", a.http[0]),
        format!("http://{}/mcp", b.http[0]),
    );
    let args = [&la, &lb, &followed, "studio-b", "nook", day];
    let out = redmark_tests::peers::run_python(&py, "listen_client.py", &args);
    assert_eq!(out["honored"], json!([followed]), "{out}");
    assert_eq!(out["updated"], followed, "{out}");
    assert!(out["subscription"].is_string(), "{out}");
}

#[test]
fn an_open_stream_counts_against_its_principal_s_share() {
    const ALICE: &str = "alice-token-0123456789";
    const BOB: &str = "bob-token-0123456789ab";
    let data = TempDir::new("listen-share");
    let file = data.path().join("tokens.toml");
    std::fs::write(&file, format!("alice = \"{ALICE}\"\nbob = \"{BOB}\"\n")).unwrap();
    let s = Server::start(
        &[
            "--http",
            "127.0.0.1:0",
            "--tokens",
            file.to_str().unwrap(),
            "--max-connections-per-principal",
            "1",
        ],
        data.path(),
    );
    let followed = uri("atrium", "2099-12-21");
    let mut stream = Stream::open_as(s.http[0], Some(ALICE), "share", &[&followed]);
    acknowledged(&mut stream, "share", &[&followed]);
    let as_ = |token: &str| {
        let auth = format!("Bearer {token}");
        post_mcp(
            s.http[0],
            &redmark_tests::server::discover(1),
            &[("Authorization", auth.as_str())],
        )
        .status
    };
    assert_eq!(as_(ALICE), 503, "Alice's one connection is her stream");
    assert_eq!(as_(BOB), 200, "Bob's share is his own");
    // The stream goes on: a booking still reaches it.
    book_as(s.http[0], BOB, "atrium", "2099-12-21", 15);
    let v = stream.message(HEARD_WITHIN).expect("an update");
    assert_updated(&v, &followed, "share");
}

/// Books as the holder of `token`.
fn book_as(addr: SocketAddr, token: &str, room: &str, day: &str, hour: u64) {
    let auth = format!("Bearer {token}");
    let call = book_call(1, room, day, hour);
    let r = post_mcp(addr, &call, &[("Authorization", auth.as_str())]).json();
    assert_eq!(r["result"]["isError"], false, "{r}");
}
