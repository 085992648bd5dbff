//! `subscriptions/listen` streams on a line connection: stdio, TCP, the folder's socket (relay).
//!
//! Their notifications come between the answers; a stream ends with the client's
//! `notifications/cancelled` or, from the server, with its own.

use redmark_core::wire::envelope;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::broadcast::Receiver;

use crate::host::changes::{Live, Watch};
use crate::host::{Conn, Hosted};
use crate::store::changes::Change;

/// Streams one line connection may hold open: a further listen ends the oldest (it gets its
/// `notifications/cancelled`), so a client that never cancels holds no more than this.
pub const MAX_LINE_STREAMS: usize = 16;

/// The open streams of one line connection.
pub struct LineStreams {
    live: Live,
    /// Open streams, oldest first.
    watches: Vec<Watch>,
    /// The store's changes, while a stream is open.
    changes: Option<Receiver<Change>>,
}

impl LineStreams {
    /// No stream open yet; `live`: where changes come from (quiet: streams that hear nothing).
    pub fn new(live: &Live) -> LineStreams {
        LineStreams {
            live: live.clone(),
            watches: Vec::new(),
            changes: None,
        }
    }

    /// Whether no stream is open.
    pub fn is_empty(&self) -> bool {
        self.watches.is_empty()
    }

    /// The engine acknowledged `line`, a listen: its stream is open from now on. Over
    /// [`MAX_LINE_STREAMS`], the oldest ends: its closing line is returned.
    pub fn opened<A: Hosted>(&mut self, line: &[u8], conn: &Conn<A>) -> Option<Vec<u8>> {
        let follow = self.live.follow(line)?;
        if self.changes.is_none() {
            self.changes = Some(follow.changes);
        }
        self.watches.push(follow.watch);
        if self.watches.len() > MAX_LINE_STREAMS {
            let oldest = self.watches.remove(0);
            return conn.listen_cancelled(&oldest);
        }
        None
    }

    /// A client's `notifications/cancelled` naming an open stream ends it (nothing is sent).
    pub fn cancelled(&mut self, line: &[u8]) {
        if self.watches.is_empty() || !contains(line, b"notifications/cancelled") {
            return;
        }
        let Ok(env) = envelope::read(line) else {
            return;
        };
        if env.id.is_some() || !env.method.eq_str("notifications/cancelled") {
            return;
        }
        let Some(id) = env.params.and_then(|p| p.get("requestId")) else {
            return;
        };
        self.watches.retain(|w| w.id() != id.raw());
        if self.watches.is_empty() {
            self.changes = None;
        }
    }

    /// The next change any open stream may care about (never, while none is open).
    pub async fn next(&mut self) -> Change {
        let Some(rx) = self.changes.as_mut() else {
            return std::future::pending().await;
        };
        match rx.recv().await {
            Ok(c) => c,
            // Fell behind: any followed day may have changed.
            Err(RecvError::Lagged(_)) => Change::Unknown,
            Err(RecvError::Closed) => {
                self.changes = None;
                std::future::pending().await
            }
        }
    }

    /// The update lines `change` makes on the open streams.
    pub fn updates<A: Hosted>(&self, change: &Change, conn: &Conn<A>) -> Vec<Vec<u8>> {
        self.watches
            .iter()
            .flat_map(|w| {
                w.touched(change)
                    .filter_map(|uri| conn.resource_updated(w, uri))
            })
            .collect()
    }

    /// Ends every open stream (the server stops): their closing lines.
    pub fn close_all<A: Hosted>(&mut self, conn: &Conn<A>) -> Vec<Vec<u8>> {
        self.changes = None;
        self.watches
            .drain(..)
            .filter_map(|w| conn.listen_cancelled(&w))
            .collect()
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}
