//! Bookings in PostgreSQL, the core's [`Store`] shared by any number of instances
//! (`redmark serve --store postgres://…`).
//!
//! The database decides, not the instance (see `sql::SCHEMA`):
//! - at most one booking per (holder, operation nonce): `UNIQUE (holder, nonce)`, so a final
//!   retry replayed on any instance returns the same booking;
//! - no two active bookings of a room overlap: an exclusion constraint over each row's span
//!   (`int4range` of UTC minutes) per room, on the rows that are not cancelled (it needs the
//!   `btree_gist` extension, created at the first start of this version: `sql::migrate`);
//! - ids from one sequence (`bigint` identity capped at `u32::MAX`), unique across instances.
//!
//! A batch's bookings are one `INSERT … SELECT FROM unnest(…) ON CONFLICT DO NOTHING
//! RETURNING` (`sql::INSERT_MANY_SQL`); each that inserts nothing is then decided on its own by a
//! statement that tries again and reads who holds the nonce (replayed) or the earliest booking overlapping the span (taken)
//! (`sql::COMMIT_SQL`). Every read-committed engine that honours unique and exclusion constraints that way
//! (PostgreSQL does: a conflicting insert waits for the other transaction, then does nothing)
//! gives two instances no way to both win.
//!
//! Speed with durability: every [`Store`] call becomes a `Job` on one channel; [`WORKERS`] tasks, each with its own
//! connection, take every job waiting (until they carry `worker::MAX_BATCH` calls; a job is never
//! split), run them inside ONE transaction (the bookings in one statement, the rest
//! pipelined), commit it with `synchronous_commit = on` (set on the session), and only then
//! answer each caller. So one WAL flush acknowledges a whole batch, and while one worker waits
//! for its flush the next collects the following batch. Calls that only read go to
//! [`READERS`] tasks of their own, which run each batch without a transaction (one statement
//! a read, pipelined), so a read never waits for a commit.
//!
//! Faults: a failed batch is rolled back as a whole (nothing half-written) and retried on a
//! fresh connection up to `worker::ATTEMPTS` times within `BATCH_TIMEOUT`; a retry is safe even
//! when the outcome of a `COMMIT` is unknown, since a booking that did commit is then replayed
//! by its nonce and a cancel is idempotent. Then the callers get [`StoreError::Io`] (the engine
//! answers `-32603`), and the next batch connects again: the instance recovers by itself.
mod notify;
mod op;
mod reads;
mod series;
mod sql;
mod worker;

use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use redmark_core::booking::{
    Actor, Booking, BookingId, Commit, Holder, Minute, NewBooking, Occurrence, Resized, RoomId,
    SeriesCommit, SeriesIds, Store, StoreError, Trail,
};
use redmark_core::seal::Nonce;
use tokio::sync::{mpsc, oneshot, Mutex};
use tokio_postgres::Config;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::changes::Changes;
use super::{Admin, Bookings, Fence, PROBE_ID};
use crate::metrics::metrics;
use op::{Op, Reply};
use sql::{connect, migrate};
use worker::BATCH_TIMEOUT;
use worker::{worker, Job};

/// Connections (and committer tasks) per instance.
pub const WORKERS: usize = 4;
/// Connections (and tasks) per instance that run reads alone, so a read never waits behind a
/// batch's commit.
pub const READERS: usize = 2;
/// Most jobs waiting for a worker; callers beyond it wait to enqueue.
pub const MAX_QUEUED: usize = 8192;
/// How long the database lets a session sit idle inside a transaction.
pub const IDLE_IN_TRANSACTION: Duration = Duration::from_secs(10);
/// How long connecting may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// One engine's handle on bookings in PostgreSQL ([`PgStore::open`], then
/// [`handle`](Bookings::handle) per engine): every operation is a job for the workers, awaited
/// without blocking a thread.
pub struct PgStore {
    jobs: mpsc::Sender<Job>,
    /// Jobs that only read, for the [`READERS`].
    reads: mpsc::Sender<Job>,
    fence: Fence,
    /// Every instance's changes (`notify.rs`), heard while any handle is open.
    changes: Arc<Changes>,
    _listening: Arc<DropGuard>,
}

/// Where a store lives, for messages: never its password.
pub fn describe(url: &str) -> String {
    match Config::from_str(url) {
        Ok(c) => describe_config(&c),
        Err(_) => "an unparsable PostgreSQL URL".into(),
    }
}

