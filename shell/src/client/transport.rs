//! Where `redmark call` talks to, behind one small trait: send one request, get back every
//! message up to and including its response. The MRTR loop is written once, above this.
//!
//! - [`InProcess`]: a redmark engine on the default floor inside this process (on the data
//!   folder of `redmark serve`, or in memory with `--scratch`).
//! - [`Lines`]: newline-delimited JSON over a child's stdin/stdout (`--stdio`) or a TCP
//!   connection (`--tcp`).
//! - [`Http`]: Streamable HTTP (`--url`), with the 2026-07-28 headers, answering with JSON or SSE.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use base64ct::{Base64, Encoding as _};
use redmark_core::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
use redmark_core::engine::{Config, ServerInfo};
use redmark_core::seal::{Key, KeyRing};
use serde_json::Value;

use super::PROTOCOL_VERSION;
use crate::host::{Conn, Hosted, Msg, Shared};

/// The longest message (line, SSE line or event, JSON body) the client reads: 16 MiB. A
/// longer one fails the call with a protocol error ("line too long") instead of growing memory
/// without bound.
pub const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// Reads one line (with its `\n`, if any) of at most `max` bytes before the `\n`: `Ok(None)`
/// at end of stream, a [`TransportError::Protocol`] "line too long" past `max`.
fn read_line_limited(r: &mut impl BufRead, max: usize) -> Result<Option<String>, TransportError> {
    let io = |e: std::io::Error| TransportError::Io(format!("cannot read: {e}"));
    let mut line = Vec::new();
    loop {
        let buf = r.fill_buf().map_err(io)?;
        if buf.is_empty() {
            break;
        }
        let (take, end) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if line.len() + take - usize::from(end) > max {
            return Err(too_long(max));
        }
        line.extend_from_slice(&buf[..take]);
        r.consume(take);
        if end {
            break;
        }
    }
    if line.is_empty() {
        return Ok(None);
    }
    String::from_utf8(line)
        .map(Some)
        .map_err(|_| TransportError::Io("cannot read: a line is not UTF-8".into()))
}

fn too_long(max: usize) -> TransportError {
    TransportError::Protocol(format!("line too long: a message over {max} bytes"))
}

/// One request on its way out.
pub struct Outgoing<'a> {
    /// Its JSON-RPC id.
    pub id: u64,
    /// Its method (for the `Mcp-Method` header).
    pub method: &'a str,
    /// The tool, prompt or resource it names (for the `Mcp-Name` header).
    pub name: Option<&'a str>,
    /// The whole message, one line of JSON.
    pub body: &'a str,
}

/// Why a message could not be exchanged.
#[derive(Debug)]
pub enum TransportError {
    /// Could not start, connect, read or write.
    Io(String),
    /// No response within the timeout.
    Timeout(Duration),
    /// The peer closed before answering.
    Closed,
    /// Something arrived that is not what the transport allows (status, content type).
    Protocol(String),
    /// The server sent a JSON-RPC request: 2026-07-28 servers never do (questions go through
    /// `input_required`); a pre-2026 server pushing `elicitation/create` would wait forever.
    ServerRequest(String),
    /// The caller stopped a 2025-11-25 exchange (its reason is kept by the caller).
    Aborted,
}

/// Refuses a server-initiated request (a message with both `method` and `id`).
fn refuse_server_request(msg: &Value, line: &str) -> Result<(), TransportError> {
    if msg.get("method").is_some() && msg.get("id").is_some() {
        let m = msg.get("method").and_then(Value::as_str).unwrap_or("?");
        return Err(TransportError::ServerRequest(format!(
            "the server sent a JSON-RPC request ({m}); 2026-07-28 servers must not (is it an older protocol?): {line}"
        )));
    }
    Ok(())
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Io(e) => f.write_str(e),
            TransportError::Timeout(d) => write!(f, "no response within {} s", d.as_secs_f32()),
            TransportError::Closed => {
                f.write_str("the server closed the connection before answering")
            }
            TransportError::Protocol(e) | TransportError::ServerRequest(e) => f.write_str(e),
            TransportError::Aborted => f.write_str("stopped"),
        }
    }
}

/// Answers a request a 2025-11-25 server sends mid-exchange: the whole response, or `None`
/// to stop.
pub type Serve<'a> = dyn FnMut(&Value) -> Option<Value> + 'a;

