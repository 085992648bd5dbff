//! The store's workers: each takes every job waiting into one transaction on its own
//! connection (none for a batch that only reads), commits it durably, then answers every
//! caller; failed batches are retried on a fresh connection.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::try_join_all;
use redmark_core::booking::{
    end_step, Actor, Booking, BookingId, Change, Commit, EndStep, Holder, Minute, NewBooking,
    Resized, Status, Step, StoreError,
};
use redmark_core::seal::Nonce;
use tokio::sync::{mpsc, oneshot, Mutex};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, Row, Statement, Transaction};

use super::op::{Op, Reply};
use super::reads::one;
use super::sql::{decode, minute, Conn, Statements};
use crate::store::changes;

/// A worker stops taking jobs into its transaction once it carries this many calls (a job is
/// never split, so one large group of writes may carry more).
pub const MAX_BATCH: usize = 512;
/// How long a batch (all attempts) may take before its callers get [`StoreError::Io`].
pub const BATCH_TIMEOUT: Duration = Duration::from_secs(5);
/// Tries of a batch (each on a live or fresh connection).
pub const ATTEMPTS: usize = 3;

/// Calls that go into one transaction together, in order (one [`Store`](redmark_core::booking::Store) call, or a whole
/// group of writes), and where their caller waits.
pub(super) struct Job {
    pub(super) ops: Vec<Op>,
    pub(super) reply: oneshot::Sender<Vec<Result<Reply, StoreError>>>,
}

/// A committer: takes every waiting job, runs them in one transaction, answers them.
pub(super) async fn worker(
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
        run_batch(&config, &mut conn, &down, batch).await;
    }
}

