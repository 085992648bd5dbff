//! Bookings in PostgreSQL, behind the core's [`Store`] trait, shared by any number of
//! instances (`redmark serve --store postgres://…`).
//!
//! The database decides, not the instance (see [`SCHEMA`]):
//! - at most one booking per (holder, operation nonce): `UNIQUE (holder, nonce)`, so a final
//!   retry replayed on any instance returns the same booking;
//! - at most one active booking per (room, day, hour): a partial unique index over the rows
//!   that are not cancelled;
//! - ids from one sequence (`bigint` identity capped at `u32::MAX`), unique across instances.
//!
//! A batch's bookings are one `INSERT … SELECT FROM unnest(…) ON CONFLICT DO NOTHING
//! RETURNING` ([`INSERT_MANY_SQL`]); each that inserts nothing is then decided on its own by a
//! statement that tries again and reads who holds the nonce (replayed) or the slot (taken)
//! ([`COMMIT_SQL`]). Every read-committed engine that honours unique indexes that way
//! (PostgreSQL does: a conflicting insert waits for the other transaction, then does nothing)
//! gives two instances no way to both win.
//!
//! Speed with durability: every [`Store`] call, and every group of writes from the host's
//! committer, becomes a [`Job`] on one channel; [`WORKERS`] tasks, each with its own
//! connection, take every job waiting (until they carry [`MAX_BATCH`] calls; a job is never
//! split), run them inside ONE transaction (the bookings in one statement, the rest
//! pipelined), commit it with `synchronous_commit = on` (set on the session), and only then
//! answer each caller. So one WAL flush acknowledges a whole batch, and while one worker waits
//! for its flush the next collects the following batch.
//!
//! Faults: a failed batch is rolled back as a whole (nothing half-written) and retried on a
//! fresh connection up to [`ATTEMPTS`] times within [`BATCH_TIMEOUT`]; a retry is safe even
//! when the outcome of a `COMMIT` is unknown, since a booking that did commit is then replayed
//! by its nonce and a cancel is idempotent. Then the callers get [`StoreError::Io`] (the engine
//! answers `-32603`), and the next batch connects again: the instance recovers by itself.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{SharedStore, Write, Written};
use futures_util::future::try_join_all;
use redmark_core::booking::{
    Booking, BookingId, Commit, Day, Holder, NewBooking, RoomId, Slot, Status, Store, StoreError,
};
use redmark_core::seal::Nonce;
use tokio::sync::{mpsc, oneshot, Mutex};
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, Config, NoTls, Row, Statement, Transaction};

/// Connections (and committer tasks) per instance.
pub const WORKERS: usize = 4;
/// A worker stops taking jobs into its transaction once it carries this many calls (a job is
/// never split, so one large group of writes may carry more).
pub const MAX_BATCH: usize = 512;
/// Most jobs waiting for a worker; callers beyond it wait to enqueue.
pub const MAX_QUEUED: usize = 8192;
/// How long a batch (all attempts) may take before its callers get [`StoreError::Io`].
pub const BATCH_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the database lets a session sit idle inside a transaction.
pub const IDLE_IN_TRANSACTION: Duration = Duration::from_secs(10);
/// Tries of a batch (each on a live or fresh connection).
pub const ATTEMPTS: usize = 3;
/// How long connecting may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// The advisory lock that serialises schema set-up between instances starting together.
const SCHEMA_LOCK: i64 = 0x0072_6564_6d61_726b; // "redmark" in ASCII
/// The schema version this build writes and reads.
const SCHEMA_VERSION: i32 = 1;

