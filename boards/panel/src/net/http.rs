//! Streamable HTTP on one TCP connection, as `redmark serve --http` answers it:
//! 1. Host/Origin guard (see [`request::guard`]) → 403;
//! 2. path `/mcp` → else 404; method POST → else 405 with `Allow: POST`;
//! 3. a body of at most [`BODY_MAX`] bytes (`Content-Length`; chunked bodies get 411) → else
//!    413 with the engine's id-less `-32600` "message too large", and the connection closes;
//! 4. the engine answers through `Engine::handle_http` with the MCP headers
//!    (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), which it checks against
//!    the body; its status is the HTTP status; one message → `application/json`, several →
//!    `text/event-stream`; a notification → 202 without a body.
//!
//! Keep-alive: requests are answered in order, the next one read only once the last answer
//! has left the send buffer. A request not whole [`super::MESSAGE_MS`] after its first byte
//! gets 408 and the connection closes; see `slots` for the other deadline and the spare
//! listener.

use embedded_storage::nor_flash::MultiwriteNorFlash;
use redmark_core::engine::{Context, HttpHeaders};
use redmark_core::serve::Host;
use redmark_core::wire::lines::Line;
use redmark_panel_http::{self as request, HeadError};
use smoltcp::socket::tcp::{Socket, State};
use smoltcp::wire::Ipv4Address;

use super::slots::Wait;
use super::{Pass, HTTP_PORT, PRINCIPAL};
use crate::{Panel, PanelHost, LINE_MAX};

/// Largest body accepted (one JSON-RPC message, as on the UART).
pub const BODY_MAX: usize = LINE_MAX;
/// Request head and body together: what the connection's receive buffer holds.
pub const REQUEST_MAX: usize = super::BUF;

/// One HTTP connection's state. The request itself waits in the socket's receive buffer
/// until it is whole, and is then copied once into the shared scratch buffer.
pub struct Conn {
    /// Bytes the receive buffer held at the last look (nothing new: nothing to parse).
    seen: usize,
    /// Its deadlines (see `slots`).
    pub wait: Wait,
}

impl Conn {
    pub const fn new() -> Conn {
        Conn { seen: 0, wait: Wait::new() }
    }

    fn reset(&mut self) {
        *self = Conn::new();
    }
}

/// The buffers one pass lends the connection: the engine's output and the scratch a
/// request is copied into.
pub(crate) struct Lent<'a> {
    pub out: &'a mut [u8],
    pub scratch: &'a mut [u8; REQUEST_MAX],
}

/// One pass over an HTTP socket: (re)listen, enforce the deadlines, look at what arrived,
/// answer at most one request.
pub(crate) fn serve<F: MultiwriteNorFlash>(
    s: &mut Socket<'_>,
    c: &mut Conn,
    engine: &mut Panel<F>,
    host: &mut PanelHost,
    lent: Lent<'_>,
    now_ms: u64,
    ip: Ipv4Address,
) -> Pass {
    if !s.is_open() {
        c.reset();
        let _ = s.listen(HTTP_PORT);
        return Pass::Idle;
    }
    if s.state() == State::Listen {
        return Pass::Idle;
    }
    c.wait.begin(now_ms);
    if c.wait.expired(now_ms) {
        if c.wait.in_message() && s.send_queue() == 0 && s.may_send() {
            // A request not whole in time: say so and close (the close has IDLE_MS).
            plain(s, 408, b"Request timeout: send the whole request at once\n", true, b"");
            s.close();
            c.wait.restart(now_ms);
        } else {
            s.abort();
        }
        return Pass::Busy;
    }
    if s.state() == State::CloseWait && s.send_queue() == 0 && !s.can_recv() {
        // The client closed and has every answer: free the socket for the next one now,
        // rather than after our FIN's round trip (a client that connects again at once
        // would meet no listener and be reset).
        return relisten(s, c);
    }
    if s.send_queue() > 0 || !s.may_send() {
        return Pass::Idle;
    }
    let queued = s.recv_queue();
    if queued > 0 {
        c.wait.started(now_ms);
    }
    if queued == c.seen {
        // Nothing new since the last look.
        if s.state() == State::CloseWait {
            return relisten(s, c);
        }
        return Pass::Idle;
    }
    c.seen = queued;
    let Ok(n) = s.peek_slice(&mut lent.scratch[..]) else { return Pass::Busy };
    let full = n == REQUEST_MAX;
    match request(s, &lent.scratch[..n], full, engine, host, lent.out, ip) {
        Outcome::Wait => Pass::Busy,
        Outcome::Answered { close, used } => {
            discard(s, used);
            // Look again once the answer has left: a pipelined request may be waiting.
            c.seen = 0;
            c.wait.restart(now_ms);
            if close {
                s.close();
            }
            Pass::Busy
        }
    }
}

