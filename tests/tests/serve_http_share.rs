//! One principal cannot hold every connection of an HTTP listener (issue 40, item 2): while a
//! token holder keeps `--max-connections` keep-alive connections open, and keeps opening more
//! (some of them idle, never authenticating), another principal's requests are all answered.
//! Without tokens every client is one principal: a newcomer still gets in past idle
//! keep-alive connections that fill the listener. The other client connects from 127.0.0.2,
//! as from another machine (see docs/operators.md "Bounds" for one address shared by both).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use redmark_tests::server::{discover, Server, TempDir, VERSION};

/// The listener's `--max-connections` in these tests.
const MAX: usize = 8;
const ALICE: &str = "alice-token-0123456789";
const MALLORY: &str = "mallory-token-0123456789";
/// How long one read may wait before the request counts as unanswered.
const READ: Duration = Duration::from_secs(20);

/// A keep-alive `server/discover` POST (with a bearer token if given).
fn request(addr: SocketAddr, token: Option<&str>, keep_alive: bool) -> Vec<u8> {
    let body = serde_json::to_vec(&discover(1)).expect("json");
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let close = if keep_alive {
        ""
    } else {
        "Connection: close\r\n"
    };
    let mut r = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {VERSION}\r\n\
         Mcp-Method: server/discover\r\n{close}Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend(body);
    r
}

/// Reads one response off `r`: its status, or `None` when the connection closed (or nothing
/// came within [`READ`]) before a whole response.
fn response(r: &mut BufReader<TcpStream>) -> Option<u16> {
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    let status = line.split(' ').nth(1)?.parse().ok()?;
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body).ok()?;
    Some(status)
}

/// Opens a connection and sends one request on it: the connection (kept open) and the status.
fn ask(
    addr: SocketAddr,
    token: Option<&str>,
    keep_alive: bool,
) -> (BufReader<TcpStream>, Option<u16>) {
    ask_on(
        TcpStream::connect(addr).expect("connect"),
        addr,
        token,
        keep_alive,
    )
}

/// [`ask`] on the connection `s`.
fn ask_on(
    s: TcpStream,
    addr: SocketAddr,
    token: Option<&str>,
    keep_alive: bool,
) -> (BufReader<TcpStream>, Option<u16>) {
    s.set_read_timeout(Some(READ)).expect("timeout");
    let mut w = s.try_clone().expect("clone");
    let mut r = BufReader::new(s);
    let status = match w.write_all(&request(addr, token, keep_alive)) {
        Ok(()) => response(&mut r),
        Err(_) => None,
    };
    (r, status)
}

/// Connections from another loopback address, 127.0.0.2: another client machine, as far as
/// the server can tell.
struct Elsewhere(tokio::runtime::Runtime);

impl Elsewhere {
    fn new() -> Elsewhere {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        Elsewhere(rt)
    }

    /// A connection to `addr` from 127.0.0.2.
    fn connect(&self, addr: SocketAddr) -> TcpStream {
        let s = self.0.block_on(async {
            let sock = tokio::net::TcpSocket::new_v4()?;
            sock.bind("127.0.0.2:0".parse().expect("addr"))?;
            sock.connect(addr).await?.into_std()
        });
        let s = s.expect("connect from 127.0.0.2");
        s.set_nonblocking(false).expect("blocking");
        s
    }
}

/// A hog on its own thread until `stop`: it keeps opening connections, half of them
/// authenticated with `token` and kept alive, half never sending a byte, holding up to
/// `2 * MAX` of each open (dropping its oldest). Returns how many of its requests got 200.
fn hog(
    addr: SocketAddr,
    token: Option<&'static str>,
    stop: Arc<AtomicBool>,
) -> thread::JoinHandle<u64> {
    thread::spawn(move || {
        let served = AtomicU64::new(0);
        let mut kept = std::collections::VecDeque::new();
        let mut idle = std::collections::VecDeque::new();
        while !stop.load(Ordering::Relaxed) {
            let (c, status) = ask(addr, token, true);
            if status == Some(200) {
                served.fetch_add(1, Ordering::Relaxed);
            }
            kept.push_back(c);
            if let Ok(s) = TcpStream::connect(addr) {
                idle.push_back(s);
            }
            while kept.len() > 2 * MAX {
                kept.pop_front();
            }
            while idle.len() > 2 * MAX {
                idle.pop_front();
            }
        }
        served.load(Ordering::Relaxed)
    })
}

