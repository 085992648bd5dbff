//! An index kept in three tables, a small log-structured merge: new entries go to a `young`
//! table, whose pages a group commit's inserts share; it is moved into a `middle` one in bulk
//! every [`YOUNG_HOLDS`] entries, and that into the large `settled` one once it holds
//! 1/[`SETTLE_SHARE`] of the store.
//!
//! redb copies every page a commit changes. Scattered inserts into an index of years of
//! bookings each copied a page of their own (and the branch pages above it), so a booking's
//! commit cost grew with the store (docs/benchmarks.md, "Clash-check cost"). Moved in key
//! order, inside a group's transaction, each page of the larger table is copied once for many
//! entries. A key is in one of the tables, never two; a read looks in all three.

use std::ops::Bound;

use redb::{ReadableTable, TableDefinition};
use redmark_core::booking::StoreError;

use super::errors::fault;

/// One index table: a byte key → booking id.
pub(super) type Index = TableDefinition<'static, &'static [u8], u32>;

/// Entries the young table takes before they are moved into the middle one.
pub(super) const YOUNG_HOLDS: u64 = 2048;
/// Fewest entries the middle table holds before they are moved into the settled one.
pub(super) const MIDDLE_HOLDS_AT_LEAST: u64 = 16_384;
/// The middle table is settled once it holds this fraction (1/N) of the bookings ever made:
/// the pages a settling copies (at most every page of the settled table) stay in proportion
/// to the entries it moves, whatever the store holds.
pub(super) const SETTLE_SHARE: u64 = 16;

/// An index's table definitions: young, middle, settled.
#[derive(Clone, Copy)]
pub(super) struct Tiers(pub [Index; 3]);

impl Tiers {
    /// Every table as `open` opens it (in a read or write transaction).
    pub(super) fn open<T>(
        self,
        mut open: impl FnMut(Index) -> Result<T, redb::TableError>,
    ) -> Result<Levels<T>, StoreError> {
        let [young, middle, settled] = self.0;
        Ok(Levels([
            open(young).map_err(fault)?,
            open(middle).map_err(fault)?,
            open(settled).map_err(fault)?,
        ]))
    }
}

/// The opened tables of one index, youngest first.
pub(super) struct Levels<T>([T; 3]);

/// One entry: key and booking id.
type Entry = (Vec<u8>, u32);

impl<T: ReadableTable<&'static [u8], u32>> Levels<T> {
    /// The id under `key`.
    pub(super) fn get(&self, key: &[u8]) -> Result<Option<u32>, StoreError> {
        for t in &self.0 {
            if let Some(id) = t.get(key).map_err(fault)? {
                return Ok(Some(id.value()));
            }
        }
        Ok(None)
    }

    /// The entry with the highest key in `range` (of any table).
    pub(super) fn last_in(
        &self,
        range: (Bound<&[u8]>, Bound<&[u8]>),
    ) -> Result<Option<Entry>, StoreError> {
        let mut best: Option<Entry> = None;
        for t in &self.0 {
            let last = t.range::<&[u8]>(range).map_err(fault)?.next_back();
            if let Some((k, id)) = last.transpose().map_err(fault)? {
                if best.as_ref().is_none_or(|(b, _)| k.value() > &b[..]) {
                    best = Some((k.value().to_vec(), id.value()));
                }
            }
        }
        Ok(best)
    }

    /// The ids of every entry in `range`, table by table (not in key order).
    pub(super) fn ids_in(
        &self,
        range: (Bound<&[u8]>, Bound<&[u8]>),
    ) -> Result<Vec<u32>, StoreError> {
        let mut ids = Vec::new();
        for t in &self.0 {
            for row in t.range::<&[u8]>(range).map_err(fault)? {
                ids.push(row.map_err(fault)?.1.value());
            }
        }
        Ok(ids)
    }

    /// The entry with the lowest key in `range` (of any table).
    pub(super) fn first_in(
        &self,
        range: (Bound<&[u8]>, Bound<&[u8]>),
    ) -> Result<Option<Entry>, StoreError> {
        let mut best: Option<Entry> = None;
        for t in &self.0 {
            let first = t.range::<&[u8]>(range).map_err(fault)?.next();
            if let Some((k, id)) = first.transpose().map_err(fault)? {
                if best.as_ref().is_none_or(|(b, _)| k.value() < &b[..]) {
                    best = Some((k.value().to_vec(), id.value()));
                }
            }
        }
        Ok(best)
    }
}