/// The schema, idempotent (run under [`SCHEMA_LOCK`] at every start).
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS redmark_meta (
    key text PRIMARY KEY,
    value integer NOT NULL
);
CREATE TABLE IF NOT EXISTS redmark_bookings (
    id bigint GENERATED ALWAYS AS IDENTITY (MINVALUE 1 MAXVALUE 4294967295) PRIMARY KEY,
    room text NOT NULL CHECK (octet_length(room) BETWEEN 1 AND 24),
    day date NOT NULL,
    hour smallint NOT NULL CHECK (hour BETWEEN 0 AND 23),
    attendees integer NOT NULL CHECK (attendees BETWEEN 0 AND 65535),
    holder bytea NOT NULL CHECK (octet_length(holder) = 8),
    nonce bytea NOT NULL CHECK (octet_length(nonce) = 8),
    cancelled boolean NOT NULL DEFAULT false,
    UNIQUE (holder, nonce)
);
CREATE UNIQUE INDEX IF NOT EXISTS redmark_bookings_held
    ON redmark_bookings (room, day, hour) WHERE NOT cancelled;
";

/// The columns of a booking, in the order [`decode`] reads them.
const COLS: &str =
    "id, room, to_char(day, 'YYYY-MM-DD'), hour, attendees, holder, nonce, cancelled";

/// Books, or says who already holds the nonce (kind 1) or the slot (kind 2). The outer reads
/// see the statement's snapshot; a conflict with a transaction committed after it returns no
/// row, and [`commit_one`] reads again.
const COMMIT_SQL: &str = "
WITH ins AS (
    INSERT INTO redmark_bookings (room, day, hour, attendees, holder, nonce)
    VALUES ($1, $2::text::date, $3, $4, $5, $6)
    ON CONFLICT DO NOTHING
    RETURNING id, room, to_char(day, 'YYYY-MM-DD'), hour, attendees, holder, nonce, cancelled
)
SELECT 0 AS kind, * FROM ins
UNION ALL
SELECT 1, id, room, to_char(day, 'YYYY-MM-DD'), hour, attendees, holder, nonce, cancelled
    FROM redmark_bookings WHERE holder = $5 AND nonce = $6
UNION ALL
SELECT 2, id, room, to_char(day, 'YYYY-MM-DD'), hour, attendees, holder, nonce, cancelled
    FROM redmark_bookings WHERE room = $1 AND day = $2::text::date AND hour = $3
    AND NOT cancelled
";

/// Books every booking of a batch in one statement, in array order (each row's conflicts are
/// checked against the rows before it, so a later row for a taken slot or a used nonce inserts
/// nothing); returns the rows it inserted. Those that inserted nothing are decided one by one
/// with [`COMMIT_SQL`].
const INSERT_MANY_SQL: &str = "
INSERT INTO redmark_bookings (room, day, hour, attendees, holder, nonce)
SELECT room, day::date, hour, attendees, holder, nonce
    FROM unnest($1::text[], $2::text[], $3::int2[], $4::int4[], $5::bytea[], $6::bytea[])
    AS b(room, day, hour, attendees, holder, nonce)
ON CONFLICT DO NOTHING
RETURNING id, holder, nonce
";

/// Bookings in PostgreSQL: a cheap handle (clone it freely); every method blocks the calling
/// thread until its transaction committed, so call it from a blocking thread, never from
/// async code.
#[derive(Clone)]
pub struct PgStore {
    jobs: mpsc::Sender<Job>,
}

/// One store call for a worker.
enum Op {
    Commit(NewBooking),
    Get(BookingId),
    MadeBy(Holder, Nonce),
    Occupant(RoomId, Slot),
    Cancel(BookingId, Holder),
}

/// What a call returned.
enum Reply {
    Commit(Commit),
    Booking(Option<Booking>),
}

