//! A `subscriptions/listen` stream over Streamable HTTP: an event stream that stays open.
//!
//! The POST's response begins with the acknowledgement, carries an update whenever a followed
//! room-day changes, a keep-alive comment every interval, and ends with the request's result when
//! the server closes it.
//!
//! The connection is held while the stream is open, so it counts against its principal's
//! share of the listener like any request being answered ([`super::share`]); when its place
//! must go (shutdown, a newcomer) the stream ends gracefully with the result.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use crate::host::changes::{Follow, Live};
use crate::host::{Conn, Hosted};
use crate::store::changes::Change;

/// How often an idle stream gets a keep-alive comment unless `--keep-alive` says otherwise:
/// well inside the idle limits of proxies and load balancers (often 60 s).
pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The keep-alive event: an SSE comment, which clients ignore.
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// The streamed response of the listen request `message` the engine acknowledged with `ack`,
/// followed on `live` (a quiet one: a stream that only keeps alive), open until `closing`.
pub fn stream<A: Hosted>(
    conn: Conn<A>,
    live: &Live,
    message: &[u8],
    ack: &[u8],
    keep_alive: Duration,
    closing: CancellationToken,
) -> Response {
    let Some(follow) = live.follow(message) else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "Internal error\n").into_response();
    };
    let state = Open {
        conn,
        follow,
        first: Some(event(ack)),
        ticks: tokio::time::interval_at(tokio::time::Instant::now() + keep_alive, keep_alive),
        closing,
        pending: Vec::new(),
        done: false,
    };
    let events = futures_util::stream::unfold(state, |mut s| async move {
        let next = s.next().await?;
        Some((Ok::<_, std::convert::Infallible>(next), s))
    });
    let headers = [
        (header::CONTENT_TYPE, "text/event-stream"),
        (header::CACHE_CONTROL, "no-cache"),
        (header::HeaderName::from_static("x-accel-buffering"), "no"),
    ];
    (StatusCode::OK, headers, Body::from_stream(events)).into_response()
}

/// An open stream's state between events.
struct Open<A: Hosted> {
    conn: Conn<A>,
    follow: Follow,
    first: Option<Bytes>,
    ticks: tokio::time::Interval,
    closing: CancellationToken,
    /// Updates written but not yet sent (one change may touch several followed days).
    pending: Vec<Bytes>,
    done: bool,
}

impl<A: Hosted> Open<A> {
    /// The next bytes of the body, `None` once it has ended.
    async fn next(&mut self) -> Option<Bytes> {
        if let Some(ack) = self.first.take() {
            return Some(ack);
        }
        loop {
            if let Some(b) = self.pending.pop() {
                return Some(b);
            }
            if self.done {
                return None;
            }
            tokio::select! {
                biased;
                () = self.closing.cancelled() => {
                    self.done = true;
                    return self.conn.listen_closed(&self.follow.watch).map(|r| event(&r));
                }
                got = self.follow.changes.recv() => match got {
                    Ok(change) => self.told(&change),
                    // Fell behind: any followed day may have changed.
                    Err(RecvError::Lagged(_)) => self.told(&Change::Unknown),
                    Err(RecvError::Closed) => {
                        self.done = true;
                        return self.conn.listen_closed(&self.follow.watch).map(|r| event(&r));
                    }
                },
                _ = self.ticks.tick() => return Some(Bytes::from_static(KEEP_ALIVE)),
            }
        }
    }

    /// Queues an update for every followed URI `change` touches.
    fn told(&mut self, change: &Change) {
        let watch = &self.follow.watch;
        let updates: Vec<Bytes> = watch
            .touched(change)
            .filter_map(|uri| self.conn.resource_updated(watch, uri))
            .map(|n| event(&n))
            .collect();
        self.pending.extend(updates.into_iter().rev());
        if !self.pending.is_empty() {
            // An event went out: the next keep-alive is due a whole interval later.
            self.ticks.reset();
        }
    }
}

/// One SSE `message` event carrying `json`.
fn event(json: &[u8]) -> Bytes {
    let mut e = Vec::with_capacity(json.len() + 24);
    e.extend_from_slice(b"event: message\ndata: ");
    e.extend_from_slice(json);
    e.extend_from_slice(b"\n\n");
    Bytes::from(e)
}
