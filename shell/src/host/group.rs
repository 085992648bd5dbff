//! Group commit: every connection owns its engine, bookings from all of them share one writer.
//!
//! A handling that reaches a durable write (`commit`, `cancel`) waits for it (see
//! `drive.rs`): the host hands the write to the [`Committer`] — one thread that takes every
//! write waiting and applies them in arrival order in one transaction with one fsync
//! ([`SharedStore::write_group`]) — and resumes the handling with its outcome, without
//! blocking a worker. At-most-once (holder, nonce) and "slot taken" are decided inside the
//! committing transaction, in order, so any interleaving of connections gives the same
//! outcomes a single lock would.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use redmark_core::booking::{Booking, BookingId, Holder, Slot, Store, StoreError};
use redmark_core::seal::Nonce;
use tokio::sync::{mpsc, oneshot};

use crate::store::{SharedStore, Write, Written};

/// Most writes one transaction takes; more wait for the next one.
pub const MAX_GROUP: usize = 1024;

/// Any core [`Store`] as a [`SharedStore`] (the in-memory floor of `redmark call --scratch`,
/// and the host's tests): one lock, each write its own commit.
pub struct Locked<S>(Mutex<S>);

impl<S> Locked<S> {
    /// Shares `store`.
    pub fn new(store: S) -> Self {
        Locked(Mutex::new(store))
    }

    fn with<T>(&self, f: impl FnOnce(&mut S) -> Result<T, StoreError>) -> Result<T, StoreError> {
        // A panic under the lock is answered -32603 by the host; the store decides for itself
        // whether it can go on (a poisoned lock is not a reason to stop).
        let mut s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut s)
    }
}

impl<S: Store + Send + 'static> SharedStore for Locked<S> {
    fn get(&self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        self.with(|s| s.get(id))
    }
    fn made_by(&self, holder: &Holder, nonce: &Nonce) -> Result<Option<Booking>, StoreError> {
        self.with(|s| s.made_by(holder, nonce))
    }
    fn occupant(&self, room: &str, slot: Slot) -> Result<Option<Booking>, StoreError> {
        self.with(|s| s.occupant(room, slot))
    }
    fn next_held(
        &self,
        holder: &Holder,
        slot: Slot,
        room: &str,
    ) -> Result<Option<Booking>, StoreError> {
        self.with(|s| s.next_held(holder, slot, room))
    }
    fn write_group(&self, writes: &[Write]) -> Vec<Written> {
        writes
            .iter()
            .map(|w| match w {
                Write::Book(new) => Written::Book(self.with(|s| s.commit(new))),
                Write::Cancel(id, h) => Written::Cancel(self.with(|s| s.cancel(*id, h))),
            })
            .collect()
    }
}

/// One write waiting for the committer, with where its outcome goes.
type Job = (Write, oneshot::Sender<Written>);

/// The one committing thread of a store and its queue. The thread starts with the first
/// write, so a server that is never asked to book never runs it.
pub struct Committer {
    jobs: mpsc::UnboundedSender<Job>,
    /// Set once the first write has tried to start the thread.
    tried: std::sync::OnceLock<()>,
    /// The thread's loop until then (it owns the queue's receiving end and the store).
    start: Mutex<Option<Start>>,
    /// The thread, once started.
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// What starts the committing thread: its loop, taken by the first write.
type Start = Box<dyn FnOnce() -> std::io::Result<std::thread::JoinHandle<()>> + Send>;

/// A lock whose data stays good if a holder panicked (it only ever holds an `Option`).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Committer {
    /// The committer of `store`; its thread starts with the first write. [`Committer::close`]
    /// releases the store.
    pub fn new<S: SharedStore>(store: Arc<S>) -> Committer {
        let (jobs, rx) = mpsc::unbounded_channel::<Job>();
        let start: Start = Box::new(move || {
            std::thread::Builder::new()
                .name("redmark-commit".into())
                .spawn(move || commit_loop(&*store, rx))
        });
        Committer {
            jobs,
            tried: std::sync::OnceLock::new(),
            start: Mutex::new(Some(start)),
            thread: Mutex::new(None),
        }
    }

    /// Sends `write` to be made durable in the next group; its outcome comes back on the
    /// receiver (closed without one if the committer is gone).
    pub fn submit(&self, write: Write) -> oneshot::Receiver<Written> {
        self.ensure_started();
        let (tx, rx) = oneshot::channel();
        // A closed queue drops `tx`: the receiver then reports the write lost.
        let _ = self.jobs.send((write, tx));
        rx
    }

    /// Starts the thread if no write has yet. If it cannot start, its queue closes and every
    /// write is reported lost (nothing is acknowledged).
    fn ensure_started(&self) {
        self.tried.get_or_init(|| {
            let Some(start) = lock(&self.start).take() else {
                return;
            };
            match start() {
                Ok(h) => *lock(&self.thread) = Some(h),
                Err(e) => tracing::error!(
                    "booking store: cannot start the committing thread ({e}); bookings fail"
                ),
            }
        });
    }

    /// Whether the thread was started.
    #[cfg(test)]
    pub fn started(&self) -> bool {
        lock(&self.thread).is_some()
    }

    /// Closes the queue and waits for the thread to make the writes sent and end (if it never
    /// started, drops what it would have held): the store is released when this returns.
    pub fn close(self) {
        let Committer {
            jobs,
            start,
            thread,
            ..
        } = self;
        drop(jobs);
        drop(start);
        if let Some(h) = thread.into_inner().unwrap_or_else(|p| p.into_inner()) {
            let _ = h.join();
        }
    }
}