/// Calls that go into one transaction together, in order (one [`Store`] call, or a whole
/// group of writes), and where their caller waits.
struct Job {
    ops: Vec<Op>,
    reply: oneshot::Sender<Vec<Result<Reply, StoreError>>>,
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
        // cut off) has it rolled back, releasing its slots, instead of blocking every other.
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
        let (tx, rx) = mpsc::channel(MAX_QUEUED);
        let rx = Arc::new(Mutex::new(rx));
        let config = Arc::new(config);
        let mut first = Some(client);
        let down = Arc::new(AtomicBool::new(false));
        for _ in 0..WORKERS {
            let (config, rx, down) = (Arc::clone(&config), Arc::clone(&rx), Arc::clone(&down));
            tokio::spawn(worker(config, rx, down, first.take()));
        }
        tracing::info!("bookings: {name}");
        Ok(PgStore { jobs: tx })
    }

    /// Hands `ops` to a worker and waits for their answers (one each, in order).
    fn calls(&self, ops: Vec<Op>) -> Result<Vec<Result<Reply, StoreError>>, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .blocking_send(Job { ops, reply })
            .map_err(|_| StoreError::Io)?;
        answer.blocking_recv().map_err(|_| StoreError::Io)
    }

    /// Hands `op` to a worker and waits for its answer.
    fn call(&self, op: Op) -> Result<Reply, StoreError> {
        self.calls(vec![op])?.pop().unwrap_or(Err(StoreError::Io))
    }

    fn booking(&self, op: Op) -> Result<Option<Booking>, StoreError> {
        match self.call(op)? {
            Reply::Booking(b) => Ok(b),
            Reply::Commit(_) => Err(StoreError::Io),
        }
    }
}

/// A connection whose driver runs on its own task.
async fn connect(config: &Config) -> Result<Client, tokio_postgres::Error> {
    let (client, conn) = config.connect(NoTls).await?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::warn!("booking store connection: {e}");
        }
    });
    Ok(client)
}

/// A worker's connection with its statements prepared once.
struct Conn {
    client: Client,
    insert_many: Statement,
    commit: Statement,
    get: Statement,
    made_by: Statement,
    occupant: Statement,
    cancel: Statement,
}

impl Conn {
    /// Connects (or adopts `client`) and prepares the statements.
    async fn open(config: &Config, client: Option<Client>) -> Result<Conn, tokio_postgres::Error> {
        let client = match client {
            Some(c) => c,
            None => connect(config).await?,
        };
        let by = |cond: &str| format!("SELECT {COLS} FROM redmark_bookings WHERE {cond}");
        Ok(Conn {
            insert_many: client.prepare(INSERT_MANY_SQL).await?,
            commit: client.prepare(COMMIT_SQL).await?,
            get: client.prepare(&by("id = $1")).await?,
            made_by: client.prepare(&by("holder = $1 AND nonce = $2")).await?,
            occupant: client
                .prepare(&by(
                    "room = $1 AND day = $2::text::date AND hour = $3 AND NOT cancelled",
                ))
                .await?,
            cancel: client
                .prepare(&format!(
                    "UPDATE redmark_bookings SET cancelled = true WHERE id = $1 AND holder = $2 \
                     RETURNING {COLS}"
                ))
                .await?,
            client,
        })
    }
}

/// Creates or checks the schema, one instance at a time.
async fn migrate(client: &mut Client) -> Result<(), String> {
    let e = |e: tokio_postgres::Error| e.to_string();
    let tx = client.transaction().await.map_err(e)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
        .await
        .map_err(e)?;
    tx.batch_execute(SCHEMA).await.map_err(e)?;
    tx.execute(
        "INSERT INTO redmark_meta (key, value) VALUES ('schema', $1) ON CONFLICT DO NOTHING",
        &[&SCHEMA_VERSION],
    )
    .await
    .map_err(e)?;
    let v: i32 = tx
        .query_one("SELECT value FROM redmark_meta WHERE key = 'schema'", &[])
        .await
        .map_err(e)?
        .get(0);
    if v > SCHEMA_VERSION {
        return Err(format!(
            "its schema is version {v}, newer than this redmark's {SCHEMA_VERSION}: upgrade redmark"
        ));
    }
    tx.commit().await.map_err(e)
}

