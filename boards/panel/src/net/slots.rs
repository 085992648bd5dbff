//! How long a connection may hold its socket: [`IDLE_MS`] to start its next message,
//! [`MESSAGE_MS`] from that message's first byte to its last (a deadline, not an idle timer:
//! a byte now and then does not stretch it), and the spare listener: when every socket of a
//! kind holds a connection, the one that has waited longest for its next message gives its
//! socket up once it has waited [`EVICT_MS`].

use smoltcp::iface::{SocketHandle, SocketSet};
use smoltcp::socket::tcp::{Socket, State};

use super::{Pass, EVICT_MS, IDLE_MS, MESSAGE_MS};
use crate::diag;

/// A connection's clock: when its wait for the next message began (its accept or its last
/// answer) and when that message's first byte was read; 0: not yet.
#[derive(Clone, Copy)]
pub struct Wait {
    since_ms: u64,
    first_ms: u64,
}

impl Wait {
    pub const fn new() -> Wait {
        Wait { since_ms: 0, first_ms: 0 }
    }

    /// Starts the clock of a connection just seen (accepted, or being accepted).
    pub fn begin(&mut self, now_ms: u64) {
        if self.since_ms == 0 {
            self.restart(now_ms);
        }
    }

    /// The connection was answered: its next message is awaited from now.
    pub fn restart(&mut self, now_ms: u64) {
        self.since_ms = now_ms.max(1);
        self.first_ms = 0;
    }

    /// A byte of the next message has been read; the first one starts [`MESSAGE_MS`].
    pub fn started(&mut self, now_ms: u64) {
        if self.first_ms == 0 {
            self.first_ms = now_ms.max(1);
        }
    }

    /// Whether a message is under way (its first byte read, its last not yet).
    pub fn in_message(&self) -> bool {
        self.first_ms != 0
    }

    /// Whether the connection is past its deadline: no message begun within [`IDLE_MS`] of
    /// its accept or last answer, or a message not whole within [`MESSAGE_MS`] of its first
    /// byte.
    pub fn expired(&self, now_ms: u64) -> bool {
        match (self.since_ms, self.first_ms) {
            (0, _) => false,
            (since, 0) => now_ms.saturating_sub(since) > IDLE_MS,
            (_, first) => now_ms.saturating_sub(first) > MESSAGE_MS,
        }
    }
}

/// Keeps one socket of a kind listening: when every socket in `conns` holds a connection,
/// the one whose wait began first is reset, once that was [`EVICT_MS`] ago (its own pass then
/// listens again). A new client thus finds a listener at most [`EVICT_MS`] after the last
/// one was taken, and a connection is never reset within [`EVICT_MS`] of its accept or of its
/// last answer.
pub(crate) fn keep_one_listening(
    sockets: &mut SocketSet<'_>,
    conns: impl Iterator<Item = (SocketHandle, Wait)>,
    now_ms: u64,
) -> Pass {
    let mut oldest: Option<(SocketHandle, u64)> = None;
    for (h, wait) in conns {
        let s = sockets.get::<Socket>(h);
        if !s.is_open() || s.state() == State::Listen || wait.since_ms == 0 {
            // Free, or about to be (its pass listens again), or not yet seen by its pass.
            return Pass::Idle;
        }
        if oldest.is_none_or(|(_, since)| wait.since_ms < since) {
            oldest = Some((h, wait.since_ms));
        }
    }
    match oldest {
        Some((h, since)) if now_ms.saturating_sub(since) >= EVICT_MS => {
            sockets.get_mut::<Socket>(h).abort();
            diag::text("net: every connection taken; the longest waiting one is reset");
            Pass::Busy
        }
        _ => Pass::Idle,
    }
}