/// Sends one request and returns the raw messages received up to and including its response
/// (notifications first, the response last), tracing each as it arrives.
pub trait Transport {
    /// Exchanges one request for its response.
    fn exchange(&mut self, req: &Outgoing<'_>) -> Result<Vec<String>, TransportError>;

    /// Whether this transport can fall back to a 2025-11-25 session (stream transports).
    fn legacy_capable(&self) -> bool {
        false
    }

    /// Like [`Transport::exchange`] in a 2025-11-25 session: a request the server sends
    /// meanwhile (a pushed `elicitation/create`) is answered with the response `serve` makes;
    /// `serve` returning `None` stops the exchange with [`TransportError::Aborted`].
    fn exchange_legacy(
        &mut self,
        req: &Outgoing<'_>,
        serve: &mut Serve<'_>,
    ) -> Result<Vec<String>, TransportError> {
        let _ = (req, serve);
        Err(TransportError::Protocol(
            "this transport does not speak 2025-11-25".into(),
        ))
    }

    /// Sends a notification (nothing is awaited); stream transports only.
    fn notify(&mut self, body: &str) -> Result<(), TransportError> {
        let _ = body;
        Err(TransportError::Protocol(
            "this transport does not speak 2025-11-25".into(),
        ))
    }
}

/// Whether a received message is the response to request `id`: it carries that id, or it is an
/// error without an id (absent or `null`: the server could not read the request).
pub fn is_response_to(msg: &Value, id: u64) -> bool {
    let answer = msg.get("result").is_some() || msg.get("error").is_some();
    answer
        && match msg.get("id") {
            Some(Value::Null) | None => msg.get("error").is_some(),
            Some(v) => v.as_u64() == Some(id),
        }
}

fn trace_ignored(line: &str, why: &str) {
    if super::tracing() {
        eprintln!("   (ignored {why}: {line})");
    }
}

// ---------------------------------------------------------------------------------------------

/// A redmark server inside this process: nothing else needs to run. `redmark call` runs the
/// booking floor on the data folder `redmark serve` uses ([`crate::serve::booking_host`]);
/// [`InProcess::scratch`] is a throwaway floor in memory.
pub struct InProcess<A: Hosted> {
    conn: Conn<A>,
}

impl InProcess<BookingApp<'static, MemStore<64>>> {
    /// The default floor with bookings in memory and a random sealing key: gone on exit.
    pub fn scratch() -> Result<Self, TransportError> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret)
            .map_err(|e| TransportError::Io(format!("no randomness: {e}")))?;
        let key =
            Key::new(0, &secret).map_err(|e| TransportError::Io(format!("sealing key: {e}")))?;
        let info = ServerInfo {
            name: "redmark",
            version: env!("CARGO_PKG_VERSION"),
            instructions: None,
        };
        let make = move || BookingApp::new(DEFAULT_FLOOR, MemStore::<64>::new(), info);
        Ok(InProcess::new(&Shared::new(
            make,
            KeyRing::new(key),
            Config::default(),
        )))
    }
}

impl<A: Hosted> InProcess<A> {
    /// Serves one connection of `host` in this process, driven as `redmark serve` drives its
    /// transports (the same clock, entropy, principal, notes and panic answers).
    pub fn new(host: &Arc<Shared<A>>) -> Self {
        InProcess {
            conn: host.connection(),
        }
    }
}

impl<A: Hosted> Transport for InProcess<A> {
    fn exchange(&mut self, req: &Outgoing<'_>) -> Result<Vec<String>, TransportError> {
        let h = self
            .conn
            .handle_blocking(Msg::Line(req.body.as_bytes()), crate::host::LOCAL_PRINCIPAL);
        if !h.responded {
            return Err(TransportError::Protocol(
                "the in-process server did not answer".into(),
            ));
        }
        let text = std::str::from_utf8(self.conn.answer(&h)).map_err(|_| {
            TransportError::Protocol("the in-process server wrote invalid UTF-8".into())
        })?;
        let got: Vec<String> = text.split('\n').map(str::to_owned).collect();
        got.iter().for_each(|m| super::trace("←", m));
        Ok(got)
    }
}

// ---------------------------------------------------------------------------------------------

