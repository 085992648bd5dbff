//! Legacy (2025-11-25) sessions over Streamable HTTP, hooked into `transport/http.rs` by two calls:
//! [`HttpLegacy::early`] (GET/DELETE naming a session) and [`HttpLegacy::post`] (a POST body).
//!
//! - A POST of `initialize` without 2026-07-28 `_meta` opens a session: the answer carries a
//!   fresh `Mcp-Session-Id` (128 random bits). At most [`super::MAX_SESSIONS_PER_PRINCIPAL`] per
//!   principal and [`super::MAX_SESSIONS`] in all; past that an idle one goes, never a session with a
//!   call in flight of another principal (`table.rs`); when none can go, **503**.
//! - One timer per session, armed for its earliest waiting question and re-armed for each
//!   later one: every waiting question is given up after [`super::QUESTION_WAIT`], and the
//!   timers do not grow with the requests a client sends.
//! - A request naming a live session (and the principal that opened it) goes through its
//!   [`Session`]; an unknown one gets **404**; a 2025-11-25 `MCP-Protocol-Version` without a
//!   session gets **400**. Bodies carrying 2026-07-28 `_meta` are left to the modern path.
//! - JSON-RPC errors are sent with HTTP 200 (the Python SDK reads other statuses as transport
//!   failures). Notifications and responses get 202.
//! - A `tools/call` that leads to a pushed question is answered as `text/event-stream`: the
//!   question, then (once a later POST carries the answer and the core completes) the result,
//!   then the stream ends. At most [`STREAM_BACKLOG`] lines wait unsent per stream.
//! - `DELETE` ends the session (its open streams end); `GET` on a session gets 405 (questions
//!   travel on the POST streams only).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use hyper::body::Frame;
use redmark_core::wire::meta::KEY_VERSION;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::rpc::names_initialize;
use super::session::Session;
use super::stream::{drive, Sent};
use super::table::{Entry, OpenError, Table};
use super::LEGACY_VERSIONS;

/// Lines one SSE stream may hold unsent (a client that does not read loses the rest).
pub const STREAM_BACKLOG: usize = 16;

/// The session header.
const SESSION_ID: &str = "mcp-session-id";

/// One legacy HTTP session: its table entry around the session's state.
type HttpSession = Entry<tokio::sync::Mutex<Inner>>;

/// A session's state, the open POST streams by the id (JSON text) of their request, and the
/// session's one timer (at most one per session, whatever the client sends).
struct Inner {
    session: Session,
    streams: HashMap<String, mpsc::Sender<Vec<u8>>>,
    /// The timer task and the time it next wakes at.
    timer: Option<(Instant, JoinHandle<()>)>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some((_, t)) = self.timer.take() {
            t.abort();
        }
    }
}

/// Every legacy HTTP session of one listener.
#[derive(Default)]
pub struct HttpLegacy {
    sessions: Table<tokio::sync::Mutex<Inner>>,
    /// The app serves resources (each session's `initialize` says so).
    resources: bool,
}

/// A plain-text response.
fn plain(status: StatusCode, text: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text,
    )
        .into_response()
}

/// The session id a request names, if any.
fn session_id(h: &HeaderMap) -> Option<&str> {
    h.get(SESSION_ID).and_then(|v| v.to_str().ok())
}

/// Whether this is a GET or DELETE naming a session (a legacy request: 401 without a valid
/// token, rather than the 2026-07-28 405).
pub fn names_session(method: &Method, h: &HeaderMap) -> bool {
    (*method == Method::DELETE || *method == Method::GET) && session_id(h).is_some()
}

impl HttpLegacy {
    /// A listener's (empty) session table; `resources`: the app serves them.
    pub fn new(resources: bool) -> Arc<Self> {
        Arc::new(HttpLegacy {
            resources,
            ..HttpLegacy::default()
        })
    }