/// Runs `batch` (in one transaction unless it only reads; one attempt after another, within
/// [`BATCH_TIMEOUT`]) and answers every caller.
async fn run_batch(config: &Config, conn: &mut Option<Conn>, down: &AtomicBool, batch: Vec<Job>) {
    // Every batch takes its spans' index entries in one order, so two batches (on any
    // instances) mostly wait for each other rather than deadlock (a deadlock between
    // overlapping spans is retried); a stable sort: the bookings of one span keep their
    // arrival order.
    let mut order: Vec<(usize, usize, &Op)> = batch
        .iter()
        .enumerate()
        .flat_map(|(j, job)| job.ops.iter().enumerate().map(move |(i, op)| (j, i, op)))
        .collect();
    order.sort_by(|a, b| lock_order(a.2).cmp(&lock_order(b.2)));
    let ops: Vec<&Op> = order.iter().map(|(_, _, op)| *op).collect();
    let outcome = tokio::time::timeout(BATCH_TIMEOUT, attempts(config, conn, down, &ops))
        .await
        .unwrap_or_else(|_| {
            // Once per outage: a database that stopped answering fails every batch.
            if crate::store::outage::store_down(true) {
                down.store(true, Ordering::Relaxed);
                tracing::error!(
                    "booking store: no answer in {BATCH_TIMEOUT:?}; requests get -32603 \
                     until it answers again"
                );
            }
            *conn = None;
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

/// Where a booking goes (bookings first, by room and start; then everything else).
pub(super) fn lock_order(op: &Op) -> (bool, &str, Minute) {
    match op {
        Op::Commit(n, _) => (false, n.room.as_str(), n.span.start),
        _ => (true, "", 0),
    }
}

/// Runs a batch, reconnecting and retrying it after a failure that left nothing written.
pub(super) async fn attempts(
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
                    let news = !down.swap(true, Ordering::Relaxed);
                    if crate::store::outage::store_down(true) || news {
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
                let news = down.swap(false, Ordering::Relaxed);
                if crate::store::outage::store_down(false) || news {
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

/// A deadlock between two batches, or a booking another transaction committed into a time
/// this batch's statement took for free (the exclusion constraint: `SET_END_SQL`), or a lost
/// connection: the whole batch may run again, and then sees what was committed.
pub(super) fn retryable(e: &tokio_postgres::Error) -> bool {
    matches!(e.code(), Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED
        || *c == SqlState::T_R_SERIALIZATION_FAILURE
        || *c == SqlState::EXCLUSION_VIOLATION)
}

/// Why a batch failed: the database said no or went away; it was rolled back.
type Fault = tokio_postgres::Error;

/// One transaction: the batch's bookings in one statement, then every op still undecided
/// (bookings that inserted nothing, cancels, reads) pipelined in batch order, then one commit;
/// a batch of reads only, pipelined on the connection without one.
pub(super) async fn transact(
    conn: &mut Conn,
    ops: &[&Op],
) -> Result<Vec<Result<Reply, StoreError>>, Fault> {
    if ops.iter().all(|op| super::reads::reads_only(op)) {
        // Reads alone need no transaction (and its two round trips): each is one statement,
        // which sees every batch committed before it began, as it would inside one.
        let (c, s) = (&conn.client, &conn.s);
        return try_join_all(ops.iter().map(|op| super::reads::read(c, s, op))).await;
    }
    let tx = conn.client.transaction().await?;
    let mut replies: Vec<Option<Result<Reply, StoreError>>> = ops.iter().map(|_| None).collect();
    let s = &conn.s;
    insert_many(&tx, &s.insert_many, ops, &mut replies).await?;
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
    for (i, r) in rest {
        replies[i] = Some(r);
    }
    made_trail(&tx, &s.trail_many, ops, &replies).await?;
    super::notify::notify(&tx, &changed(&tx, s, ops, &replies).await?).await?;
    tx.commit().await?;
    Ok(replies
        .into_iter()
        .map(|r| r.unwrap_or(Err(StoreError::Io)))
        .collect())
}

/// What a batch's writes changed (for the other instances, `notify.rs`).
async fn changed(
    tx: &Transaction<'_>,
    s: &Statements,
    ops: &[&Op],
    replies: &[Option<Result<Reply, StoreError>>],
) -> Result<Vec<changes::Change>, Fault> {
    let mut made = Vec::new();
    for (op, reply) in ops.iter().zip(replies) {
        let Some(Ok(reply)) = reply else { continue };
        made.extend(match (op, reply) {
            (Op::Commit(..), Reply::Commit(c)) => changes::of_commit(c),
            (Op::Cancel(..) | Op::CheckIn(..) | Op::Release(..), Reply::Booking(b)) => {
                changes::of_booking(b)
            }
            (Op::SetEnd(_, _, from, _), Reply::Resized(r)) => changes::of_resized(r, *from),
            (Op::Series(base, other, occ, _), Reply::Series(c)) => {
                changes::of_series(base, other, occ, c)
            }
            (Op::CancelSeries(..), Reply::Ids(Some(ids))) => {
                let mut of = Vec::with_capacity(ids.len());
                for id in ids {
                    let rows = tx.query(&s.get, &[&i64::from(*id)]).await?;
                    let b = rows.first().and_then(|r| super::sql::decode_quiet(r, 0));
                    of.extend(b.map(|b| changes::Change::of(&b)));
                }
                of
            }
            _ => vec![],
        });
    }
    Ok(made)
}

/// Inserts the batch's bookings with [`INSERT_MANY_SQL`](super::sql::INSERT_MANY_SQL) and fills in the reply of each that
/// it created; the first of several with one (holder, nonce) is the one created.
pub(super) async fn insert_many(
    tx: &Transaction<'_>,
    stmt: &Statement,
    ops: &[&Op],
    replies: &mut [Option<Result<Reply, StoreError>>],
) -> Result<(), Fault> {
    let books: Vec<(usize, &NewBooking)> = ops
        .iter()
        .enumerate()
        .filter_map(|(i, op)| match op {
            Op::Commit(new, _) => Some((i, new)),
            _ => None,
        })
        .collect();
    if books.is_empty() {
        return Ok(());
    }
    let rooms: Vec<&str> = books.iter().map(|(_, n)| n.room.as_str()).collect();
    let starts: Vec<i32> = books.iter().map(|(_, n)| minute(n.span.start)).collect();
    let ends: Vec<i32> = books.iter().map(|(_, n)| minute(n.span.end)).collect();
    let titles: Vec<&str> = books.iter().map(|(_, n)| n.title.as_str()).collect();
    let people: Vec<i32> = books.iter().map(|(_, n)| i32::from(n.attendees)).collect();
    let holders: Vec<&[u8]> = books.iter().map(|(_, n)| &n.holder[..]).collect();
    let nonces: Vec<&[u8]> = books.iter().map(|(_, n)| &n.nonce[..]).collect();
    let rows = tx
        .query(
            stmt,
            &[&rooms, &starts, &ends, &titles, &people, &holders, &nonces],
        )
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
                checked_in: false,
                series: None,
            }))),
            Err(_) => Err(StoreError::Corrupt),
        });
    }
    Ok(())
}