/// Newline-delimited JSON-RPC over a byte stream: a child process or a TCP connection.
pub struct Lines {
    writer: Box<dyn Write + Send>,
    lines: Receiver<Result<String, TransportError>>,
    child: Option<Child>,
    timeout: Duration,
}

impl Lines {
    /// Spawns `command` with `sh -c` and talks over its stdin/stdout; its stderr is passed on
    /// line by line, never cutting into a traced message.
    pub fn spawn(command: &str, timeout: Duration) -> Result<Lines, TransportError> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("exec {command}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| TransportError::Io(format!("cannot start '{command}': {e}")))?;
        if let Some(err) = child.stderr.take() {
            thread::spawn(move || {
                let mut r = BufReader::new(err);
                let mut line = Vec::new();
                while matches!(r.read_until(b'\n', &mut line), Ok(n) if n > 0) {
                    if line.last() != Some(&b'\n') {
                        line.push(b'\n');
                    }
                    let _ = std::io::stderr().lock().write_all(&line);
                    line.clear();
                }
            });
        }
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| TransportError::Io("no stdin pipe".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| TransportError::Io("no stdout pipe".into()))?;
        Ok(Lines {
            writer: Box::new(stdin),
            lines: reader(stdout),
            child: Some(child),
            timeout,
        })
    }

    /// Connects to `addr` (HOST:PORT).
    pub fn connect(addr: &str, timeout: Duration) -> Result<Lines, TransportError> {
        let io = |e: std::io::Error| TransportError::Io(format!("cannot connect to {addr}: {e}"));
        let stream = TcpStream::connect(addr).map_err(io)?;
        stream.set_nodelay(true).ok();
        let read = stream.try_clone().map_err(io)?;
        Ok(Lines {
            writer: Box::new(stream),
            lines: reader(read),
            child: None,
            timeout,
        })
    }
}

/// Reads lines (each at most [`MAX_MESSAGE`] bytes) on a thread, so waits can time out.
fn reader(r: impl Read + Send + 'static) -> Receiver<Result<String, TransportError>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut r = BufReader::new(r);
        loop {
            match read_line_limited(&mut r, MAX_MESSAGE) {
                Ok(None) => break,
                Ok(Some(line)) => {
                    if tx.send(Ok(line)).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    break;
                }
            }
        }
    });
    rx
}

impl Transport for Lines {
    fn exchange(&mut self, req: &Outgoing<'_>) -> Result<Vec<String>, TransportError> {
        self.exchange_serving(req, None)
    }

    fn legacy_capable(&self) -> bool {
        true
    }

    fn exchange_legacy(
        &mut self,
        req: &Outgoing<'_>,
        serve: &mut Serve<'_>,
    ) -> Result<Vec<String>, TransportError> {
        self.exchange_serving(req, Some(serve))
    }

    fn notify(&mut self, body: &str) -> Result<(), TransportError> {
        self.write_line(body)
    }
}

impl Lines {
    /// Writes one line.
    fn write_line(&mut self, body: &str) -> Result<(), TransportError> {
        let io = |e: std::io::Error| TransportError::Io(format!("cannot send: {e}"));
        self.writer.write_all(body.as_bytes()).map_err(io)?;
        self.writer.write_all(b"\n").map_err(io)?;
        self.writer.flush().map_err(io)
    }