/// A server over HTTP with `--tokens` for alice and mallory and `--max-connections` [`MAX`];
/// the folder first, so the server (dropped first) stops before its folder goes.
fn alice_and_mallory(tag: &str) -> (TempDir, Server) {
    let data = TempDir::new(tag);
    let file = data.path().join("tokens.toml");
    let tokens = format!("alice = \"{ALICE}\"\nmallory = \"{MALLORY}\"\n");
    std::fs::write(&file, tokens).expect("tokens");
    let max = MAX.to_string();
    let path = file.to_str().expect("path");
    let args = [
        "--http",
        "127.0.0.1:0",
        "--tokens",
        path,
        "--max-connections",
        &max,
    ];
    let server = Server::start(&args, data.path());
    (data, server)
}

/// With `--tokens` and `--max-connections 8`: mallory opens 8 keep-alive connections, then
/// keeps opening more (authenticated ones and idle ones) while alice sends 40 requests, each
/// on a connection of its own; every one of alice's requests is answered 200.
#[test]
fn one_principal_cannot_hold_every_connection() {
    let (_data, s) = alice_and_mallory("http-share");
    let a = s.http[0];
    // Mallory takes (or tries to take) every place with keep-alive connections.
    let held: Vec<_> = (0..MAX).map(|_| ask(a, Some(MALLORY), true)).collect();
    assert!(
        held.iter().any(|(_, st)| *st == Some(200)),
        "mallory is served too"
    );
    let stop = Arc::new(AtomicBool::new(false));
    let hogging = hog(a, Some(MALLORY), Arc::clone(&stop));
    let asked = 40;
    let alice = Elsewhere::new();
    let answered = (0..asked)
        .filter(|_| ask_on(alice.connect(a), a, Some(ALICE), false).1 == Some(200))
        .count();
    stop.store(true, Ordering::Relaxed);
    let mallory_served = hogging.join().expect("hog thread");
    assert_eq!(
        answered,
        asked,
        "alice got {answered} of {asked} requests answered while mallory held the listener \
         ({mallory_served} of mallory's later requests served); stderr:\n{}",
        s.stderr()
    );
    drop(held);
}

/// Requests kept in flight hold their connections (none is taken from under a request), so
/// one principal's share is what leaves room: mallory starts a request on each of 8
/// connections and sends its body's first byte only; half of them are hers, the rest get 503,
/// and alice's requests are all answered.
#[test]
fn requests_in_flight_hold_at_most_a_principals_share() {
    let (_data, s) = alice_and_mallory("http-share-busy");
    let a = s.http[0];
    let slow = format!(
        "POST /mcp HTTP/1.1\r\nHost: {a}\r\nAuthorization: Bearer {MALLORY}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{"
    );
    let mut busy = Vec::new();
    for _ in 0..MAX {
        let mut c = TcpStream::connect(a).expect("connect");
        c.set_read_timeout(Some(Duration::from_millis(300)))
            .expect("timeout");
        c.write_all(slow.as_bytes()).expect("write");
        busy.push(c);
    }
    // The requests beyond mallory's share are answered 503 at once (or their connections
    // closed to make room for hers); hers wait for their body.
    let waiting = busy
        .iter()
        .filter(|c| {
            let mut r: &TcpStream = c;
            let got = r.read(&mut [0u8; 64]);
            matches!(&got, Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
        })
        .count();
    assert!(
        (1..=MAX / 2).contains(&waiting),
        "{waiting} of mallory's requests in flight; at most half the listener is hers"
    );
    let asked = 20;
    let alice = Elsewhere::new();
    let answered = (0..asked)
        .filter(|_| ask_on(alice.connect(a), a, Some(ALICE), false).1 == Some(200))
        .count();
    assert_eq!(
        answered,
        asked,
        "alice got {answered} of {asked} requests answered; stderr:\n{}",
        s.stderr()
    );
    drop(busy);
}

/// Without tokens every HTTP client is `http:anonymous`: a client holding every place with
/// idle keep-alive connections (and opening more) does not lock a newcomer out.
#[test]
fn idle_keep_alive_connections_make_room_for_a_newcomer() {
    let data = TempDir::new("http-share-anon");
    let max = MAX.to_string();
    let s = Server::start(
        &["--http", "127.0.0.1:0", "--max-connections", &max],
        data.path(),
    );
    let a = s.http[0];
    let held: Vec<_> = (0..MAX).map(|_| ask(a, None, true)).collect();
    assert!(held.iter().all(|(_, st)| *st == Some(200)));
    let stop = Arc::new(AtomicBool::new(false));
    let hogging = hog(a, None, Arc::clone(&stop));
    let asked = 40;
    let newcomer = Elsewhere::new();
    let answered = (0..asked)
        .filter(|_| ask_on(newcomer.connect(a), a, None, false).1 == Some(200))
        .count();
    stop.store(true, Ordering::Relaxed);
    hogging.join().expect("hog thread");
    assert_eq!(
        answered,
        asked,
        "a newcomer got {answered} of {asked} requests answered; stderr:\n{}",
        s.stderr()
    );
    drop(held);
}
