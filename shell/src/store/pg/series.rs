//! A whole series booked inside a worker's transaction: all its occurrences or none, a clash
//! (also one a racing instance commits meanwhile) answered as taken, never a failed batch; the
//! same operation racing itself (a retry while the first is in flight) answered as replayed.

use std::collections::HashMap;

use redmark_core::booking::{
    occurrence, Actor, BookingId, Change, Minute, NewBooking, Occurrence, SeriesCommit, SeriesIds,
    Step, StoreError,
};
use redmark_core::seal::Nonce;
use tokio_postgres::Transaction;

use super::sql::{minute, Statements};

/// Why a transaction failed: the database said no or went away.
type Fault = tokio_postgres::Error;

/// [`Store::commit_series`](redmark_core::booking::Store::commit_series) in `tx`: the
/// operation's series again if it booked one; else which occurrences an active booking
/// overlaps; else every occurrence inserted (`ON CONFLICT DO NOTHING`: a booking committed
/// after the check makes its occurrence insert nothing, and the others inserted are deleted
/// again, in this transaction, so none is ever seen), marked with the series' id (the first
/// occurrence's), each with its maker in its trail.
pub(super) async fn commit_series(
    tx: &Transaction<'_>,
    s: &Statements,
    base: &NewBooking,
    other: &str,
    occurrences: &[Occurrence],
    by: &Actor,
) -> Result<Result<SeriesCommit, StoreError>, Fault> {
    if let Some(again) = replayed(tx, s, base).await? {
        return Ok(again);
    }
    let mut news = Vec::with_capacity(occurrences.len());
    for (i, o) in occurrences.iter().enumerate() {
        match occurrence(base, other, o, i) {
            Ok(n) => news.push(n),
            Err(e) => return Ok(Err(e)),
        }
    }
    let rooms: Vec<&str> = news.iter().map(|n| n.room.as_str()).collect();
    let starts: Vec<i32> = news.iter().map(|n| minute(n.span.start)).collect();
    let ends: Vec<i32> = news.iter().map(|n| minute(n.span.end)).collect();
    let taken = tx.query(&s.series_clash, &[&rooms, &starts, &ends]).await?;
    if !taken.is_empty() {
        // Taken by the same operation, committed since the first look: its series.
        if let Some(again) = replayed(tx, s, base).await? {
            return Ok(again);
        }
        let mask = taken
            .iter()
            .filter_map(|r| r.try_get::<_, i32>(0).ok())
            .fold(0u64, |m, i| m | 1u64.checked_shl(i as u32).unwrap_or(0));
        return Ok(Ok(SeriesCommit::Taken(mask)));
    }
    let nonces: Vec<&[u8]> = news.iter().map(|n| &n.nonce[..]).collect();
    let attendees = i32::from(base.attendees);
    let rows = tx
        .query(
            &s.series_insert,
            &[
                &rooms,
                &starts,
                &ends,
                &base.title.as_str(),
                &attendees,
                &&base.holder[..],
                &nonces,
            ],
        )
        .await?;
    let mut made: HashMap<Nonce, i64> = HashMap::with_capacity(rows.len());
    for row in &rows {
        let nonce: &[u8] = row.try_get(1)?;
        if let Ok(n) = Nonce::try_from(nonce) {
            made.insert(n, row.try_get(0)?);
        }
    }
    let ids: Vec<Option<i64>> = news.iter().map(|n| made.get(&n.nonce).copied()).collect();
    if ids.iter().any(Option::is_none) {
        // Taken after the check (or the same operation racing itself): none of it stays.
        let inserted: Vec<i64> = ids.iter().flatten().copied().collect();
        tx.execute(&s.series_drop, &[&inserted]).await?;
        // The same operation, committed meanwhile or earlier in this batch: its series.
        if let Some(again) = replayed(tx, s, base).await? {
            return Ok(again);
        }
        let mask = ids
            .iter()
            .enumerate()
            .filter(|(_, id)| id.is_none())
            .fold(0u64, |m, (i, _)| m | 1 << i);
        return Ok(Ok(SeriesCommit::Taken(mask)));
    }
    let ids: Vec<i64> = ids.into_iter().flatten().collect();
    let Some(&series) = ids.first() else {
        return Ok(Ok(SeriesCommit::Created(0, SeriesIds::new())));
    };
    tx.execute(&s.series_mark, &[&series, &ids]).await?;
    let step = Step {
        change: Change::Made,
        by: *by,
    }
    .to_bytes()
    .to_vec();
    let steps: Vec<Vec<u8>> = ids.iter().map(|_| step.clone()).collect();
    tx.execute(&s.trail_many, &[&ids, &steps]).await?;
    let mut out = SeriesIds::new();
    for id in &ids {
        match u32::try_from(*id) {
            Ok(id) => {
                let _ = out.push(id);
            }
            Err(_) => return Ok(Err(StoreError::Full)),
        }
    }
    match u32::try_from(series) {
        Ok(series) => Ok(Ok(SeriesCommit::Created(series, out))),
        Err(_) => Ok(Err(StoreError::Full)),
    }
}

/// [`Store::cancel_series`](redmark_core::booking::Store::cancel_series) in `tx`: one UPDATE
/// of what is left of the series, each cancelled one's `by` in its trail.
pub(super) async fn cancel_series(
    tx: &Transaction<'_>,
    s: &Statements,
    series: BookingId,
    from: Minute,
    by: &Actor,
) -> Result<Option<SeriesIds>, Fault> {
    let (id, holder) = (i64::from(series), &by.holder[..]);
    if tx
        .query(&s.series_may, &[&id, &holder, &by.operator])
        .await?
        .is_empty()
    {
        return Ok(None);
    }
    let rows = tx
        .query(
            &s.series_cancel,
            &[&id, &holder, &by.operator, &minute(from)],
        )
        .await?;
    let mut ids: Vec<i64> = rows.iter().filter_map(|r| r.try_get(0).ok()).collect();
    ids.sort_unstable();
    let step = Step {
        change: Change::Cancelled,
        by: *by,
    }
    .to_bytes()
    .to_vec();
    let steps: Vec<Vec<u8>> = ids.iter().map(|_| step.clone()).collect();
    tx.execute(&s.trail_many, &[&ids, &steps]).await?;
    let mut out = SeriesIds::new();
    for id in ids {
        if let Ok(id) = u32::try_from(id) {
            let _ = out.push(id);
        }
    }
    Ok(Some(out))
}

/// The series the operation of `base` booked, if it booked one (a new statement: it sees what
/// committed since the transaction's earlier ones).
async fn replayed(
    tx: &Transaction<'_>,
    s: &Statements,
    base: &NewBooking,
) -> Result<Option<Result<SeriesCommit, StoreError>>, Fault> {
    let made = tx
        .query(&s.made_by, &[&&base.holder[..], &&base.nonce[..]])
        .await?;
    let Some(row) = made.first() else {
        return Ok(None);
    };
    let first: i64 = row.try_get(0)?;
    let series: Option<i64> = row.try_get(11)?;
    let series = series.unwrap_or(first);
    let rows = tx.query(&s.series_ids, &[&series]).await?;
    let mut ids = SeriesIds::new();
    for r in &rows {
        let Ok(id) = u32::try_from(r.try_get::<_, i64>(0)?) else {
            return Ok(Some(Err(StoreError::Corrupt)));
        };
        let _ = ids.push(id);
    }
    let Ok(series) = u32::try_from(series) else {
        return Ok(Some(Err(StoreError::Corrupt)));
    };
    Ok(Some(Ok(SeriesCommit::Replayed(series, ids))))
}
