//! Group commit: every connection's writes meet here, and one thread makes all that are
//! waiting in one redb transaction with one fsync.
//!
//! A write is a closure on the transaction's [`Tables`], sent by a store handle's `commit` or
//! `cancel` (see `bookings.rs`), which awaits its outcome without blocking a worker. The
//! thread takes every write waiting (up to [`MAX_GROUP`]), runs them in arrival order inside
//! one transaction, commits it durably, and only then tells the store's followers what each
//! changed (whether or not its writer still waits) and answers each. At-most-once (holder,
//! nonce) and "span taken" are decided inside that transaction, in order, so any interleaving
//! of connections gives the same outcomes a single lock would. Writes of one connection keep
//! their order (one queue, one thread).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use redb::{Database, Durability};
use redmark_core::booking::StoreError;
use tokio::sync::{mpsc, oneshot};

use super::file::RedbStore;
use super::tables::{fault, Tables};
use crate::store::changes::{Change, Changes};

/// Most writes one transaction takes; more wait for the next one.
pub const MAX_GROUP: usize = 1024;

/// One write waiting for the committer: made inside the group's transaction, told and
/// answered once the transaction is durable (or failed).
trait GroupWrite: Send {
    /// Makes the write; an error spoils the whole transaction.
    fn make(&mut self, tables: &mut Tables<'_>) -> Result<(), StoreError>;
    /// If `made` (the transaction is durable), tells `changes` what the write changed; then
    /// answers the writer: its outcome, else the error.
    fn answer(self: Box<Self>, made: Result<(), StoreError>, store: &RedbStore, changes: &Changes);
}

/// A write `F` with outcome `T`, what it changed by `G` (from its outcome and the store read
/// after its commit), and where the outcome goes.
struct Pending<T, F, G> {
    write: Option<F>,
    outcome: Option<T>,
    tell: G,
    to: oneshot::Sender<Result<T, StoreError>>,
}

impl<T, F, G> GroupWrite for Pending<T, F, G>
where
    T: Send,
    F: FnOnce(&mut Tables<'_>) -> Result<T, StoreError> + Send,
    G: FnOnce(&T, &RedbStore) -> Vec<Change> + Send,
{
    fn make(&mut self, tables: &mut Tables<'_>) -> Result<(), StoreError> {
        let write = self.write.take().ok_or(StoreError::Io)?;
        self.outcome = Some(write(tables)?);
        Ok(())
    }

    fn answer(self: Box<Self>, made: Result<(), StoreError>, store: &RedbStore, changes: &Changes) {
        let Pending {
            outcome, tell, to, ..
        } = *self;
        let got = made.and_then(|()| outcome.ok_or(StoreError::Io));
        if let Ok(outcome) = &got {
            for change in tell(outcome, store) {
                changes.publish(change);
            }
        }
        // The writer may be gone (connection closed): its write stands anyway.
        let _ = to.send(got);
    }
}

/// One write on the queue.
type Job = Box<dyn GroupWrite>;

/// The one committing thread of a store and its queue. The thread starts with the first
/// write, so a server that is never asked to book never runs it; dropping the committer
/// closes the queue and waits for the thread to make what was sent, releasing the store.
pub struct Committer {
    jobs: Option<mpsc::UnboundedSender<Job>>,
    /// Set once the first write has tried to start the thread.
    tried: std::sync::OnceLock<()>,
    /// The thread's loop until then (it owns the queue's receiving end and the store).
    start: Mutex<Option<Start>>,
    /// The thread, once started.
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Transactions committed.
    groups: Arc<AtomicU64>,
}

/// What starts the committing thread: its loop, taken by the first write.
type Start = Box<dyn FnOnce() -> std::io::Result<std::thread::JoinHandle<()>> + Send>;

/// A lock whose data stays good if a holder panicked (it only ever holds an `Option`).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Committer {
    /// The committer of `store`, telling `changes`; its thread starts with the first write.
    pub fn new(store: Arc<RedbStore>, changes: Arc<Changes>) -> Committer {
        let (jobs, rx) = mpsc::unbounded_channel::<Job>();
        let groups = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&groups);
        let start: Start = Box::new(move || {
            std::thread::Builder::new()
                .name("redmark-commit".into())
                .spawn(move || commit_loop(&store, &changes, rx, &counted))
        });
        Committer {
            jobs: Some(jobs),
            tried: std::sync::OnceLock::new(),
            start: Mutex::new(Some(start)),
            thread: Mutex::new(None),
            groups,
        }
    }