/// Drops the first `n` received bytes (the request just answered).
fn discard(s: &mut Socket<'_>, mut n: usize) {
    while n > 0 {
        match s.recv(|b| {
            let k = b.len().min(n);
            (k, k)
        }) {
            Ok(0) | Err(_) => return,
            Ok(k) => n -= k,
        }
    }
}

/// Drops the connection (the client has closed its side) and listens again at once.
fn relisten(s: &mut Socket<'_>, c: &mut Conn) -> Pass {
    s.abort();
    c.reset();
    let _ = s.listen(HTTP_PORT);
    Pass::Busy
}

enum Outcome {
    /// No whole request yet.
    Wait,
    /// The request in the first `used` bytes of the buffer was answered.
    Answered { close: bool, used: usize },
}

/// A response head and body written into `out`.
struct Response<'a> {
    out: &'a mut [u8],
    len: usize,
}

impl Response<'_> {
    fn put(&mut self, b: &[u8]) {
        let end = (self.len + b.len()).min(self.out.len());
        let n = end - self.len;
        self.out[self.len..end].copy_from_slice(&b[..n]);
        self.len = end;
    }

    fn num(&mut self, mut n: usize) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.put(&digits[at..]);
    }

    fn head(&mut self, status: u16, content_type: Option<&[u8]>, body_len: usize, close: bool, extra: &[u8]) {
        self.put(b"HTTP/1.1 ");
        self.num(status.into());
        self.put(b" ");
        self.put(reason(status));
        self.put(b"\r\n");
        if let Some(t) = content_type {
            self.put(b"Content-Type: ");
            self.put(t);
            self.put(b"\r\n");
        }
        self.put(b"Content-Length: ");
        self.num(body_len);
        self.put(b"\r\n");
        self.put(extra);
        if close {
            self.put(b"Connection: close\r\n");
        }
        self.put(b"\r\n");
    }
}

fn reason(status: u16) -> &'static [u8] {
    match status {
        200 => b"OK",
        202 => b"Accepted",
        400 => b"Bad Request",
        403 => b"Forbidden",
        404 => b"Not Found",
        405 => b"Method Not Allowed",
        408 => b"Request Timeout",
        411 => b"Length Required",
        413 => b"Payload Too Large",
        431 => b"Request Header Fields Too Large",
        500 => b"Internal Server Error",
        _ => b"Error",
    }
}

/// Sends a plain-text answer.
fn plain(s: &mut Socket<'_>, status: u16, text: &[u8], close: bool, extra: &[u8]) {
    let mut head = [0u8; 256];
    let mut r = Response { out: &mut head, len: 0 };
    r.head(status, Some(b"text/plain; charset=utf-8"), text.len(), close, extra);
    let hl = r.len;
    let _ = s.send_slice(&head[..hl]);
    let _ = s.send_slice(text);
}