/// A committer: takes every waiting job, runs them in one transaction, answers them.
async fn worker(
    config: Arc<Config>,
    jobs: Arc<Mutex<mpsc::Receiver<Job>>>,
    down: Arc<AtomicBool>,
    first: Option<Client>,
) {
    let mut conn = match first {
        Some(c) => Conn::open(&config, Some(c)).await.ok(),
        None => None,
    };
    loop {
        let batch = {
            let mut rx = jobs.lock().await;
            let Some(first) = rx.recv().await else {
                return;
            };
            let mut carried = first.ops.len();
            let mut batch = vec![first];
            // Drained without waiting: what arrived while the previous batch committed. A job
            // is never split: its ops are one transaction, in order.
            while carried < MAX_BATCH {
                match rx.try_recv() {
                    Ok(j) => {
                        carried += j.ops.len();
                        batch.push(j);
                    }
                    Err(_) => break,
                }
            }
            batch
        };
        // Every batch takes its slots' index entries in one order, so two batches (on any
        // instances) wait for each other rather than deadlock (a stable sort: the bookings of
        // one slot keep their arrival order).
        let mut order: Vec<(usize, usize, &Op)> = batch
            .iter()
            .enumerate()
            .flat_map(|(j, job)| job.ops.iter().enumerate().map(move |(i, op)| (j, i, op)))
            .collect();
        order.sort_by(|a, b| lock_order(a.2).cmp(&lock_order(b.2)));
        let ops: Vec<&Op> = order.iter().map(|(_, _, op)| *op).collect();
        let outcome =
            tokio::time::timeout(BATCH_TIMEOUT, attempts(&config, &mut conn, &down, &ops))
                .await
                .unwrap_or_else(|_| {
                    tracing::error!("booking store: no answer in {BATCH_TIMEOUT:?}");
                    conn = None;
                    Err(StoreError::Io)
                });
        match outcome {
            Ok(replies) => {
                let mut answers: Vec<Vec<Option<Result<Reply, StoreError>>>> = batch
                    .iter()
                    .map(|job| job.ops.iter().map(|_| None).collect())
                    .collect();
                for ((j, i, _), r) in order.iter().zip(replies) {
                    answers[*j][*i] = Some(r);
                }
                for (job, a) in batch.into_iter().zip(answers) {
                    let a = a.into_iter().map(|r| r.unwrap_or(Err(StoreError::Io)));
                    let _ = job.reply.send(a.collect());
                }
            }
            Err(e) => {
                for job in batch {
                    let _ = job.reply.send(job.ops.iter().map(|_| Err(e)).collect());
                }
            }
        }
    }
}

/// The slot a booking takes (bookings first, in slot order; then everything else).
fn lock_order(op: &Op) -> (bool, &str, u16, u8, u8, u8) {
    match op {
        Op::Commit(n) => {
            let d = n.slot.day;
            (false, n.room.as_str(), d.year, d.month, d.day, n.slot.hour)
        }
        _ => (true, "", 0, 0, 0, 0),
    }
}

/// Runs a batch, reconnecting and retrying it after a failure that left nothing written.
async fn attempts(
    config: &Config,
    conn: &mut Option<Conn>,
    down: &AtomicBool,
    ops: &[&Op],
) -> Result<Vec<Result<Reply, StoreError>>, StoreError> {
    let mut last = StoreError::Io;
    for _ in 0..ATTEMPTS {
        if conn.as_ref().is_none_or(|c| c.client.is_closed()) {
            match Conn::open(config, None).await {
                Ok(c) => *conn = Some(c),
                Err(e) => {
                    // Said once per outage, not once per request.
                    if !down.swap(true, Ordering::Relaxed) {
                        tracing::error!(
                            "booking store unreachable ({e}): requests get -32603 until it is \
                             back; each new request tries again"
                        );
                    }
                    *conn = None;
                    return Err(StoreError::Io);
                }
            }
        }
        let Some(c) = conn.as_mut() else {
            return Err(StoreError::Io);
        };
        match transact(c, ops).await {
            Ok(r) => {
                if down.swap(false, Ordering::Relaxed) {
                    tracing::info!("booking store reachable again");
                }
                return Ok(r);
            }
            Err(e) => {
                tracing::warn!("booking store: batch of {} rolled back: {e}", ops.len());
                last = match e.code() {
                    Some(c) if *c == SqlState::SEQUENCE_GENERATOR_LIMIT_EXCEEDED => {
                        return Err(StoreError::Full)
                    }
                    _ => StoreError::Io,
                };
                if !c.client.is_closed() && !retryable(&e) {
                    return Err(last);
                }
            }
        }
    }
    Err(last)
}