    /// Transactions committed so far.
    #[cfg(test)]
    pub fn groups(&self) -> u64 {
        self.groups.load(Ordering::Relaxed)
    }

    /// Makes `write` durable in the next group: its outcome once the group's transaction is
    /// committed (what `tell` says it changed told first, even if this future was dropped
    /// meanwhile), or the error that spoiled it ([`StoreError::Io`] if the committer is gone:
    /// nothing was acknowledged).
    pub async fn write<T, F, G>(&self, write: F, tell: G) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Tables<'_>) -> Result<T, StoreError> + Send + 'static,
        G: FnOnce(&T, &RedbStore) -> Vec<Change> + Send + 'static,
    {
        self.ensure_started();
        let (to, outcome) = oneshot::channel();
        let job = Box::new(Pending {
            write: Some(write),
            outcome: None,
            tell,
            to,
        });
        // A closed queue drops the job: the receiver then reports the write lost.
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send(job);
        }
        outcome.await.unwrap_or(Err(StoreError::Io))
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
}

impl Drop for Committer {
    fn drop(&mut self) {
        // Closing the queue ends the thread once it has made what was sent.
        self.jobs = None;
        drop(lock(&self.start).take());
        if let Some(h) = lock(&self.thread).take() {
            let _ = h.join();
            let groups = self.groups.load(Ordering::Relaxed);
            tracing::debug!("booking store: closed after {groups} group commits");
        }
    }
}

/// The committing thread: takes every write waiting (up to [`MAX_GROUP`]), makes them in one
/// transaction, answers each once it is durable; ends when the queue closes.
fn commit_loop(
    store: &RedbStore,
    changes: &Changes,
    mut rx: mpsc::UnboundedReceiver<Job>,
    groups: &AtomicU64,
) {
    let mut group: Vec<Job> = Vec::with_capacity(MAX_GROUP);
    while let Some(first) = rx.blocking_recv() {
        group.push(first);
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(j) => group.push(j),
                Err(_) => break,
            }
        }
        let began = Instant::now();
        let made = store.guarded("committing", |db| {
            commit_group(db, |tables| {
                group.iter_mut().try_for_each(|w| w.make(tables))
            })
        });
        // OPS (crate::metrics): the group's size and how long it took.
        crate::metrics::metrics().group_committed(group.len(), began.elapsed());
        groups.fetch_add(1, Ordering::Relaxed);
        for w in group.drain(..) {
            w.answer(made, store, changes);
        }
    }
}

