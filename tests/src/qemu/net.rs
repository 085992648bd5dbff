//! The networked door panel under QEMU: its Ethernet on QEMU's user networking, its HTTP and
//! TCP ports forwarded to loopback, and a small blocking HTTP/1.1 client for raw requests.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use super::{Panel, LM3S6965EVB, REPLY_TIMEOUT};

/// The networked panel (`Build::NET`) under QEMU's user networking, its HTTP port (80) and
/// TCP line port (7000) forwarded to ephemeral loopback ports (`-nic user,model=stellaris,
/// hostfwd=tcp:127.0.0.1:PORT-:80,...`). Dropping it kills QEMU.
pub struct NetPanel {
    /// The QEMU process (stderr, reset).
    pub panel: Panel,
    /// Loopback port forwarded to the panel's HTTP port.
    pub http: u16,
    /// Loopback port forwarded to the panel's TCP line port.
    pub tcp: u16,
    /// The keep-alive connection [`NetPanel::post`] uses, as HTTP clients keep one.
    conn: std::sync::Mutex<Option<TcpStream>>,
}

/// The start of the line the panel prints once it serves on the network.
const NET_LINE: &str = "redmark-panel: net: 10.0.2.15 (static";

/// Two free loopback ports for QEMU's forwarding, distinct: both are held while they are picked
/// (one picked and let go, then the other, could be the same port twice, and QEMU then cannot
/// forward the second).
fn free_ports() -> (u16, u16) {
    let bind = || std::net::TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
    let (a, b) = (bind(), bind());
    let port = |l: &std::net::TcpListener| l.local_addr().expect("its address").port();
    (port(&a), port(&b))
}

/// One HTTP answer: status, head (lower-cased header names), body.
#[derive(Debug)]
pub struct HttpAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpAnswer {
    /// A header's value, by lower-case name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl NetPanel {
    /// Boots `image` (a `Build::NET` image) and waits until it serves.
    pub fn boot(image: &Path) -> NetPanel {
        NetPanel::boot_with(image, &[])
    }

    /// [`NetPanel::boot`] with more QEMU arguments (an SD card's `-drive`, say).
    pub fn boot_with(image: &Path, extra: &[String]) -> NetPanel {
        let (http, tcp) = free_ports();
        let nic = format!(
            "user,model=stellaris,hostfwd=tcp:127.0.0.1:{http}-:80,hostfwd=tcp:127.0.0.1:{tcp}-:7000"
        );
        let mut args = vec!["-nic".to_owned(), nic];
        args.extend_from_slice(extra);
        let panel = Panel::boot_with(LM3S6965EVB, image, &args);
        let p = NetPanel {
            panel,
            http,
            tcp,
            conn: std::sync::Mutex::new(None),
        };
        p.wait_up();
        p
    }

    fn wait_up(&self) {
        assert!(
            self.panel.wait_stderr(NET_LINE, REPLY_TIMEOUT),
            "the networked panel did not come up:\n{}",
            self.panel.stderr()
        );
    }

    /// The MCP endpoint, as a client outside would name it.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.http)
    }

    /// The TCP line address.
    pub fn tcp_addr(&self) -> String {
        format!("127.0.0.1:{}", self.tcp)
    }

    /// Resets the emulated board (QMP `system_reset`) and waits until it serves again.
    pub fn reset(&mut self) {
        let nets = |p: &Panel| p.stderr().matches(NET_LINE).count();
        let before = nets(&self.panel);
        self.panel.reset();
        let end = Instant::now() + REPLY_TIMEOUT;
        while nets(&self.panel) == before {
            assert!(
                Instant::now() < end,
                "no net line after the reset:\n{}",
                self.panel.stderr()
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends raw bytes on a fresh HTTP connection and reads one answer (by its
    /// Content-Length); the client closes first, so the panel's socket is free at once.
    pub fn http_raw(&self, request: &[u8]) -> HttpAnswer {
        let mut s = self.connect();
        s.write_all(request).expect("send the request");
        read_answer(&mut s)
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.http)).expect("connect");
        s.set_read_timeout(Some(REPLY_TIMEOUT)).unwrap();
        s
    }

    /// Sends `request` on the keep-alive connection and reads the answer. A connection the
    /// panel has dropped (a reset, its idle timeout) answers nothing: then once more on a
    /// fresh one.
    pub fn keep_alive(&self, request: &[u8]) -> HttpAnswer {
        let mut conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        for _ in 0..2 {
            let s = conn.get_or_insert_with(|| self.connect());
            if s.write_all(request).is_ok() {
                if let Some(a) = try_read_answer(s) {
                    return a;
                }
            }
            *conn = None;
        }
        panic!(
            "no answer on a fresh connection either:\n{}",
            self.panel.stderr()
        )
    }

    /// `POST /mcp` with `body` and the MCP headers a 2026-07-28 client sends for it.
    pub fn post(&self, body: &serde_json::Value) -> HttpAnswer {
        let text = body.to_string();
        let method = body["method"].as_str().unwrap_or("");
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: {method}\r\nContent-Length: {}\r\n",
            self.http,
            text.len()
        );
        if let Some(name) = body["params"]["name"].as_str() {
            head.push_str(&format!("Mcp-Name: {name}\r\n"));
        }
        head.push_str("\r\n");
        head.push_str(&text);
        self.keep_alive(head.as_bytes())
    }
}