/// A deadlock between two batches or a lost connection: the whole batch may run again.
fn retryable(e: &tokio_postgres::Error) -> bool {
    matches!(e.code(), Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED
        || *c == SqlState::T_R_SERIALIZATION_FAILURE)
}

/// Why a batch failed: the database said no or went away; it was rolled back.
type Fault = tokio_postgres::Error;

/// One transaction: the batch's bookings in one statement, then every op still undecided
/// (bookings that inserted nothing, cancels, reads) pipelined in batch order, then one commit.
async fn transact(conn: &mut Conn, ops: &[&Op]) -> Result<Vec<Result<Reply, StoreError>>, Fault> {
    let tx = conn.client.transaction().await?;
    let mut replies: Vec<Option<Result<Reply, StoreError>>> = ops.iter().map(|_| None).collect();
    insert_many(&tx, &conn.insert_many, ops, &mut replies).await?;
    let s = Prepared {
        commit: &conn.commit,
        get: &conn.get,
        made_by: &conn.made_by,
        occupant: &conn.occupant,
        cancel: &conn.cancel,
    };
    let rest = try_join_all(
        ops.iter()
            .zip(&replies)
            .enumerate()
            .filter(|(_, (_, r))| r.is_none())
            .map(|(i, (op, _))| {
                let s = &s;
                let tx = &tx;
                async move { run(tx, s, op).await.map(|r| (i, r)) }
            }),
    )
    .await?;
    tx.commit().await?;
    for (i, r) in rest {
        replies[i] = Some(r);
    }
    Ok(replies
        .into_iter()
        .map(|r| r.unwrap_or(Err(StoreError::Io)))
        .collect())
}

/// Inserts the batch's bookings with [`INSERT_MANY_SQL`] and fills in the reply of each that
/// it created; the first of several with one (holder, nonce) is the one created.
async fn insert_many(
    tx: &Transaction<'_>,
    stmt: &Statement,
    ops: &[&Op],
    replies: &mut [Option<Result<Reply, StoreError>>],
) -> Result<(), Fault> {
    let books: Vec<(usize, &NewBooking)> = ops
        .iter()
        .enumerate()
        .filter_map(|(i, op)| match op {
            Op::Commit(new) => Some((i, new)),
            _ => None,
        })
        .collect();
    if books.is_empty() {
        return Ok(());
    }
    let rooms: Vec<&str> = books.iter().map(|(_, n)| n.room.as_str()).collect();
    let days: Vec<String> = books.iter().map(|(_, n)| n.slot.day.to_string()).collect();
    let hours: Vec<i16> = books.iter().map(|(_, n)| i16::from(n.slot.hour)).collect();
    let people: Vec<i32> = books.iter().map(|(_, n)| i32::from(n.attendees)).collect();
    let holders: Vec<&[u8]> = books.iter().map(|(_, n)| &n.holder[..]).collect();
    let nonces: Vec<&[u8]> = books.iter().map(|(_, n)| &n.nonce[..]).collect();
    let rows = tx
        .query(stmt, &[&rooms, &days, &hours, &people, &holders, &nonces])
        .await?;
    let mut made: HashMap<(Holder, Nonce), i64> = HashMap::with_capacity(rows.len());
    for row in &rows {
        let Some((id, key)) = inserted(row) else {
            tracing::error!("booking store: a row does not decode");
            continue;
        };
        made.insert(key, id);
    }
    for (i, new) in books {
        let Some(id) = made.remove(&(new.holder, new.nonce)) else {
            continue; // replayed, taken, or racing: decided by `commit_one`
        };
        replies[i] = Some(match u32::try_from(id) {
            Ok(id) => Ok(Reply::Commit(Commit::Created(Booking {
                id,
                new: new.clone(),
                status: Status::Active,
            }))),
            Err(_) => Err(StoreError::Corrupt),
        });
    }
    Ok(())
}