/// One group's transaction: `make` on its tables, the indexes settled if due (`tiers.rs`),
/// committed durably (fsynced when this returns: only then is any write of it acknowledged).
pub(super) fn commit_group(
    db: &Database,
    make: impl FnOnce(&mut Tables<'_>) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut tx = db.begin_write().map_err(fault)?;
    tx.set_durability(Durability::Immediate);
    let due = {
        let mut tables = Tables::open(&tx)?;
        make(&mut tables)?;
        tables.due()?
    };
    let began = Instant::now();
    let settled = super::tables::settle(&tx, due)?.then(|| began.elapsed());
    let began = Instant::now();
    tx.commit().map_err(fault)?;
    if let Some(moved) = settled {
        tracing::debug!(
            "index tiers: the middle tables settled in {moved:?}, then the commit took {:?}",
            began.elapsed()
        );
    }
    Ok(())
}

#[cfg(test)]
#[path = "cost_tests.rs"]
mod cost_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::redb::RedbBookings;
    use crate::store::Bookings as _;
    use redmark_core::booking::{Actor, Commit, Day, NewBooking, RoomId, Span, Store, Title};

    fn new(hour: u8, holder: u8, nonce: u16) -> NewBooking {
        let mut n = [0; 8];
        n[..2].copy_from_slice(&nonce.to_le_bytes());
        NewBooking {
            room: RoomId::try_from("nook").unwrap(),
            span: Span::hour(
                Day {
                    year: 2099,
                    month: 1,
                    day: 1,
                },
                hour,
            ),
            title: Title::new(),
            attendees: 1,
            holder: [holder; 8],
            nonce: n,
        }
    }

    /// A write to send: a booking or a cancellation.
    #[derive(Clone)]
    enum W {
        Book(NewBooking),
        Cancel(u32, [u8; 8]),
    }

    /// The outcome of a [`W`], as the store's method returns it.
    #[derive(Debug, PartialEq)]
    enum Got {
        Book(Result<Commit, StoreError>),
        Cancel(Result<Option<redmark_core::booking::Booking>, StoreError>),
    }

    async fn send(mut s: RedbBookings, w: W) -> Got {
        match w {
            W::Book(n) => Got::Book(s.commit(&n).await),
            W::Cancel(id, h) => Got::Cancel(s.cancel(id, &Actor::holder(h)).await),
        }
    }

    /// A write whose writer stopped waiting (a client gone mid-request) is still told to the
    /// store's followers once it is committed.
    #[test]
    fn a_write_is_told_though_its_writer_is_gone() {
        use futures_util::FutureExt as _;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let dir = crate::store::redb::tests::scratch_dir("group-told");
        let store = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
        let mut heard = store.changes().unwrap().follow();
        let mut h = store.handle();
        let booking = new(9, 1, 1);
        // Polled once (the write is sent), then dropped.
        assert!(h.commit(&booking).now_or_never().is_none());
        let wait = std::time::Duration::from_secs(10);
        let told = rt.block_on(async { tokio::time::timeout(wait, heard.recv()).await });
        let told = told.expect("told within 10 s").unwrap();
        assert_eq!(
            told,
            crate::store::changes::Change::room("nook", booking.span)
        );
        drop((h, store));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Writes sent together are made in few transactions, and each is decided exactly as a
    /// lone commit in arrival order would: one booking per slot (the rest `Taken`), one per
    /// (holder, nonce) (a repeat `Replayed`, the same booking), a cancel frees its slot for
    /// the writes after it.
    #[test]
    fn a_group_decides_every_write_in_order_and_exactly() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let dir = crate::store::redb::tests::scratch_dir("group");
        let store = RedbBookings::new(RedbStore::open_checked(&dir, false).unwrap());
        assert!(
            !store.committer.started(),
            "no thread before the first write"
        );
        let mut writes = Vec::new();
        for i in 0..200u16 {
            // 200 bookings over 24 hours of one room: most find their slot taken.
            writes.push(W::Book(new((i % 24) as u8, (i % 3) as u8, i)));
        }
        writes.push(W::Book(new(0, 0, 0))); // the first booking's operation again
        writes.push(W::Cancel(1, [1; 8])); // not theirs: nothing
        writes.push(W::Cancel(1, [0; 8]));
        writes.push(W::Book(new(0, 9, 999))); // slot 0 is free again
        writes.push(W::Cancel(1, [0; 8])); // idempotent
                                           // Each is sent at its first poll, in order; all wait together.
        let got: Vec<Got> = rt.block_on(futures_util::future::join_all(
            writes.iter().cloned().map(|w| send(store.handle(), w)),
        ));
        let groups = store.committer.groups();
        assert!(store.committer.started());
        drop(store);
        // The same writes one at a time, each awaited, on a fresh store: the reference.
        let dir2 = dir.join("alone");
        std::fs::create_dir_all(&dir2).unwrap();
        let alone = RedbBookings::new(RedbStore::open_checked(&dir2, false).unwrap());
        let want: Vec<Got> = rt.block_on(async {
            let mut want = Vec::new();
            for w in &writes {
                want.push(send(alone.handle(), w.clone()).await);
            }
            want
        });
        assert_eq!(got, want);
        let created = got
            .iter()
            .filter(|w| matches!(w, Got::Book(Ok(Commit::Created(_)))))
            .count();
        assert_eq!(created, 25, "24 hours, and hour 0 again after the cancel");
        assert!(matches!(&got[200], Got::Book(Ok(Commit::Replayed(b))) if b.id == 1));
        drop(alone);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            groups < (writes.len() / 2) as u64,
            "{groups} commits for {} writes",
            writes.len()
        );
    }
}