    /// Sends `req` and reads up to its response; server requests are refused, or answered by
    /// `serve` when given (a 2025-11-25 session).
    fn exchange_serving(
        &mut self,
        req: &Outgoing<'_>,
        mut serve: Option<&mut Serve<'_>>,
    ) -> Result<Vec<String>, TransportError> {
        self.write_line(req.body)?;
        let deadline = Instant::now() + self.timeout;
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(Ok(line)) => line,
                Ok(Err(e)) => return Err(e),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(TransportError::Timeout(self.timeout))
                }
                Err(RecvTimeoutError::Disconnected) => return Err(TransportError::Closed),
            };
            let line = line.trim_end_matches(['\n', '\r']);
            // Firmware consoles and some servers print other lines; only JSON objects count.
            let Ok(msg) = serde_json::from_str::<Value>(line) else {
                if !line.trim().is_empty() {
                    trace_ignored(line, "a line that is not JSON");
                }
                continue;
            };
            if !msg.is_object() {
                trace_ignored(line, "a line that is not a JSON object");
                continue;
            }
            super::trace("←", line);
            if let Some(serve) = serve.as_deref_mut() {
                if msg.get("method").is_some() && msg.get("id").is_some() {
                    let answer = serve(&msg).ok_or(TransportError::Aborted)?.to_string();
                    super::trace("→", &answer);
                    self.write_line(&answer)?;
                    continue;
                }
            }
            refuse_server_request(&msg, line)?;
            let done = is_response_to(&msg, req.id);
            if !done && msg.get("method").is_none() {
                trace_ignored(line, "a response to another request");
                continue;
            }
            got.push(line.to_owned());
            if done {
                return Ok(got);
            }
        }
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        // Closing stdin tells a stdio server to exit; give it a moment, then make sure.
        self.writer = Box::new(std::io::sink());
        if let Some(mut child) = self.child.take() {
            let deadline = Instant::now() + Duration::from_secs(2);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

// ---------------------------------------------------------------------------------------------

/// Streamable HTTP, 2026-07-28: one POST per request, no session, the protocol headers set.
pub struct Http {
    url: String,
    agent: ureq::Agent,
    timeout: Duration,
    /// The `Mcp-Session-Id` a 2025-11-25 server gave at `initialize`.
    session: Option<String>,
    /// `Authorization: Bearer` value (an OAuth access token or a `--tokens` token).
    bearer: Option<String>,
}

impl Http {
    /// A client of the MCP endpoint at `url` (`http://` or `https://`).
    pub fn new(url: &str, timeout: Duration) -> Result<Http, TransportError> {
        if !url.starts_with("http://") && !url.starts_with("https://") {
            return Err(TransportError::Io(format!(
                "'{url}': only http:// and https:// URLs are supported"
            )));
        }
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .max_redirects(0)
            .build()
            .into();
        Ok(Http {
            url: url.to_owned(),
            agent,
            timeout,
            session: None,
            bearer: None,
        })
    }

    /// Sends `token` as `Authorization: Bearer` on every request.
    pub fn with_bearer(mut self, token: Option<String>) -> Http {
        self.bearer = token;
        self
    }

    /// `req` with the bearer token, if there is one.
    fn authorized<B>(&self, req: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match &self.bearer {
            Some(t) => req.header("Authorization", &format!("Bearer {t}")),
            None => req,
        }
    }

    /// A POST in a 2025-11-25 session: no 2026-07-28 headers; the session's once it has one.
    fn legacy_post(&self) -> ureq::RequestBuilder<ureq::typestate::WithBody> {
        let mut post = self
            .authorized(self.agent.post(&self.url))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        if let Some(id) = &self.session {
            post = post
                .header("Mcp-Session-Id", id)
                .header("MCP-Protocol-Version", super::legacy::LEGACY_VERSION);
        }
        post
    }

    /// POSTs a notification or a response in a 2025-11-25 session (nothing comes back).
    fn legacy_send(&self, body: &str) -> Result<(), TransportError> {
        let resp = self.legacy_post().send(body).map_err(|e| match e {
            ureq::Error::Timeout(_) => TransportError::Timeout(self.timeout),
            e => TransportError::Io(format!("POST {}: {e}", self.url)),
        })?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(TransportError::Protocol(format!(
                "HTTP {status} for a POSTed notification or response"
            )));
        }
        Ok(())
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        // A 2025-11-25 session is ended, as its clients should.
        if let Some(id) = self.session.take() {
            let _ = self
                .authorized(self.agent.delete(&self.url))
                .header("Mcp-Session-Id", &id)
                .header("MCP-Protocol-Version", super::legacy::LEGACY_VERSION)
                .call();
        }
    }
}

/// A header value as sent: plain when it is visible ASCII without leading/trailing spaces,
/// else the `=?base64?…?=` form the spec defines.
pub fn header_value(v: &str) -> String {
    let plain =
        v.bytes().all(|b| (0x20..0x7f).contains(&b)) && v.trim() == v && !v.starts_with("=?");
    if plain {
        v.to_owned()
    } else {
        format!("=?base64?{}?=", Base64::encode_string(v.as_bytes()))
    }
}

impl Transport for Http {
    fn exchange(&mut self, req: &Outgoing<'_>) -> Result<Vec<String>, TransportError> {
        self.exchange_with(req, None)
    }

