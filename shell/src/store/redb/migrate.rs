//! Opening a store written before bookings had spans: its hour index becomes the span indexes
//! in one write transaction, so a crash leaves either the old store or the converted one.

use redb::{ReadableTable, WriteTransaction};
use redmark_core::booking::Status;

use super::tables::{decode, fault, Tables, HOLDER_TIERS, OLD_HELD, ROOM_TIERS};

/// Inside `tx`: where the store still has the hour index (`held`, a store of redmark before
/// spans, or one such a redmark opened since), builds the room and holder indexes
/// ([`ROOM_TIERS`], [`HOLDER_TIERS`], settled whole) afresh from the active bookings and drops
/// `held`. Records stay as they are (v1 records
/// read as their whole hour). Returns how many active bookings were indexed, `None` if there
/// was nothing to convert.
pub(super) fn convert(tx: &WriteTransaction) -> Result<Option<usize>, String> {
    let text = |e: redb::TableError| e.to_string();
    if !tx.delete_table(OLD_HELD).map_err(text)? {
        return Ok(None);
    }
    // Indexes a newer redmark left behind are rebuilt whole, not trusted.
    for index in ROOM_TIERS.0.into_iter().chain(HOLDER_TIERS.0) {
        tx.delete_table(index).map_err(text)?;
    }
    let mut tables = Tables::open(tx).map_err(|e| e.message().to_owned())?;
    let mut active = Vec::new();
    for row in tables
        .bookings()
        .iter()
        .map_err(|e| fault(e).message().to_owned())?
    {
        let (k, rec) = row.map_err(|e| fault(e).message().to_owned())?;
        let b = decode(k.value(), rec.value())
            .map_err(|_| format!("booking {} does not decode", k.value()))?;
        if b.status == Status::Active {
            active.push(b);
        }
    }
    for b in &active {
        tables.index(b).map_err(|e| e.message().to_owned())?;
    }
    tables.settle(true).map_err(|e| e.message().to_owned())?;
    Ok(Some(active.len()))
}

#[cfg(test)]
#[path = "migrate_tests.rs"]
mod tests;
