//! Each booking's trail in redb: a table (booking id, sequence) → step, written in the same
//! transaction as the change it records (an older release leaves the table alone).

use redb::{ReadableTable, TableDefinition};
use redmark_core::booking::{latest, Actor, BookingId, Change, Step, StoreError, Trail};

use super::errors::{corrupt, fault};

/// (booking id, its change's sequence number from 0) → [`Step::to_bytes`].
pub(super) const TRAIL: TableDefinition<(u32, u32), &[u8]> = TableDefinition::new("trail");

/// The trail table open in a write transaction.
pub(super) type TrailTable<'t> = redb::Table<'t, (u32, u32), &'static [u8]>;

/// Keeps `change` of booking `id` by `by` after its earlier changes.
pub(super) fn keep(
    table: &mut TrailTable<'_>,
    id: BookingId,
    change: Change,
    by: &Actor,
) -> Result<(), StoreError> {
    let last = table
        .range((id, 0)..=(id, u32::MAX))
        .map_err(fault)?
        .next_back()
        .transpose()
        .map_err(fault)?
        .map(|(k, _)| k.value().1);
    let seq = match last {
        None => 0,
        Some(n) => n.checked_add(1).ok_or(StoreError::Full)?,
    };
    let step = Step { change, by: *by };
    table
        .insert((id, seq), &step.to_bytes()[..])
        .map_err(fault)?;
    Ok(())
}

/// Booking `id`'s latest changes in `db` (none in a store from before trails); a step of a
/// kind this release does not know (written by a newer one) is skipped.
pub(super) fn read(db: &redb::Database, id: BookingId) -> Result<Trail, StoreError> {
    let tx = db.begin_read().map_err(fault)?;
    let table = match tx.open_table(TRAIL) {
        Ok(t) => t,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Trail::new()),
        Err(e) => return Err(fault(e)),
    };
    let mut steps = Vec::new();
    for entry in table.range((id, 0)..=(id, u32::MAX)).map_err(fault)? {
        let (_, v) = entry.map_err(fault)?;
        let bytes = v.value();
        if bytes
            .first()
            .is_some_and(|&c| Change::from_code(c).is_none())
        {
            continue;
        }
        let step = Step::from_bytes(bytes)
            .ok_or_else(|| corrupt(format_args!("a trail step of booking {id}")))?;
        steps.push(step);
    }
    Ok(latest(steps))
}