/// Which of an index's moves a group's transaction makes ([`Levels::due`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Due {
    /// The young entries into the middle table.
    young: bool,
    /// The middle entries (with the young ones moved) into the settled table.
    middle: bool,
}

impl<T: ReadableTable<&'static [u8], u32>> Levels<T> {
    /// What is due: the young entries move on once there are [`YOUNG_HOLDS`], the middle ones
    /// once there are at least [`MIDDLE_HOLDS_AT_LEAST`] and 1/[`SETTLE_SHARE`] of the `made`
    /// bookings ever made.
    pub(super) fn due(&self, made: u32) -> Result<Due, StoreError> {
        let young = self.0[0].len().map_err(fault)?;
        let young_due = young >= YOUNG_HOLDS;
        let middle = self.0[1].len().map_err(fault)? + if young_due { young } else { 0 };
        Ok(Due {
            young: young_due,
            middle: middle >= MIDDLE_HOLDS_AT_LEAST.max(u64::from(made) / SETTLE_SHARE),
        })
    }
}

impl Levels<redb::Table<'_, &'static [u8], u32>> {
    /// Enters `key` → `id` (in the young table).
    pub(super) fn insert(&mut self, key: &[u8], id: u32) -> Result<(), StoreError> {
        self.0[0].insert(key, id).map_err(fault)?;
        Ok(())
    }

    /// Removes `key` from whichever table holds it.
    pub(super) fn remove(&mut self, key: &[u8]) -> Result<(), StoreError> {
        for t in &mut self.0 {
            if t.remove(key).map_err(fault)?.is_some() {
                break;
            }
        }
        Ok(())
    }
}

impl Tiers {
    /// In `tx`, with none of this index's tables open: makes the moves `due` says. Whether the
    /// middle table was moved.
    pub(super) fn settle(self, tx: &redb::WriteTransaction, due: Due) -> Result<bool, StoreError> {
        let [young, middle, settled] = self.0;
        if due.young {
            move_all(tx, young, middle)?;
        }
        if due.middle {
            move_all(tx, middle, settled)?;
        }
        Ok(due.middle)
    }
}