    fn legacy_capable(&self) -> bool {
        true
    }

    fn exchange_legacy(
        &mut self,
        req: &Outgoing<'_>,
        serve: &mut Serve<'_>,
    ) -> Result<Vec<String>, TransportError> {
        self.exchange_with(req, Some(serve))
    }

    fn notify(&mut self, body: &str) -> Result<(), TransportError> {
        self.legacy_send(body)
    }
}

impl Http {
    /// POSTs `req` and reads its response (JSON or SSE). With `serve`, in a 2025-11-25 session:
    /// the session's headers, and server requests on the stream are answered by POSTing
    /// `serve`'s response.
    fn exchange_with(
        &mut self,
        req: &Outgoing<'_>,
        mut serve: Option<&mut Serve<'_>>,
    ) -> Result<Vec<String>, TransportError> {
        if serve.is_some() {
            return self.exchange_legacy_http(req, serve.take());
        }
        let post = self
            .authorized(self.agent.post(&self.url))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", PROTOCOL_VERSION)
            .header("Mcp-Method", header_value(req.method));
        let name = req.name.map(header_value);
        let post = match &name {
            Some(name) => post.header("Mcp-Name", name),
            None => post,
        };
        if super::tracing() {
            let named = name.map(|n| format!(", Mcp-Name: {n}")).unwrap_or_default();
            super::trace(
                " ",
                &format!(
                    "POST {} (MCP-Protocol-Version: {PROTOCOL_VERSION}, Mcp-Method: {}{named})",
                    self.url, req.method
                ),
            );
        }
        let resp = post.send(req.body).map_err(|e| match e {
            ureq::Error::Timeout(_) => TransportError::Timeout(self.timeout),
            e => TransportError::Io(format!("POST {}: {e}", self.url)),
        })?;
        self.read_answer(req, resp, None)
    }

