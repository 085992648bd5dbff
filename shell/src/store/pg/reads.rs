//! The store's reads: one statement each, inside a batch's transaction or, for a batch of
//! reads only (the [`READERS`](super::READERS)' batches), on the connection itself without one
//! (`worker::transact`).

use redmark_core::booking::{latest, Change, Step, StoreError};
use redmark_core::limits::TRAIL_SHOWN;
use tokio_postgres::{GenericClient, Row};

use super::op::{Op, Reply};
use super::sql::{decode, minute, Statements};

/// The booking in the first of `rows` (a read's, or a write's `RETURNING`), or none.
pub(super) fn one(rows: Vec<Row>) -> Result<Reply, StoreError> {
    match rows.first() {
        Some(r) => decode(r, 0).map(|b| Reply::Booking(Some(b))),
        None => Ok(Reply::Booking(None)),
    }
}

/// Whether `op` only reads: a call of such ops goes to the readers, and needs no transaction.
pub(super) fn reads_only(op: &Op) -> bool {
    matches!(
        op,
        Op::Get(_)
            | Op::NextInSeries(..)
            | Op::MadeBy(..)
            | Op::NextHeld(..)
            | Op::NextInRoom(..)
            | Op::Trail(_)
    )
}

/// The read `op` on `c` (a transaction or a connection); a write is not made here, it fails
/// with [`StoreError::Io`]. A row that does not decode fails only its own caller.
pub(super) async fn read<C: GenericClient + Sync>(
    c: &C,
    s: &Statements,
    op: &Op,
) -> Result<Result<Reply, StoreError>, tokio_postgres::Error> {
    Ok(match op {
        Op::Get(id) => one(c.query(&s.get, &[&i64::from(*id)]).await?),
        Op::NextInSeries(series, after) => one(c
            .query(
                &s.next_in_series,
                &[&i64::from(*series), &i64::from(*after)],
            )
            .await?),
        Op::MadeBy(holder, nonce) => one(c.query(&s.made_by, &[&&holder[..], &&nonce[..]]).await?),
        Op::NextHeld(holder, start, room) => one(c
            .query(
                &s.next_held,
                &[&&holder[..], &minute(*start), &room.as_str()],
            )
            .await?),
        Op::NextInRoom(room, from) => one(c
            .query(&s.next_in_room, &[&room.as_str(), &minute(*from)])
            .await?),
        Op::Trail(id) => {
            let shown = TRAIL_SHOWN as i64;
            let rows = c.query(&s.trail_of, &[&i64::from(*id), &shown]).await?;
            let mut steps = Vec::with_capacity(rows.len());
            // Newest first from the database; a kind this release does not know is skipped.
            for row in rows.iter().rev() {
                let Ok(bytes) = row.try_get::<_, &[u8]>(0) else {
                    return Ok(Err(decode_failed()));
                };
                if bytes
                    .first()
                    .is_some_and(|&c| Change::from_code(c).is_none())
                {
                    continue;
                }
                match Step::from_bytes(bytes) {
                    Some(step) => steps.push(step),
                    None => return Ok(Err(decode_failed())),
                }
            }
            Ok(Reply::Trail(latest(steps)))
        }
        _ => Err(StoreError::Io),
    })
}

/// A trail row that does not decode: the store's data is damaged (said in the log; the
/// caller gets `Corrupt`).
fn decode_failed() -> StoreError {
    tracing::error!("booking store: a trail row does not decode");
    StoreError::Corrupt
}