/// The id and (holder, nonce) of a row [`INSERT_MANY_SQL`](super::sql::INSERT_MANY_SQL) returned.
pub(super) fn inserted(row: &Row) -> Option<(i64, (Holder, Nonce))> {
    let holder: &[u8] = row.try_get(1).ok()?;
    let nonce: &[u8] = row.try_get(2).ok()?;
    Some((
        row.try_get(0).ok()?,
        (holder.try_into().ok()?, nonce.try_into().ok()?),
    ))
}

/// One op inside a transaction. A row that does not decode fails only its own caller.
pub(super) async fn run(
    tx: &Transaction<'_>,
    s: &Statements,
    op: &Op,
) -> Result<Result<Reply, StoreError>, Fault> {
    Ok(match op {
        Op::Commit(new, _) => commit_one(tx, &s.commit, new).await?,
        Op::Cancel(id, by) => cancel(tx, s, *id, by).await?,
        Op::Series(base, other, occ, by) => {
            super::series::commit_series(tx, s, base, other, occ, by)
                .await?
                .map(Reply::Series)
        }
        Op::CancelSeries(series, from, by) => Ok(Reply::Ids(
            super::series::cancel_series(tx, s, *series, *from, by).await?,
        )),
        Op::SetEnd(id, by, from, to) => set_end(tx, s, *id, by, *from, *to).await?,
        Op::CheckIn(id, by) => {
            let step = Step {
                change: Change::CheckedIn,
                by: *by,
            }
            .to_bytes();
            let args: [&(dyn ToSql + Sync); 3] = [&i64::from(*id), &&by.holder[..], &&step[..]];
            one(tx.query(&s.check_in, &args).await?)
        }
        Op::Release(now, window, by) => {
            let step = Step {
                change: Change::Released,
                by: *by,
            }
            .to_bytes();
            let args: [&(dyn ToSql + Sync); 3] = [&minute(*now), &i32::from(*window), &&step[..]];
            one(tx.query(&s.release, &args).await?)
        }
        // Every other op only reads.
        _ => return super::reads::read(tx, s, op).await,
    })
}

