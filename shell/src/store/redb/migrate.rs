//! Opening a store an earlier release wrote or touched: every index is rebuilt from the
//! bookings in one write transaction (a crash leaves the old store or the rebuilt one), and
//! an empty `held` table is kept as the tripwire an older release obeys.
//!
//! The release before the index tiers (0cacbc5) reads only the settled tables of each index.
//! Where a file has a `held` table (the hour index of the release before spans) it deletes it
//! and rebuilds `room_starts` and `holder_starts` from the active bookings. So every file this
//! release sets up has an empty `held`: an older release that opens it rebuilds its clash
//! indexes instead of serving stale ones, and deletes `held`, which tells this release at its
//! next start that its young and middle tables may be stale.

use redb::{ReadableTable, ReadableTableMetadata, TableHandle, WriteTransaction};
use redmark_core::booking::Status;

use super::keys::{holder_key, operation_key, room_key};
use super::tables::{
    decode, BOOKINGS, HOLDER_STARTS, INDEXES, META, NONCES, OLD_HELD, ROOM_STARTS,
};
use super::tiers::Index;

/// `meta` key: this file's indexes are in tiers (`tiers.rs`) and its `held` is the tripwire.
pub(super) const INDEX_TIERS: &str = "index-tiers";

/// What an open found and rebuilt.
pub(super) enum Rebuilt {
    /// A store of the release before spans (`held` held its hour index): bookings indexed.
    BeforeSpans(usize),
    /// A file last set up by a release without the index tiers (or a new file): bookings
    /// indexed.
    WithoutTiers(usize),
}

/// Inside `tx`: unless `held` is there and empty and `meta` has [`INDEX_TIERS`] (this
/// release set the file up, and no older release opened it since), deletes every index and
/// `held` and rebuilds them from the bookings: the operations index from every booking
/// (cancelled ones replay too), the room and holder indexes from the active ones, each straight
/// into its settled table; then an empty `held` and [`INDEX_TIERS`]. Records stay as they are
/// (v1 records read as their whole hour). `None`: nothing to rebuild.
pub(super) fn rebuild(tx: &WriteTransaction) -> Result<Option<Rebuilt>, String> {
    let mut names = tx.list_tables().map_err(text)?;
    let held = if names.any(|t| t.name() == OLD_HELD.name()) {
        Some(tx.open_table(OLD_HELD).map_err(text)?.len().map_err(text)?)
    } else {
        None
    };
    let tiers = tx
        .open_table(META)
        .map_err(text)?
        .get(INDEX_TIERS)
        .map_err(text)?
        .is_some();
    if held == Some(0) && tiers {
        return Ok(None);
    }
    // Indexes another release left behind are rebuilt whole, not trusted.
    for index in INDEXES {
        tx.delete_table(index).map_err(text)?;
    }
    tx.delete_table(OLD_HELD).map_err(text)?;
    let (mut nonces, mut rooms, mut holders) = (Vec::new(), Vec::new(), Vec::new());
    for row in tx
        .open_table(BOOKINGS)
        .map_err(text)?
        .iter()
        .map_err(text)?
    {
        let (k, rec) = row.map_err(text)?;
        let b = decode(k.value(), rec.value())
            .map_err(|_| format!("booking {} does not decode", k.value()))?;
        let n = &b.new;
        nonces.push((operation_key(&n.holder, &n.nonce), b.id));
        if b.status == Status::Active {
            let room = room_key(&n.room, n.span.start)
                .ok_or_else(|| format!("booking {}: its room id does not fit a key", b.id))?;
            rooms.push((room, b.id));
        }
        // A released booking stays in its holder's index: its holder reads that it was.
        if b.status != Status::Cancelled {
            holders.push((holder_key(&n.holder, n.span.start, &n.room), b.id));
        }
    }
    let active = rooms.len();
    // In key order; a stable sort keeps equal keys in id order, so where an older release
    // booked an operation again (its first booking cancelled, its nonce in a young table the
    // older release did not read), the newest booking answers it, as that release's did.
    for (def, mut entries) in [
        (NONCES, nonces),
        (ROOM_STARTS, rooms),
        (HOLDER_STARTS, holders),
    ] {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        settled(tx, def, &entries)?;
    }
    for index in INDEXES {
        tx.open_table(index).map_err(text)?;
    }
    tx.open_table(OLD_HELD).map_err(text)?;
    tx.open_table(META)
        .map_err(text)?
        .insert(INDEX_TIERS, &[1][..])
        .map_err(text)?;
    Ok(Some(match held {
        Some(rows) if rows > 0 => Rebuilt::BeforeSpans(active),
        _ => Rebuilt::WithoutTiers(active),
    }))
}

/// A redb error as text.
fn text(e: impl Into<redb::Error>) -> String {
    e.into().to_string()
}

/// Inserts `entries` (in key order) into the settled table `def`.
fn settled(tx: &WriteTransaction, def: Index, entries: &[(Vec<u8>, u32)]) -> Result<(), String> {
    let mut t = tx.open_table(def).map_err(text)?;
    for (k, id) in entries {
        t.insert(&k[..], *id).map_err(text)?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "migrate_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "downgrade_tests.rs"]
mod downgrade_tests;
