//! One connection's read-after-write order, kept by each message's store handle: a message
//! begun while earlier messages of its connection still wait for their writes reads only
//! after those writes are made (it must see them).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;

/// Where one message stands against its connection's earlier writes; clones share it (the
/// connection reads [`Fence::held`] while the message's engine is away).
#[derive(Clone, Default)]
pub struct Fence(Arc<State>);

#[derive(Default)]
struct State {
    /// Earlier messages of this connection had writes in flight when this one began.
    fenced: AtomicBool,
    /// This message waits to read until its connection resumes it.
    held: AtomicBool,
}

impl Fence {
    /// A new message begins: `fenced` when earlier messages of its connection still wait for
    /// their writes.
    pub fn begin(&self, fenced: bool) {
        self.0.fenced.store(fenced, Ordering::Relaxed);
        self.0.held.store(false, Ordering::Relaxed);
    }

    /// Whether the message waits to read until the connection's earlier writes are made (the
    /// connection then starts no later message before it: see `transport/stream.rs`).
    pub fn held(&self) -> bool {
        self.0.held.load(Ordering::Relaxed)
    }

    /// Before a read (or a write that could overtake earlier ones): if earlier writes of the
    /// connection may still be in flight, wait once for the connection to resume this message,
    /// which it does after they are made.
    pub async fn wait_for_earlier(&self) {
        if !self.0.fenced.load(Ordering::Relaxed) {
            return;
        }
        self.0.held.store(true, Ordering::Relaxed);
        let mut yielded = false;
        std::future::poll_fn(|cx| {
            if yielded {
                return Poll::Ready(());
            }
            yielded = true;
            // Polled by an executor rather than by the connection: poll again soon.
            cx.waker().wake_by_ref();
            Poll::Pending
        })
        .await;
        self.0.held.store(false, Ordering::Relaxed);
        self.0.fenced.store(false, Ordering::Relaxed);
    }

    /// A write joined a queue behind the connection's earlier writes (one committer, in
    /// order): nothing to wait for, and the message is polled again only after the connection
    /// resumed it, so what it reads next comes after them too.
    pub fn queued_behind_earlier(&self) {
        self.0.fenced.store(false, Ordering::Relaxed);
    }
}