/// Reads one HTTP/1.1 answer from `s` (head, then Content-Length bytes of body).
pub fn read_answer(s: &mut impl Read) -> HttpAnswer {
    try_read_answer(s).expect("a whole HTTP answer")
}

/// [`read_answer`], or None if the connection ends or fails before a whole answer.
pub fn try_read_answer(s: &mut impl Read) -> Option<HttpAnswer> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => buf.push(byte[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8_lossy(&buf).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).ok()?;
    Some(HttpAnswer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// What a [`slow_client`] saw: when the panel dropped it (after its first byte), and what
/// it was sent before that.
#[derive(Debug)]
pub struct SlowEnd {
    /// Time from its first byte to the end of its connection; None: still open at the end.
    pub dropped_after: Option<Duration>,
    /// Everything the panel sent it.
    pub received: String,
}

/// A client that connects to `port` on loopback and sends `bytes` one byte every `step`
/// (reading whatever comes back meanwhile) until the connection ends or `until`.
pub fn slow_client(
    port: u16,
    bytes: &'static [u8],
    step: Duration,
    until: Instant,
) -> thread::JoinHandle<SlowEnd> {
    thread::spawn(move || {
        let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect the slow client");
        s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        let start = Instant::now();
        let (mut sent, mut next) = (0, start);
        let mut received = Vec::new();
        let mut buf = [0u8; 1024];
        let end = |received: &[u8], dropped: bool| SlowEnd {
            dropped_after: dropped.then(|| start.elapsed()),
            received: String::from_utf8_lossy(received).into_owned(),
        };
        while Instant::now() < until {
            if Instant::now() >= next && sent < bytes.len() {
                if s.write_all(&bytes[sent..=sent]).is_err() {
                    return end(&received, true);
                }
                sent += 1;
                next += step;
            }
            match s.read(&mut buf) {
                Ok(0) => return end(&received, true),
                Ok(n) => received.extend_from_slice(&buf[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return end(&received, true),
            }
        }
        end(&received, false)
    })
}

/// Runs `attempt` (given the time left) on fresh connections until it answers or `within`
/// has passed, as a client that is turned away tries again; how long it took.
pub fn served_within<T>(
    within: Duration,
    mut attempt: impl FnMut(Duration) -> Option<T>,
) -> Option<(T, Duration)> {
    let start = Instant::now();
    while start.elapsed() < within {
        if let Some(t) = attempt(within - start.elapsed()) {
            return Some((t, start.elapsed()));
        }
        thread::sleep(Duration::from_millis(100));
    }
    None
}

/// One attempt of a new client: connects to `port`, sends `request`, and reads until the
/// reader `answered` has what it wants; None if the connection ends or `left` passes first.
pub fn exchange_once<T>(
    port: u16,
    request: &[u8],
    left: Duration,
    answered: impl FnOnce(&mut TcpStream) -> Option<T>,
) -> Option<T> {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut s = TcpStream::connect_timeout(&addr, left).ok()?;
    s.set_read_timeout(Some(left.max(Duration::from_millis(1))))
        .ok()?;
    s.write_all(request).ok()?;
    answered(&mut s)
}