fn describe_config(c: &Config) -> String {
    let host = match c.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = c.get_ports().first().copied().unwrap_or(5432);
    let user = c.get_user().unwrap_or("(default user)");
    let db = c.get_dbname().unwrap_or(user);
    format!("postgres://{user}@{host}:{port}/{db}")
}

/// Whether `s` names a PostgreSQL store.
pub fn is_url(s: &str) -> bool {
    s.starts_with("postgres://") || s.starts_with("postgresql://")
}

impl PgStore {
    /// Connects, creates or checks the schema, and starts the workers (on the current tokio
    /// runtime). Errors name the database without its password.
    pub async fn open(url: &str) -> Result<PgStore, String> {
        let mut config =
            Config::from_str(url).map_err(|e| format!("--store: not a PostgreSQL URL ({e})"))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("redmark");
        // An acknowledgement means the commit is flushed, whatever the server's default. No
        // statement outlives a batch, and an instance frozen inside a transaction (stopped,
        // cut off) has it rolled back, releasing its spans, instead of blocking every other.
        config.options(format!(
            "-c synchronous_commit=on -c default_transaction_isolation=read\\ committed \
             -c statement_timeout={} -c idle_in_transaction_session_timeout={}",
            BATCH_TIMEOUT.as_millis(),
            IDLE_IN_TRANSACTION.as_millis()
        ));
        let name = describe_config(&config);
        let mut client = connect(&config)
            .await
            .map_err(|e| format!("cannot reach the booking store {name}: {e}"))?;
        migrate(&mut client)
            .await
            .map_err(|e| format!("cannot set up the booking store {name}: {e}"))?;
        let config = Arc::new(config);
        let mut first = Some(client);
        let down = Arc::new(AtomicBool::new(false));
        let mut queue = |workers: usize| {
            let (tx, rx) = mpsc::channel(MAX_QUEUED);
            let rx = Arc::new(Mutex::new(rx));
            for _ in 0..workers {
                let (config, rx, down) = (Arc::clone(&config), Arc::clone(&rx), Arc::clone(&down));
                tokio::spawn(worker(config, rx, down, first.take()));
            }
            tx
        };
        let (tx, reads) = (queue(WORKERS), queue(READERS));
        let (changes, stop) = (Changes::new(), CancellationToken::new());
        notify::listen(Arc::clone(&config), Arc::clone(&changes), stop.clone()).await;
        tracing::info!("bookings: {name}");
        Ok(PgStore {
            jobs: tx,
            reads,
            fence: Fence::default(),
            changes,
            _listening: Arc::new(stop.drop_guard()),
        })
    }

    /// Hands `op` to a worker and waits for its answer, after the connection's earlier
    /// writes (the workers commit in parallel, so a write of this message could overtake them).
    async fn call(&self, op: Op) -> Result<Reply, StoreError> {
        self.fence.wait_for_earlier().await;
        let mut got = self.calls(vec![op]).await?;
        got.pop().unwrap_or(Err(StoreError::Io))
    }

    /// Hands `ops` to a worker as one job (one transaction, in order) and waits for their
    /// answers, one each.
    async fn calls(&self, ops: Vec<Op>) -> Result<Vec<Result<Reply, StoreError>>, StoreError> {
        let (reply, answer) = oneshot::channel();
        let queue = if ops.iter().all(reads::reads_only) {
            &self.reads
        } else {
            &self.jobs
        };
        queue
            .send(Job { ops, reply })
            .await
            .map_err(|_| StoreError::Io)?;
        answer.await.map_err(|_| StoreError::Io)
    }

    /// A read: the booking it found, counted in the store's read latency.
    async fn booking(&self, op: Op) -> Result<Option<Booking>, StoreError> {
        // The wait for earlier writes is not the store's latency (`call` then waits no more).
        self.fence.wait_for_earlier().await;
        let began = Instant::now();
        let got = self.call(op).await;
        // OPS (crate::metrics): store latency.
        metrics().store_read(began.elapsed());
        match got? {
            Reply::Booking(b) => Ok(b),
            _ => Err(StoreError::Io),
        }
    }
}

impl Store for PgStore {
    async fn commit_by(&mut self, new: &NewBooking, by: &Actor) -> Result<Commit, StoreError> {
        let made = match self.call(Op::Commit(new.clone(), *by)).await {
            Ok(Reply::Commit(c)) => Ok(c),
            Ok(_) => Err(StoreError::Io),
            Err(e) => Err(e),
        };
        metrics().committed(&made);
        made
    }