/// Answers the request at the start of `buf` (what the connection has sent so far; `full`:
/// its receive buffer is full), if it is whole.
fn request<F: MultiwriteNorFlash>(
    s: &mut Socket<'_>,
    buf: &[u8],
    full: bool,
    engine: &mut Panel<F>,
    host: &mut PanelHost,
    out: &mut [u8],
    ip: Ipv4Address,
) -> Outcome {
    let all = buf.len();
    let head = match request::parse(buf) {
        Err(HeadError::Incomplete) if !full => return Outcome::Wait,
        Err(HeadError::Incomplete | HeadError::TooManyHeaders) => {
            plain(s, 431, b"Request head too large\n", true, b"");
            return Outcome::Answered { close: true, used: all };
        }
        Err(HeadError::Malformed) => {
            plain(s, 400, b"Bad request\n", true, b"");
            return Outcome::Answered { close: true, used: all };
        }
        Ok(h) => h,
    };
    if head.chunked {
        plain(s, 411, b"Length required: send Content-Length\n", true, b"");
        return Outcome::Answered { close: true, used: all };
    }
    let body_len = head.content_length.unwrap_or(0);
    if body_len > BODY_MAX || head.len + body_len > REQUEST_MAX {
        // The engine writes the id-less "message too large" error; the status says why.
        let h = engine.handle_line(Line::TooLong, &context(host), out);
        send_answer(s, &out[..h.len], 413, true);
        return Outcome::Answered { close: true, used: all };
    }
    let used = head.len + body_len;
    if used > all {
        return Outcome::Wait;
    }
    let close = head.close;
    if let Err(why) = request::guard(&head, ip.octets()) {
        crate::diag::text(why);
        plain(s, 403, b"Forbidden: Host or Origin not allowed\n", close, b"");
        return Outcome::Answered { close, used };
    }
    if head.path != "/mcp" {
        plain(s, 404, b"Not found: the MCP endpoint is /mcp\n", close, b"");
        return Outcome::Answered { close, used };
    }
    if head.method != "POST" {
        plain(s, 405, b"Method not allowed: POST one JSON-RPC message\n", close, b"Allow: POST\r\n");
        return Outcome::Answered { close, used };
    }
    let headers = HttpHeaders {
        version: head.version,
        method: head.mcp_method,
        name: head.mcp_name,
        params: &head.params[..head.param_count],
    };
    let body = &buf[head.len..used];
    let cx = context(host);
    let h = engine.handle_http(body, &cx, &headers, out);
    if let Some(note) = h.note {
        host.note(note);
    }
    if h.responded {
        send_answer(s, &out[..h.len], h.status, close);
    } else if h.status >= 400 {
        plain(s, 500, b"Internal error\n", close, b"");
    } else {
        let mut head = [0u8; 128];
        let mut r = Response { out: &mut head, len: 0 };
        r.head(202, None, 0, close, b"");
        let hl = r.len;
        let _ = s.send_slice(&head[..hl]);
    }
    Outcome::Answered { close, used }
}

/// Sends `answer` (the engine's messages, `\n`-separated) with its head: one message as
/// `application/json`, several as SSE events. The send buffer is empty and holds
/// [`super::TX_BUF`] bytes: the head and the answer (at most [`super::ANSWER_MAX`]) with its
/// framing fit.
fn send_answer(s: &mut Socket<'_>, answer: &[u8], status: u16, close: bool) {
    let events = answer.iter().filter(|&&b| b == b'\n').count();
    let mut head = [0u8; 256];
    let mut r = Response { out: &mut head, len: 0 };
    if events == 0 {
        r.head(status, Some(b"application/json"), answer.len(), close, b"");
        let hl = r.len;
        let _ = s.send_slice(&head[..hl]);
        let _ = s.send_slice(answer);
        return;
    }
    // Each message as `event: message\ndata: <message>\n\n`.
    let body_len = answer.len() - events + (events + 1) * (SSE_PREFIX.len() + 2);
    r.head(status, Some(b"text/event-stream"), body_len, close, b"Cache-Control: no-cache\r\n");
    let hl = r.len;
    let _ = s.send_slice(&head[..hl]);
    for message in answer.split(|&b| b == b'\n') {
        let _ = s.send_slice(SSE_PREFIX);
        let _ = s.send_slice(message);
        let _ = s.send_slice(b"\n\n");
    }
}

const SSE_PREFIX: &[u8] = b"event: message\ndata: ";

fn context(host: &mut PanelHost) -> Context<'static> {
    Context {
        now: host.now(),
        principal: PRINCIPAL,
        entropy: host.entropy(),
        access: redmark_core::Access::USER,
    }
}
