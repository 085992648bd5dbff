//! Legacy (2025-11-25) sessions over Streamable HTTP, hooked into `serve/http.rs` by two calls:
//! [`HttpLegacy::early`] (GET/DELETE naming a session) and [`HttpLegacy::post`] (a POST body).
//!
//! - A POST of `initialize` without 2026-07-28 `_meta` opens a session: the answer carries a
//!   fresh `Mcp-Session-Id` (128 random bits). At most [`MAX_SESSIONS`]; past that the least
//!   recently used one is dropped.
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
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use hyper::body::Frame;
use redmark_core::wire::meta::KEY_VERSION;
use serde_json::Value;
use tokio::sync::mpsc;

use super::session::{names_initialize, Session};
use super::stream::{drive, Sent};
use super::{LEGACY_VERSIONS, MAX_SESSIONS};

/// Lines one SSE stream may hold unsent (a client that does not read loses the rest).
pub const STREAM_BACKLOG: usize = 16;

/// The session header.
const SESSION_ID: &str = "mcp-session-id";

/// One legacy HTTP session.
struct HttpSession {
    /// Who opened it; only they may use it.
    principal: Arc<[u8]>,
    last_used: Mutex<Instant>,
    inner: tokio::sync::Mutex<Inner>,
}

/// A session's state and the open POST streams, by the id (JSON text) of their request.
struct Inner {
    session: Session,
    streams: HashMap<String, mpsc::Sender<Vec<u8>>>,
}

/// Every legacy HTTP session of one listener.
#[derive(Default)]
pub struct HttpLegacy {
    sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
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

/// A fresh unguessable session id (32 hex digits).
fn new_id() -> Option<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).ok()?;
    Some(hex::encode(b))
}

impl HttpLegacy {
    /// A listener's (empty) session table.
    pub fn new() -> Arc<Self> {
        Arc::new(HttpLegacy::default())
    }

    fn lookup(&self, id: &str, principal: &[u8]) -> Option<Arc<HttpSession>> {
        let map = self.sessions.lock().ok()?;
        let s = map.get(id).filter(|s| &*s.principal == principal)?;
        if let Ok(mut t) = s.last_used.lock() {
            *t = Instant::now();
        }
        Some(Arc::clone(s))
    }

    /// GET or DELETE naming a session (before the modern 405): DELETE ends it, GET gets 405;
    /// an unknown session gets 404. `None`: not a session request.
    pub fn early(&self, method: &Method, h: &HeaderMap, principal: &[u8]) -> Option<Response> {
        let id = session_id(h)?;
        if *method != Method::DELETE && *method != Method::GET {
            return None;
        }
        let found = self.lookup(id, principal);
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
        if let Ok(mut map) = self.sessions.lock() {
            map.remove(id);
        }
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
        Fut: Future<Output = Option<Vec<u8>>> + Send,
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
            Some(id) => match self.lookup(id, principal) {
                None => return Some(plain(StatusCode::NOT_FOUND, "Not found: no such session\n")),
                Some(s) => (id.to_owned(), s),
            },
            None if method == Some("initialize") => match self.open(principal) {
                Some(x) => x,
                None => return Some(plain(StatusCode::SERVICE_UNAVAILABLE, "No sessions\n")),
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
        let mut inner = sess.inner.lock().await;
        let actions = inner.session.client_line(body, Instant::now());
        let sent = drive(&mut inner.session, actions, run.clone()).await;
        let mine = route(&mut inner, sent, id.as_deref());
        arm_timer(&sess, &inner, run);
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
        if let Ok(v) = HeaderValue::from_str(&sid) {
            r.headers_mut().insert(SESSION_ID, v);
        }
        Some(r)
    }

    /// Opens a session for `principal`, dropping the least recently used one when full.
    fn open(&self, principal: &Arc<[u8]>) -> Option<(String, Arc<HttpSession>)> {
        let id = new_id()?;
        let s = Arc::new(HttpSession {
            principal: Arc::clone(principal),
            last_used: Mutex::new(Instant::now()),
            inner: tokio::sync::Mutex::new(Inner {
                session: Session::default(),
                streams: HashMap::new(),
            }),
        });
        let mut map = self.sessions.lock().ok()?;
        if map.len() >= MAX_SESSIONS {
            let oldest = map
                .iter()
                .min_by_key(|(_, s)| {
                    s.last_used
                        .lock()
                        .map(|t| *t)
                        .unwrap_or_else(|_| Instant::now())
                })
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                tracing::info!(
                    "legacy http: {MAX_SESSIONS} sessions open; dropped the least recently used"
                );
                map.remove(&k);
            }
        }
        map.insert(id.clone(), Arc::clone(&s));
        Some((id, s))
    }
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

/// When a question waits, wakes the session at its deadline to give up the call.
fn arm_timer<F, Fut>(sess: &Arc<HttpSession>, inner: &Inner, run: F)
where
    F: FnMut(Vec<u8>) -> Fut + Send + 'static,
    Fut: Future<Output = Option<Vec<u8>>> + Send,
{
    let Some(at) = inner.session.next_deadline() else {
        return;
    };
    let sess = Arc::downgrade(sess);
    tokio::spawn(async move {
        tokio::time::sleep_until(at.into()).await;
        let Some(sess) = sess.upgrade() else { return };
        let mut inner = sess.inner.lock().await;
        let actions = inner.session.tick(Instant::now());
        let sent = drive(&mut inner.session, actions, run).await;
        route(&mut inner, sent, None);
    });
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Past [`MAX_SESSIONS`] the least recently used session goes (and its id gets 404).
    #[test]
    fn sessions_are_bounded() {
        let table = HttpLegacy::new();
        let p: Arc<[u8]> = Arc::from(&b"u"[..]);
        let first = table.open(&p).expect("opened").0;
        for _ in 1..MAX_SESSIONS {
            table.open(&p).expect("opened");
        }
        assert!(
            table.lookup(&first, &p).is_some(),
            "still there, and now recently used"
        );
        let second_oldest = {
            let map = table.sessions.lock().unwrap();
            map.iter()
                .filter(|(k, _)| **k != first)
                .min_by_key(|(_, s)| *s.last_used.lock().unwrap())
                .map(|(k, _)| k.clone())
                .unwrap()
        };
        table.open(&p).expect("opened");
        let map = table.sessions.lock().unwrap();
        assert_eq!(map.len(), MAX_SESSIONS);
        assert!(map.contains_key(&first));
        assert!(!map.contains_key(&second_oldest));
        drop(map);
        let other: Arc<[u8]> = Arc::from(&b"v"[..]);
        assert!(
            table.lookup(&first, &other).is_none(),
            "another principal's session"
        );
    }
}