    /// GET or DELETE naming a session (before the modern 405): DELETE ends it, GET gets 405;
    /// an unknown session gets 404. `None`: not a session request.
    pub fn early(&self, method: &Method, h: &HeaderMap, principal: &[u8]) -> Option<Response> {
        if !names_session(method, h) {
            return None;
        }
        let id = session_id(h)?;
        let found = self.sessions.lookup(id, principal);
        let Some(found) = found else {
            return Some(plain(StatusCode::NOT_FOUND, "Not found: no such session\n"));
        };
        if *method == Method::GET {
            let mut r = plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "Method not allowed: questions travel on the POST streams\n",
            );
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
            return Some(r);
        }
        self.sessions.remove(id);
        // Its streams end when the last reference to the session goes.
        drop(found);
        Some(StatusCode::OK.into_response())
    }

    /// A POST body: answered here when it is legacy traffic, else `None` (the modern path).
    /// `run` passes a line to the core and returns its answer.
    pub async fn post<F, Fut>(
        self: &Arc<Self>,
        h: &HeaderMap,
        body: &[u8],
        principal: &Arc<[u8]>,
        run: F,
    ) -> Option<Response>
    where
        F: FnMut(Vec<u8>) -> Fut + Send + Clone + 'static,
        Fut: Future<Output = Option<Vec<u8>>> + Send + 'static,
    {
        // Only a session, an `initialize` or a 2025-11-25 version header can make this legacy
        // traffic: every other body skips the JSON parse (the hot path of 2026-07-28 clients).
        let version = h.get("mcp-protocol-version").and_then(|v| v.to_str().ok());
        if session_id(h).is_none()
            && !version.is_some_and(|v| LEGACY_VERSIONS.contains(&v))
            && !names_initialize(body)
        {
            return None;
        }
        let msg: Option<Value> = serde_json::from_slice(body).ok();
        let modern = msg
            .as_ref()
            .and_then(|m| m.pointer("/params/_meta"))
            .and_then(|m| m.get(KEY_VERSION))
            .is_some_and(Value::is_string);
        let method = msg.as_ref().and_then(|m| m.get("method")?.as_str());
        if modern {
            // Served statelessly, whatever session header came along.
            return None;
        }
        let (sid, sess) = match session_id(h) {
            Some(id) => match self.sessions.lookup(id, principal) {
                None => return Some(plain(StatusCode::NOT_FOUND, "Not found: no such session\n")),
                Some(s) => (id.to_owned(), s),
            },
            None if method == Some("initialize") => match self.open(principal) {
                Ok(x) => x,
                Err(e) => return Some(refused(e)),
            },
            None => {
                if version.is_some_and(|v| LEGACY_VERSIONS.contains(&v)) {
                    return Some(plain(
                        StatusCode::BAD_REQUEST,
                        "Bad request: a 2025-11-25 request needs Mcp-Session-Id\n",
                    ));
                }
                return None;
            }
        };
        let id = msg.as_ref().and_then(|m| {
            m.get("method")?;
            m.get("id").map(Value::to_string)
        });
        let mut inner = sess.value.lock().await;
        let actions = inner.session.client_line(body, Instant::now());
        let sent = drive(&mut inner.session, actions, run.clone()).await;
        let mine = route(&mut inner, sent, id.as_deref());
        let mut r = match (id, mine) {
            (None, _) => StatusCode::ACCEPTED.into_response(),
            (Some(_), Mine::Done(lines)) if lines.len() == 1 => {
                let line = lines.into_iter().next().unwrap_or_default();
                (
                    StatusCode::OK,
                    [(header::CONTENT_TYPE, "application/json")],
                    line,
                )
                    .into_response()
            }
            (Some(_), Mine::Done(lines)) => sse(SseBody::done(lines)),
            (Some(key), Mine::Open(lines)) => {
                let (tx, rx) = mpsc::channel(STREAM_BACKLOG);
                inner.streams.insert(key, tx);
                sse(SseBody::open(lines, rx))
            }
        };
        arm_timer(&sess, &mut inner, run);
        sess.set_busy(inner.session.calls_in_flight() > 0);
        drop(inner);
        if let Ok(v) = HeaderValue::from_str(&sid) {
            r.headers_mut().insert(SESSION_ID, v);
        }
        Some(r)
    }

    /// Opens a session for `principal` (see [`Table::open`] for what makes room).
    fn open(&self, principal: &Arc<[u8]>) -> Result<(String, Arc<HttpSession>), OpenError> {
        let inner = tokio::sync::Mutex::new(Inner {
            session: Session::serving(self.resources),
            streams: HashMap::new(),
            timer: None,
        });
        self.sessions.open(principal, inner)
    }
}

/// The answer to an `initialize` no session could be opened for: 503, retry later.
fn refused(e: OpenError) -> Response {
    let text = match e {
        OpenError::PrincipalFull => {
            "Service unavailable: too many sessions of yours have calls in flight\n"
        }
        OpenError::Full => "Service unavailable: too many sessions have calls in flight\n",
        OpenError::Unavailable => "Service unavailable: no session could be opened\n",
    };
    tracing::info!("legacy http: initialize refused ({e:?})");
    let mut r = plain(StatusCode::SERVICE_UNAVAILABLE, text);
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    r
}

/// What a POST's own request got: its whole answer, or the start of a stream.
enum Mine {
    Done(Vec<Vec<u8>>),
    Open(Vec<Vec<u8>>),
}

