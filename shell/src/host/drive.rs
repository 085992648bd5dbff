//! One message driven to its answer: the engine's handling is stepped, each store operation
//! it waits for is performed (a read at once or awaited, a write through the group
//! committer) and the same handling is resumed with the outcome. A message is parsed and run
//! once, however long its store takes.

use std::panic::{self, AssertUnwindSafe};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use redmark_core::booking::{
    resume, step, Answered, Exchange, Link, Outcome, Pending, Step, StoreError, StoreOp,
};
use redmark_core::engine::Message;
use redmark_core::wire::lines::Line;
use redmark_core::{App, Context, Engine, Handled, HttpHeaders};

use super::entropy::next_entropy;
use super::group::Committer;
use super::msg::Msg;
use super::panics::inject_panic;
use crate::store::{Reading, SharedStore, Write};

/// A booking app's link to its host, any thread may take it: a handling waiting for its store
/// can be resumed on another worker.
#[derive(Clone, Default)]
pub struct HostLink(Arc<LinkState>);

#[derive(Default)]
struct LinkState {
    exchange: Mutex<Exchange>,
    /// Set when the handling waits to read until the connection's earlier writes are made.
    held: AtomicBool,
}

impl Link for HostLink {
    fn with<R>(&self, f: impl FnOnce(&mut Exchange) -> R) -> R {
        f(&mut self
            .0
            .exchange
            .lock()
            .unwrap_or_else(PoisonError::into_inner))
    }
}

impl HostLink {
    /// Whether the handling on this link waits to read until earlier writes are made (then
    /// the connection starts no later message before it: see `transport/stream.rs`).
    pub fn held(&self) -> bool {
        self.0.held.load(Ordering::Relaxed)
    }

    fn hold(&self, held: bool) {
        self.0.held.store(held, Ordering::Relaxed);
    }
}

/// The link of an app that never waits: nothing is ever left on it.
struct Unlinked;

impl Link for Unlinked {
    fn with<R>(&self, f: impl FnOnce(&mut Exchange) -> R) -> R {
        f(&mut Exchange::new())
    }
}

/// What answers a handling's store operations: the group committer (writes) and the store
/// (reads); either may be absent (then the operation fails).
#[derive(Clone, Copy)]
pub struct Backing<'a> {
    pub committer: Option<&'a Committer>,
    pub store: Option<&'a dyn SharedStore>,
}

/// The clock, entropy and principal of one message.
pub struct Cx<'p> {
    pub now: u64,
    pub entropy: [u8; 8],
    pub principal: &'p [u8],
}

impl<'p> Cx<'p> {
    /// Now, fresh entropy, and `principal`.
    pub fn new(principal: &'p [u8]) -> Self {
        Cx {
            now: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            entropy: next_entropy(),
            principal,
        }
    }
}

/// Most store operations one message may wait for (`list_rooms` reads one per room): a
/// handling that asks for more is ended with `-32603`.
pub const MAX_STORE_OPS: usize = 64;

/// The engine's handling of a message panicked, or asked for more than [`MAX_STORE_OPS`]
/// (answered `-32603` by the caller).
pub struct Panicked;

/// Handles `msg` on `engine` to its end. `fenced`: this connection has earlier messages whose
/// writes are still in flight, so a read before this message's own first write waits until
/// the connection resumes it (by then those writes are made, and it sees them).
pub async fn drive<A: App>(
    engine: &mut Engine<A>,
    link: Option<HostLink>,
    msg: Msg<'_>,
    cx: &Cx<'_>,
    out: &mut [u8],
    backing: Backing<'_>,
    fenced: bool,
) -> Result<Handled, Panicked> {
    let context = Context {
        now: cx.now,
        principal: cx.principal,
        entropy: cx.entropy,
    };
    let params: Vec<(&str, &str)>;
    let headers;
    let message = match msg {
        Msg::Line(l) => Message::Line(Line::Message(l)),
        Msg::TooLong => Message::Line(Line::TooLong),
        Msg::Http { body, headers: h } => {
            params = h
                .params
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str()))
                .collect();
            headers = HttpHeaders {
                version: h.version.as_deref(),
                method: h.method.as_deref(),
                name: h.name.as_deref(),
                params: &params,
            };
            Message::Http(body, &headers)
        }
    };
    let mut handling = pin!(engine.handling(message, &context, out));
    let Some(link) = &link else {
        // An app without a link never waits.
        return match guarded(msg, || step(handling.as_mut(), &Unlinked))? {
            Step::Done(h) => Ok(h),
            Step::Pending(_) => Err(Panicked),
        };
    };
    let mut at = guarded(msg, || step(handling.as_mut(), link))?;
    let mut wrote = false;
    for _ in 0..MAX_STORE_OPS {
        match at {
            Step::Done(h) => return Ok(h),
            Step::Pending(p) => {
                if fenced && !wrote && !p.is_write() {
                    link.hold(true);
                    yield_once().await;
                    link.hold(false);
                }
                wrote |= p.is_write();
                let answered = perform(p, backing).await;
                at = guarded(msg, || resume(handling.as_mut(), link, answered))?;
            }
        }
    }
    match at {
        Step::Done(h) => Ok(h),
        Step::Pending(_) => {
            tracing::error!("a message asked for more than {MAX_STORE_OPS} store operations");
            Err(Panicked)
        }
    }
}

/// Performs one store operation: a read on the store (at once, or awaited for a store across
/// the network), a write through the group committer (never blocking the thread).
async fn perform(p: Pending, backing: Backing<'_>) -> Answered {
    let (op, asked) = p.into_op();
    // The committer or the store went away: the operation fails, nothing is acknowledged.
    let lost = || match op {
        StoreOp::Commit(_) => Outcome::Commit(Err(StoreError::Io)),
        _ => Outcome::Booking(Err(StoreError::Io)),
    };
    let outcome = match (Write::of(&op), backing.committer, backing.store) {
        (Some(w), Some(c), _) => c.submit(w).await.map_or_else(|_| lost(), |w| w.outcome()),
        (None, _, Some(store)) => {
            let began = Instant::now();
            let o = match store.read(&op) {
                Reading::Now(o) => o,
                Reading::Later(reading) => reading.await,
            };
            // OPS (crate::metrics): store latency.
            crate::metrics::metrics().store_read(began.elapsed());
            o
        }
        _ => lost(),
    };
    asked.answer(outcome)
}

/// Runs one step of the engine; a panic is answered, not propagated (see the module doc of
/// `host` for why the engine stays usable). The panic hook has logged where it happened.
fn guarded(msg: Msg<'_>, f: impl FnOnce() -> Step<Handled>) -> Result<Step<Handled>, Panicked> {
    panic::catch_unwind(AssertUnwindSafe(|| {
        inject_panic(msg);
        f()
    }))
    .map_err(|_| Panicked)
}

/// Returns `Pending` once, then `Ready`: the handling waits for its connection to poll it
/// again (after the earlier writes).
async fn yield_once() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            std::task::Poll::Ready(())
        } else {
            yielded = true;
            // Polled by an executor rather than by the connection: poll again soon.
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await;
}