/// The id and (holder, nonce) of a row [`INSERT_MANY_SQL`] returned.
fn inserted(row: &Row) -> Option<(i64, (Holder, Nonce))> {
    let holder: &[u8] = row.try_get(1).ok()?;
    let nonce: &[u8] = row.try_get(2).ok()?;
    Some((
        row.try_get(0).ok()?,
        (holder.try_into().ok()?, nonce.try_into().ok()?),
    ))
}

/// A connection's statements, borrowed beside its open transaction.
struct Prepared<'a> {
    commit: &'a Statement,
    get: &'a Statement,
    made_by: &'a Statement,
    occupant: &'a Statement,
    cancel: &'a Statement,
}

/// One op inside a transaction. A row that does not decode fails only its own caller.
async fn run(
    tx: &Transaction<'_>,
    s: &Prepared<'_>,
    op: &Op,
) -> Result<Result<Reply, StoreError>, Fault> {
    let one = |rows: Vec<Row>| match rows.first() {
        Some(r) => decode(r, 0).map(|b| Reply::Booking(Some(b))),
        None => Ok(Reply::Booking(None)),
    };
    Ok(match op {
        Op::Commit(new) => commit_one(tx, s.commit, new).await?,
        Op::Get(id) => one(tx.query(s.get, &[&i64::from(*id)]).await?),
        Op::MadeBy(holder, nonce) => one(tx.query(s.made_by, &[&&holder[..], &&nonce[..]]).await?),
        Op::Occupant(room, slot) => one(tx
            .query(
                s.occupant,
                &[&room.as_str(), &slot.day.to_string(), &i16::from(slot.hour)],
            )
            .await?),
        Op::Cancel(id, holder) => one(tx.query(s.cancel, &[&i64::from(*id), &&holder[..]]).await?),
    })
}

/// Books `new` (see [`COMMIT_SQL`]); reads again while a conflict's winner is not visible to
/// the statement's snapshot (it committed after the statement began).
async fn commit_one(
    tx: &Transaction<'_>,
    stmt: &Statement,
    new: &NewBooking,
) -> Result<Result<Reply, StoreError>, Fault> {
    let day = new.slot.day.to_string();
    let hour = i16::from(new.slot.hour);
    let attendees = i32::from(new.attendees);
    // Bounded: each round is one statement; a slot freed between two rounds is retaken.
    for _ in 0..ATTEMPTS {
        let rows = tx
            .query(
                stmt,
                &[
                    &new.room.as_str(),
                    &day,
                    &hour,
                    &attendees,
                    &&new.holder[..],
                    &&new.nonce[..],
                ],
            )
            .await?;
        if let Some(kind) = rows.iter().map(|r| r.get::<_, i32>(0)).min() {
            let Some(row) = rows.iter().find(|r| r.get::<_, i32>(0) == kind) else {
                continue;
            };
            return Ok(decode(row, 1).map(|b| {
                Reply::Commit(match kind {
                    0 => Commit::Created(b),
                    1 => Commit::Replayed(b),
                    _ => Commit::Taken(b),
                })
            }));
        }
    }
    tracing::error!("booking store: a conflict whose winner stays invisible");
    Ok(Err(StoreError::Io))
}

/// The booking in `row` from column `at` on ([`COLS`]); `Corrupt` if it does not decode.
fn decode(row: &Row, at: usize) -> Result<Booking, StoreError> {
    decode_quiet(row, at).ok_or_else(|| {
        tracing::error!("booking store: a row does not decode");
        StoreError::Corrupt
    })
}