/// Sends each line to the stream of the request it belongs to; returns those of request `own`.
fn route(inner: &mut Inner, sent: Vec<Sent>, own: Option<&str>) -> Mine {
    let mut mine = Vec::new();
    let mut done = false;
    for (line, reply_to, last) in sent {
        if reply_to.is_some() && reply_to.as_deref() == own {
            mine.push(line);
            done |= last;
            continue;
        }
        let Some(key) = reply_to else {
            tracing::debug!("legacy http: a line for no request dropped");
            continue;
        };
        if let Some(tx) = inner.streams.get(&key) {
            if tx.try_send(line).is_err() {
                tracing::info!("legacy http: a stream is gone or full; a line was dropped");
            }
        }
        if last {
            // Dropping the sender ends that stream.
            inner.streams.remove(&key);
        }
    }
    if done {
        Mine::Done(mine)
    } else {
        Mine::Open(mine)
    }
}

/// Makes sure the session's one timer wakes by its next deadline: nothing to do when the
/// running timer wakes by then (it re-arms itself for every later deadline), else the timer
/// is replaced. So a session never has more than one timer, however many requests it gets.
fn arm_timer<F, Fut>(sess: &Arc<HttpSession>, inner: &mut Inner, run: F)
where
    F: FnMut(Vec<u8>) -> Fut + Send + Clone + 'static,
    Fut: Future<Output = Option<Vec<u8>>> + Send + 'static,
{
    let Some(at) = inner.session.next_deadline() else {
        return;
    };
    if let Some((wakes, t)) = &inner.timer {
        if *wakes <= at && !t.is_finished() {
            return;
        }
    }
    if let Some((_, t)) = inner.timer.take() {
        t.abort();
    }
    let task = tokio::spawn(timer(Arc::downgrade(sess), at, run));
    inner.timer = Some((at, task));
}

/// The session's timer: at each deadline gives up the calls whose questions waited too long
/// (all of them, not just the first), then sleeps until the next deadline; ends when no
/// question waits or the session is gone.
async fn timer<F, Fut>(sess: Weak<HttpSession>, mut at: Instant, run: F)
where
    F: FnMut(Vec<u8>) -> Fut + Send + Clone + 'static,
    Fut: Future<Output = Option<Vec<u8>>> + Send + 'static,
{
    loop {
        tokio::time::sleep_until(at.into()).await;
        let Some(sess) = sess.upgrade() else { return };
        let mut inner = sess.value.lock().await;
        let actions = inner.session.tick(Instant::now());
        let sent = drive(&mut inner.session, actions, run.clone()).await;
        route(&mut inner, sent, None);
        sess.set_busy(inner.session.calls_in_flight() > 0);
        match inner.session.next_deadline() {
            Some(next) => {
                at = next;
                if let Some((wakes, _)) = &mut inner.timer {
                    *wakes = next;
                }
            }
            None => {
                // Detaches this task's own handle; it ends right here.
                inner.timer = None;
                return;
            }
        }
    }
}

/// A `text/event-stream` response.
fn sse(body: SseBody) -> Response {
    let headers = [
        (header::CONTENT_TYPE, "text/event-stream"),
        (header::CACHE_CONTROL, "no-cache"),
        (header::HeaderName::from_static("x-accel-buffering"), "no"),
    ];
    (StatusCode::OK, headers, Body::new(body)).into_response()
}

/// SSE events: lines known now, then (if open) lines from a channel until it closes.
struct SseBody {
    ready: std::collections::VecDeque<Vec<u8>>,
    rx: Option<mpsc::Receiver<Vec<u8>>>,
}

impl SseBody {
    fn done(lines: Vec<Vec<u8>>) -> Self {
        SseBody {
            ready: lines.into(),
            rx: None,
        }
    }

    fn open(lines: Vec<Vec<u8>>, rx: mpsc::Receiver<Vec<u8>>) -> Self {
        SseBody {
            ready: lines.into(),
            rx: Some(rx),
        }
    }
}

/// One `data:` event.
fn event(line: &[u8]) -> Frame<Bytes> {
    let mut e = Vec::with_capacity(line.len() + 24);
    e.extend_from_slice(b"event: message\ndata: ");
    e.extend_from_slice(line);
    e.extend_from_slice(b"\n\n");
    Frame::data(Bytes::from(e))
}

impl hyper::body::Body for SseBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(line) = self.ready.pop_front() {
            return Poll::Ready(Some(Ok(event(&line))));
        }
        let Some(rx) = self.rx.as_mut() else {
            return Poll::Ready(None);
        };
        match rx.poll_recv(cx) {
            Poll::Ready(Some(line)) => Poll::Ready(Some(Ok(event(&line)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}