/// Moves every entry of `from` into `into`, in key order (each page of `into` is copied once,
/// however many entries it takes), then drops `from` whole and makes it again, empty: removing
/// its entries one by one copied a path of pages for each.
fn move_all(tx: &redb::WriteTransaction, from: Index, into: Index) -> Result<(), StoreError> {
    {
        let source = tx.open_table(from).map_err(fault)?;
        let mut target = tx.open_table(into).map_err(fault)?;
        for row in source.iter().map_err(fault)? {
            let (k, id) = row.map_err(fault)?;
            target.insert(k.value(), id.value()).map_err(fault)?;
        }
    }
    tx.delete_table(from).map_err(fault)?;
    tx.open_table(from).map_err(fault)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::redb::group::commit_group;
    use crate::store::redb::tables::{Tables, HOLDER_TIERS, NONCE_TIERS, ROOM_TIERS};
    use redb::backends::InMemoryBackend;
    use redb::Database;
    use redb::ReadableTableMetadata;
    use redmark_core::booking::{Actor, Booking, Commit, Day, NewBooking, RoomId, Span, Title};

    /// Bookings made: enough that the settled, middle and young tables all hold some.
    const MADE: u32 = MIDDLE_HOLDS_AT_LEAST as u32 + YOUNG_HOLDS as u32 + 100;

    /// Booking `i` of [`MADE`]: one hour of one of four rooms, in an order spread over them.
    fn new(i: u32) -> NewBooking {
        let slot = (i * 7919) % MADE;
        let start = Day {
            year: 2030,
            month: 1,
            day: 1,
        }
        .first_minute()
            + slot / 4 * 60;
        NewBooking {
            room: RoomId::try_from(format!("r{}", slot % 4).as_str()).unwrap(),
            span: Span::new(start, start + 60).unwrap(),
            title: Title::new(),
            attendees: 1,
            holder: [(slot % 2) as u8; 8],
            nonce: i.to_le_bytes().repeat(2).try_into().unwrap(),
        }
    }

    /// Commits `news` in one group: each one's outcome.
    fn commit(db: &Database, news: &[NewBooking]) -> Vec<Commit> {
        let mut out = Vec::new();
        commit_group(db, |t| {
            for n in news {
                out.push(t.book(n, &Actor::holder(n.holder))??);
            }
            Ok(())
        })
        .unwrap();
        out
    }

    /// Entries in each table (young, middle, settled) of the three indexes.
    fn held(db: &Database) -> Vec<[u64; 3]> {
        let tx = db.begin_read().unwrap();
        [NONCE_TIERS, ROOM_TIERS, HOLDER_TIERS]
            .into_iter()
            .map(|tiers| tiers.0.map(|t| tx.open_table(t).unwrap().len().unwrap()))
            .collect()
    }

    /// Entries spread over the young, middle and settled tables answer as one index does:
    /// each operation replays, each span is taken, a holder's bookings walk in order, and a
    /// cancel frees a span wherever its entry is.
    #[test]
    fn entries_in_every_table_answer_as_one_index() {
        let db = Database::builder()
            .create_with_backend(InMemoryBackend::new())
            .unwrap();
        let news: Vec<NewBooking> = (0..MADE).map(new).collect();
        let mut made: Vec<Booking> = Vec::new();
        for chunk in news.chunks(64) {
            for c in commit(&db, chunk) {
                let Commit::Created(b) = c else {
                    panic!("{c:?}")
                };
                made.push(b);
            }
        }
        let settled = MIDDLE_HOLDS_AT_LEAST;
        let want = [100, YOUNG_HOLDS, settled];
        assert_eq!(held(&db), [want, [100, YOUNG_HOLDS, settled], want]);
        // The first booking's entries are settled, then middle, then young.
        for (k, at) in [0, settled as usize + 10, MADE as usize - 10]
            .into_iter()
            .enumerate()
        {
            let b = &made[at];
            assert_eq!(
                commit(&db, std::slice::from_ref(&b.new)),
                [Commit::Replayed(b.clone())]
            );
            let later = NewBooking {
                span: Span::new(b.new.span.start + 30, b.new.span.end + 30).unwrap(),
                nonce: [0xe0 + k as u8; 8],
                ..b.new.clone()
            };
            assert_eq!(
                commit(&db, std::slice::from_ref(&later)),
                [Commit::Taken(b.clone())]
            );
            let tx = db.begin_write().unwrap();
            let cancelled = Tables::open(&tx)
                .unwrap()
                .cancel(b.id, &Actor::holder(b.new.holder))
                .unwrap();
            tx.commit().unwrap();
            assert!(cancelled.is_some());
            // Free now unless the next hour's booking (also overlapped) is there.
            let after = commit(&db, &[later]);
            let next = made
                .iter()
                .find(|x| x.new.room == b.new.room && x.new.span.start == b.new.span.end);
            match next {
                Some(n) => assert_eq!(after, [Commit::Taken(n.clone())]),
                None => assert!(matches!(after[..], [Commit::Created(_)])),
            }
        }
        // Holder 0's bookings, in (start, room) order, from every table.
        let tx = db.begin_read().unwrap();
        let holders = HOLDER_TIERS.open(|t| tx.open_table(t)).unwrap();
        let bookings = tx.open_table(crate::store::redb::tables::BOOKINGS).unwrap();
        let mut walk = Vec::new();
        let mut at = (0, String::new());
        while let Some(b) =
            crate::store::redb::tables::next_held(&holders, &bookings, &[0; 8], at.0, &at.1)
                .unwrap()
        {
            walk.push((b.new.span.start, b.new.room.to_string()));
            at = (b.new.span.start, b.new.room.to_string());
        }
        let all = tx.open_table(crate::store::redb::tables::BOOKINGS).unwrap();
        let mut want = Vec::new();
        for row in all.iter().unwrap() {
            let (k, rec) = row.unwrap();
            let b = crate::store::redb::tables::decode(k.value(), rec.value()).unwrap();
            if b.new.holder == [0; 8] && b.status == redmark_core::booking::Status::Active {
                want.push((b.new.span.start, b.new.room.to_string()));
            }
        }
        want.sort();
        assert_eq!(walk, want);
    }
}