fn decode_quiet(row: &Row, at: usize) -> Option<Booking> {
    let id: i64 = row.try_get(at).ok()?;
    let room: &str = row.try_get(at + 1).ok()?;
    let day: &str = row.try_get(at + 2).ok()?;
    let hour: i16 = row.try_get(at + 3).ok()?;
    let attendees: i32 = row.try_get(at + 4).ok()?;
    let holder: &[u8] = row.try_get(at + 5).ok()?;
    let nonce: &[u8] = row.try_get(at + 6).ok()?;
    let cancelled: bool = row.try_get(at + 7).ok()?;
    Some(Booking {
        id: u32::try_from(id).ok()?,
        new: NewBooking {
            room: RoomId::try_from(room).ok()?,
            slot: Slot {
                day: Day::parse(day)?,
                hour: u8::try_from(hour).ok().filter(|h| *h < 24)?,
            },
            attendees: u16::try_from(attendees).ok()?,
            holder: holder.try_into().ok()?,
            nonce: nonce.try_into().ok()?,
        },
        status: if cancelled {
            Status::Cancelled
        } else {
            Status::Active
        },
    })
}

impl Store for PgStore {
    fn commit(&mut self, new: &NewBooking) -> Result<Commit, StoreError> {
        match self.call(Op::Commit(new.clone()))? {
            Reply::Commit(c) => Ok(c),
            Reply::Booking(_) => Err(StoreError::Io),
        }
    }

    fn get(&self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        self.booking(Op::Get(id))
    }

    fn made_by(&self, holder: &Holder, nonce: &Nonce) -> Result<Option<Booking>, StoreError> {
        self.booking(Op::MadeBy(*holder, *nonce))
    }

    fn occupant(&self, room: &str, slot: Slot) -> Result<Option<Booking>, StoreError> {
        // A room id too long to store holds nothing.
        let Ok(room) = RoomId::try_from(room) else {
            return Ok(None);
        };
        self.booking(Op::Occupant(room, slot))
    }

    fn cancel(&mut self, id: BookingId, holder: &Holder) -> Result<Option<Booking>, StoreError> {
        self.booking(Op::Cancel(id, *holder))
    }
}

/// Every connection's writes reach the database through the host's group committer, which
/// hands each group here: its writes are queued together, so the workers put them into as few
/// transactions as they can (a batch keeps the arrival order of writes to one slot), and the
/// database decides each one.
impl SharedStore for PgStore {
    fn get(&self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        Store::get(self, id)
    }

    fn made_by(&self, holder: &Holder, nonce: &Nonce) -> Result<Option<Booking>, StoreError> {
        Store::made_by(self, holder, nonce)
    }

    fn occupant(&self, room: &str, slot: Slot) -> Result<Option<Booking>, StoreError> {
        Store::occupant(self, room, slot)
    }

    fn write_group(&self, writes: &[Write]) -> Vec<Written> {
        // One job: the group is one transaction, its writes in order.
        let ops = writes
            .iter()
            .map(|w| match w {
                Write::Book(new) => Op::Commit(new.clone()),
                Write::Cancel(id, h) => Op::Cancel(*id, *h),
            })
            .collect();
        let got = match self.calls(ops) {
            Ok(got) => got,
            Err(e) => writes.iter().map(|_| Err(e)).collect(),
        };
        writes
            .iter()
            .zip(got)
            .map(|(w, got)| match (w, got) {
                (Write::Book(_), Ok(Reply::Commit(c))) => Written::Book(Ok(c)),
                (Write::Cancel(..), Ok(Reply::Booking(b))) => Written::Cancel(Ok(b)),
                (Write::Book(_), Ok(_)) => Written::Book(Err(StoreError::Io)),
                (Write::Cancel(..), Ok(_)) => Written::Cancel(Err(StoreError::Io)),
                (Write::Book(_), Err(e)) => Written::Book(Err(e)),
                (Write::Cancel(..), Err(e)) => Written::Cancel(Err(e)),
            })
            .collect()
    }

    fn reads_block(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests;