    /// The 2025-11-25 form of [`Http::exchange_with`].
    fn exchange_legacy_http(
        &mut self,
        req: &Outgoing<'_>,
        serve: Option<&mut Serve<'_>>,
    ) -> Result<Vec<String>, TransportError> {
        super::trace(" ", &format!("POST {} (2025-11-25 session)", self.url));
        let resp = self.legacy_post().send(req.body).map_err(|e| match e {
            ureq::Error::Timeout(_) => TransportError::Timeout(self.timeout),
            e => TransportError::Io(format!("POST {}: {e}", self.url)),
        })?;
        if let Some(id) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.session = Some(id.to_owned());
        }
        self.read_answer(req, resp, serve)
    }

    /// Reads the answer to `req` from `resp` (see [`Http::exchange_with`]).
    fn read_answer(
        &self,
        req: &Outgoing<'_>,
        mut resp: ureq::http::Response<ureq::Body>,
        mut serve: Option<&mut Serve<'_>>,
    ) -> Result<Vec<String>, TransportError> {
        let status = resp.status().as_u16();
        let ctype = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if super::tracing() {
            super::trace(" ", &format!("HTTP {status} {ctype}"));
        }
        if status == 401 || status == 403 {
            let challenge = resp
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("(no WWW-Authenticate)");
            let hint = if status == 401 {
                "pass an access token: --token, REDMARK_TOKEN, --token-command, or --client-id \
                 with --client-secret (docs/oauth.md)"
            } else {
                "the token lacks a scope this request needs"
            };
            return Err(TransportError::Io(format!(
                "HTTP {status} from {}: {hint}; the server says: {challenge}",
                self.url
            )));
        }
        let body = resp.body_mut();
        if ctype == "text/event-stream" {
            let mut got = Vec::new();
            let mut data = String::new();
            let mut reader = BufReader::new(body.as_reader());
            loop {
                let line = read_line_limited(&mut reader, MAX_MESSAGE)?.unwrap_or_default();
                let n = line.len();
                let line = line.trim_end_matches(['\n', '\r']);
                if n == 0 || line.is_empty() {
                    // End of an event: dispatch its data.
                    if !data.is_empty() {
                        let text = std::mem::take(&mut data);
                        if let Ok(msg) = serde_json::from_str::<Value>(&text) {
                            super::trace("←", &text);
                            if let Some(serve) = serve.as_deref_mut() {
                                if msg.get("method").is_some() && msg.get("id").is_some() {
                                    let answer =
                                        serve(&msg).ok_or(TransportError::Aborted)?.to_string();
                                    super::trace("→", &answer);
                                    self.legacy_send(&answer)?;
                                    continue;
                                }
                            }
                            refuse_server_request(&msg, &text)?;
                            let done = is_response_to(&msg, req.id);
                            got.push(text);
                            if done {
                                return Ok(got);
                            }
                        } else {
                            trace_ignored(&text, "an event that is not JSON");
                        }
                    }
                    if n == 0 {
                        return Err(TransportError::Closed);
                    }
                } else if let Some(d) = line.strip_prefix("data:") {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    let d = d.strip_prefix(' ').unwrap_or(d);
                    if data.len() + 1 + d.len() > MAX_MESSAGE {
                        return Err(too_long(MAX_MESSAGE));
                    }
                    data.push_str(d);
                }
                // `event:`, `id:`, `retry:` and comments carry nothing a client needs here.
            }
        }
        let text = body
            .with_config()
            .limit(MAX_MESSAGE as u64)
            .read_to_string()
            .map_err(|e| match e {
                ureq::Error::BodyExceedsLimit(_) => too_long(MAX_MESSAGE),
                e => TransportError::Io(format!("reading the body: {e}")),
            })?;
        if ctype == "application/json" {
            if let Ok(msg) = serde_json::from_str::<Value>(&text) {
                // Only this request's response (or an error without an id): an error naming
                // another request is not this call's outcome.
                if is_response_to(&msg, req.id) {
                    super::trace("←", &text);
                    return Ok(vec![text]);
                }
            }
        }
        let excerpt: String = text.chars().take(200).collect();
        Err(TransportError::Protocol(format!(
            "HTTP {status} ({}) without a JSON-RPC response: {excerpt}",
            if ctype.is_empty() {
                "no content type"
            } else {
                &ctype
            }
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values() {
        assert_eq!(header_value("book_room"), "book_room");
        assert_eq!(header_value("réserver"), "=?base64?csOpc2VydmVy?=");
        assert_eq!(header_value(" a"), "=?base64?IGE=?=");
        assert_eq!(header_value("=?x"), "=?base64?PT94?=");
    }

    #[test]
    fn lines_are_read_with_a_limit() {
        let mut r = std::io::Cursor::new(&b"ab\ncdefgh\nij"[..]);
        let got = read_line_limited(&mut r, 2).unwrap();
        assert_eq!(got.as_deref(), Some("ab\n"));
        let e = read_line_limited(&mut r, 2).unwrap_err();
        assert!(e.to_string().starts_with("line too long"), "{e}");
        // Split across reads, too.
        let mut r = BufReader::with_capacity(2, &b"abcde\n"[..]);
        assert!(read_line_limited(&mut r, 4).is_err());
        let mut r = BufReader::with_capacity(2, &b"abcd\nxy"[..]);
        assert_eq!(
            read_line_limited(&mut r, 4).unwrap().as_deref(),
            Some("abcd\n")
        );
        assert_eq!(read_line_limited(&mut r, 4).unwrap().as_deref(), Some("xy"));
        assert_eq!(read_line_limited(&mut r, 4).unwrap(), None);
    }

    #[test]
    fn responses_are_matched_by_id() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        assert!(is_response_to(&v(r#"{"id":3,"result":{}}"#), 3));
        assert!(!is_response_to(&v(r#"{"id":4,"result":{}}"#), 3));
        assert!(!is_response_to(&v(r#"{"id":4,"error":{}}"#), 3));
        assert!(is_response_to(&v(r#"{"error":{}}"#), 3));
        assert!(is_response_to(&v(r#"{"id":null,"error":{}}"#), 3));
        assert!(!is_response_to(&v(r#"{"id":null,"result":{}}"#), 3));
    }

    #[test]
    fn in_process_answers() {
        let mut t = InProcess::scratch().unwrap();
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"{PROTOCOL_VERSION}","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        );
        let got = t
            .exchange(&Outgoing {
                id: 1,
                method: "tools/list",
                name: None,
                body: &body,
            })
            .unwrap();
        let last: Value = serde_json::from_str(got.last().unwrap()).unwrap();
        assert!(is_response_to(&last, 1));
        assert_eq!(last["result"]["tools"][0]["name"], "book_room");
    }
}