/// The committing thread: takes every write waiting (up to [`MAX_GROUP`]), makes them in one
/// group, answers each; ends when the queue closes.
fn commit_loop<S: SharedStore>(store: &S, mut rx: mpsc::UnboundedReceiver<Job>) {
    let mut group: Vec<Job> = Vec::with_capacity(MAX_GROUP);
    let mut writes: Vec<Write> = Vec::with_capacity(MAX_GROUP);
    while let Some(first) = rx.blocking_recv() {
        group.push(first);
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(j) => group.push(j),
                Err(_) => break,
            }
        }
        writes.extend(group.iter().map(|(w, _)| w.clone()));
        let began = Instant::now();
        let outcomes =
            super::panics::catch_quiet(|| store.write_group(&writes)).unwrap_or_else(|p| {
                tracing::error!("booking store: a group commit panicked ({p})");
                Vec::new()
            });
        // OPS (crate::metrics): the group's size, how long it took, what it made.
        crate::metrics::metrics().group_committed(&outcomes, began.elapsed());
        let mut outcomes = outcomes.into_iter();
        for (_, reply) in group.drain(..) {
            let got = outcomes.next().unwrap_or(Written::Lost);
            // The asker may be gone (connection closed): its write stands anyway.
            let _ = reply.send(got);
        }
        writes.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::redb::RedbStore;
    use redmark_core::booking::{Commit, Day, NewBooking, RoomId};
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn new(hour: u8, holder: u8, nonce: u16) -> NewBooking {
        let mut n = [0; 8];
        n[..2].copy_from_slice(&nonce.to_le_bytes());
        NewBooking {
            room: RoomId::try_from("nook").unwrap(),
            slot: Slot {
                day: Day {
                    year: 2099,
                    month: 1,
                    day: 1,
                },
                hour,
            },
            attendees: 1,
            holder: [holder; 8],
            nonce: n,
        }
    }

    /// The redb store, counting its group commits.
    struct Counting(RedbStore, AtomicUsize);

    impl SharedStore for Counting {
        fn get(&self, id: BookingId) -> Result<Option<Booking>, StoreError> {
            SharedStore::get(&self.0, id)
        }
        fn made_by(&self, h: &Holder, n: &Nonce) -> Result<Option<Booking>, StoreError> {
            SharedStore::made_by(&self.0, h, n)
        }
        fn occupant(&self, room: &str, slot: Slot) -> Result<Option<Booking>, StoreError> {
            SharedStore::occupant(&self.0, room, slot)
        }
        fn next_held(
            &self,
            h: &Holder,
            slot: Slot,
            room: &str,
        ) -> Result<Option<Booking>, StoreError> {
            SharedStore::next_held(&self.0, h, slot, room)
        }
        fn write_group(&self, writes: &[Write]) -> Vec<Written> {
            self.1.fetch_add(1, Ordering::SeqCst);
            self.0.write_group(writes)
        }
    }

    /// Writes sent together are made in few transactions, and each is decided exactly as a
    /// lone commit in arrival order would: one booking per slot (the rest `Taken`), one per
    /// (holder, nonce) (a repeat `Replayed`, the same booking), a cancel frees its slot for
    /// the writes after it.
    #[test]
    fn a_group_decides_every_write_in_order_and_exactly() {
        let dir = std::env::temp_dir().join(format!("redmark-group-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let store = Arc::new(Counting(
            RedbStore::open_checked(&dir, false).unwrap(),
            AtomicUsize::new(0),
        ));
        let c = Committer::new(Arc::clone(&store));
        assert!(!c.started(), "no thread before the first write");
        let mut writes = Vec::new();
        for i in 0..200u16 {
            // 200 bookings over 24 hours of one room: most find their slot taken.
            writes.push(Write::Book(new((i % 24) as u8, (i % 3) as u8, i)));
        }
        writes.push(Write::Book(new(0, 0, 0))); // the first booking's operation again
        writes.push(Write::Cancel(1, [1; 8])); // not theirs: nothing
        writes.push(Write::Cancel(1, [0; 8]));
        writes.push(Write::Book(new(0, 9, 999))); // slot 0 is free again
        writes.push(Write::Cancel(1, [0; 8])); // idempotent
        let waiting: Vec<_> = writes.iter().cloned().map(|w| c.submit(w)).collect();
        let got: Vec<Written> = waiting
            .into_iter()
            .map(|rx| rx.blocking_recv().expect("an outcome"))
            .collect();
        assert!(c.started());
        c.close();
        // The same writes one at a time, one commit each, on a fresh store: the reference.
        let dir2 = dir.join("alone");
        std::fs::create_dir_all(&dir2).unwrap();
        let mut alone = RedbStore::open_checked(&dir2, false).unwrap();
        let want: Vec<Written> = writes
            .iter()
            .map(|w| match w {
                Write::Book(n) => Written::Book(Store::commit(&mut alone, n)),
                Write::Cancel(id, h) => Written::Cancel(Store::cancel(&mut alone, *id, h)),
            })
            .collect();
        assert_eq!(got, want);
        let created = got
            .iter()
            .filter(|w| matches!(w, Written::Book(Ok(Commit::Created(_)))))
            .count();
        assert_eq!(created, 25, "24 hours, and hour 0 again after the cancel");
        assert!(matches!(&got[200], Written::Book(Ok(Commit::Replayed(b))) if b.id == 1));
        let groups = store.1.load(Ordering::SeqCst);
        assert!(
            groups < writes.len() / 2,
            "{groups} commits for {} writes",
            writes.len()
        );
        drop(alone);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