/// Moves a booking's end (see [`SET_END_SQL`](super::sql::SET_END_SQL)); when the update
/// changes nothing, reads why: not the holder's, already moved or changed, or the booking in
/// the way (read again while that one is not visible to the statement's snapshot).
async fn set_end(
    tx: &Transaction<'_>,
    s: &Statements,
    id: BookingId,
    by: &Actor,
    from: Minute,
    to: Minute,
) -> Result<Result<Reply, StoreError>, Fault> {
    let holder = &by.holder;
    let step = Step {
        change: Change::end_moved(from, to),
        by: *by,
    };
    let id = i64::from(id);
    for _ in 0..ATTEMPTS {
        let moved = tx
            .query(&s.set_end, &[&id, &&holder[..], &minute(from), &minute(to)])
            .await?;
        if let Some(row) = moved.first() {
            tx.execute(&s.trail, &[&id, &&step.to_bytes()[..]]).await?;
            return Ok(decode(row, 0).map(|b| Reply::Resized(Some(Resized::Moved(b)))));
        }
        let rows = tx.query(&s.get, &[&id]).await?;
        let b = match rows.first().map(|r| decode(r, 0)).transpose() {
            Ok(b) => b.filter(|b| b.new.holder == *holder),
            Err(e) => return Ok(Err(e)),
        };
        let Some(b) = b else {
            return Ok(Ok(Reply::Resized(None)));
        };
        if let EndStep::Answer(done) = end_step(&b, from, to) {
            return Ok(Ok(Reply::Resized(Some(done))));
        }
        let room = b.new.room.as_str();
        let next = tx.query(&s.next_in_room, &[&room, &minute(from)]).await?;
        if let Some(row) = next.first() {
            return Ok(decode(row, 0).map(|o| Reply::Resized(Some(Resized::Taken(o)))));
        }
    }
    tracing::error!("booking store: a booking in the way that stays invisible");
    Ok(Err(StoreError::Io))
}

/// Cancels booking `id` if `by` holds it or is an operator, keeping `by` in its trail when it
/// was active; an already cancelled one is returned as it stands.
async fn cancel(
    tx: &Transaction<'_>,
    s: &Statements,
    id: BookingId,
    by: &Actor,
) -> Result<Result<Reply, StoreError>, Fault> {
    let id = i64::from(id);
    let may = (&id, &&by.holder[..], &by.operator);
    let rows = tx.query(&s.cancel, &[may.0, may.1, may.2]).await?;
    if let Some(row) = rows.first() {
        let step = Step {
            change: Change::Cancelled,
            by: *by,
        };
        tx.execute(&s.trail, &[&id, &&step.to_bytes()[..]]).await?;
        return Ok(decode(row, 0).map(|b| Reply::Booking(Some(b))));
    }
    let rows = tx.query(&s.get, &[&id]).await?;
    Ok(match rows.first().map(|r| decode(r, 0)).transpose() {
        Ok(b) => Ok(Reply::Booking(
            b.filter(|b| by.operator || b.new.holder == by.holder),
        )),
        Err(e) => Err(e),
    })
}

/// Keeps the maker of every booking the batch created in its trail, in one statement.
async fn made_trail(
    tx: &Transaction<'_>,
    stmt: &Statement,
    ops: &[&Op],
    replies: &[Option<Result<Reply, StoreError>>],
) -> Result<(), Fault> {
    let mut ids = Vec::new();
    let mut steps = Vec::new();
    for (op, r) in ops.iter().zip(replies) {
        if let (Op::Commit(_, by), Some(Ok(Reply::Commit(Commit::Created(b))))) = (op, r) {
            ids.push(i64::from(b.id));
            let step = Step {
                change: Change::Made,
                by: *by,
            };
            steps.push(step.to_bytes().to_vec());
        }
    }
    if !ids.is_empty() {
        tx.execute(stmt, &[&ids, &steps]).await?;
    }
    Ok(())
}

/// Books `new` (see [`COMMIT_SQL`](super::sql::COMMIT_SQL)); reads again while a conflict's winner is not visible to
/// the statement's snapshot (it committed after the statement began).
pub(super) async fn commit_one(
    tx: &Transaction<'_>,
    stmt: &Statement,
    new: &NewBooking,
) -> Result<Result<Reply, StoreError>, Fault> {
    let (start, end) = (minute(new.span.start), minute(new.span.end));
    let attendees = i32::from(new.attendees);
    // Bounded: each round is one statement; a span freed between two rounds is retaken.
    for _ in 0..ATTEMPTS {
        let rows = tx
            .query(
                stmt,
                &[
                    &new.room.as_str(),
                    &start,
                    &end,
                    &new.title.as_str(),
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