    async fn cancel(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        let made = match self.call(Op::Cancel(id, *by)).await {
            Ok(Reply::Booking(b)) => Ok(b),
            Ok(_) => Err(StoreError::Io),
            Err(e) => Err(e),
        };
        metrics().cancelled(&made);
        made
    }

    async fn get(&mut self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        self.booking(Op::Get(id)).await
    }

    async fn trail(&mut self, id: BookingId) -> Result<Trail, StoreError> {
        match self.call(Op::Trail(id)).await? {
            Reply::Trail(t) => Ok(t),
            _ => Err(StoreError::Io),
        }
    }

    async fn made_by(
        &mut self,
        holder: &Holder,
        nonce: &Nonce,
    ) -> Result<Option<Booking>, StoreError> {
        self.booking(Op::MadeBy(*holder, *nonce)).await
    }

    async fn next_held(
        &mut self,
        holder: &Holder,
        start: Minute,
        room: &str,
    ) -> Result<Option<Booking>, StoreError> {
        // The room comes from a stored booking (or is empty), so it fits.
        let room = RoomId::try_from(room).map_err(|_| StoreError::Io)?;
        self.booking(Op::NextHeld(*holder, start, room)).await
    }

    async fn next_in_room(
        &mut self,
        room: &str,
        from: Minute,
    ) -> Result<Option<Booking>, StoreError> {
        // A room id too long to store holds nothing.
        let Ok(room) = RoomId::try_from(room) else {
            return Ok(None);
        };
        self.booking(Op::NextInRoom(room, from)).await
    }

    async fn set_end(
        &mut self,
        id: BookingId,
        by: &Actor,
        from: Minute,
        to: Minute,
    ) -> Result<Option<Resized>, StoreError> {
        match self.call(Op::SetEnd(id, *by, from, to)).await {
            Ok(Reply::Resized(r)) => Ok(r),
            Ok(_) => Err(StoreError::Io),
            Err(e) => Err(e),
        }
    }

    async fn check_in(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        self.booking(Op::CheckIn(id, *by)).await
    }

    async fn release_due(
        &mut self,
        now: Minute,
        window: u16,
        by: &Actor,
    ) -> Result<Option<Booking>, StoreError> {
        self.booking(Op::Release(now, window, *by)).await
    }

    async fn commit_series(
        &mut self,
        base: &NewBooking,
        other: &str,
        occurrences: &[Occurrence],
        by: &Actor,
    ) -> Result<SeriesCommit, StoreError> {
        let room = RoomId::try_from(other).map_err(|_| StoreError::Io)?;
        let op = Op::Series(base.clone(), room, occurrences.to_vec(), *by);
        match self.call(op).await? {
            Reply::Series(c) => Ok(c),
            _ => Err(StoreError::Io),
        }
    }

    async fn cancel_series(
        &mut self,
        series: BookingId,
        from: Minute,
        by: &Actor,
    ) -> Result<Option<SeriesIds>, StoreError> {
        match self.call(Op::CancelSeries(series, from, *by)).await? {
            Reply::Ids(ids) => Ok(ids),
            _ => Err(StoreError::Io),
        }
    }

    async fn next_in_series(
        &mut self,
        series: BookingId,
        after: BookingId,
    ) -> Result<Option<Booking>, StoreError> {
        self.booking(Op::NextInSeries(series, after)).await
    }
}

impl Bookings for PgStore {
    fn handle(&self) -> Self {
        PgStore {
            jobs: self.jobs.clone(),
            reads: self.reads.clone(),
            fence: Fence::default(),
            changes: Arc::clone(&self.changes),
            _listening: Arc::clone(&self._listening),
        }
    }

    fn fence(&self) -> &Fence {
        &self.fence
    }

    fn changes(&self) -> Option<Arc<Changes>> {
        Some(Arc::clone(&self.changes))
    }
}

impl Admin for PgStore {
    fn probe(&self) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + '_>> {
        // The operator's own handle: never fenced, so this asks at once.
        Box::pin(async move { self.booking(Op::Get(PROBE_ID)).await.map(drop) })
    }
}

#[cfg(test)]
mod migrate_tests;
#[cfg(test)]
mod race_tests;
#[cfg(test)]
mod tests;
