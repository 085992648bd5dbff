//! Durable bookings in redb, behind the core's [`Store`] trait.
//!
//! Why redb rather than SQLite: it is pure Rust (no C toolchain, nothing to cross-build),
//! ACID with copy-on-write B-trees and a checksummed commit slot, so a crash at any instant
//! leaves the last committed transaction and nothing half-written, and a commit with
//! [`Durability::Immediate`] (its default) has been fsynced when `commit()` returns. The
//! booking data is three tiny key/value tables; SQL buys nothing here. A database shared by
//! several instances would be another `Store` implementation (e.g. over a SQL server), not a
//! change to the engine.
//!
//! Tables (one write transaction per [`Store::commit`] / [`Store::cancel`]):
//! - `bookings`: id → record (see [`encode`]);
//! - `nonces`: holder ‖ operation nonce → id (at-most-once: the same operation replays its
//!   booking);
//! - `held`: slot ‖ room → id of the active booking holding it.

use std::path::Path;

use redb::{Database, Durability, ReadableTable, TableDefinition};
use redmark_core::booking::{
    Booking, BookingId, Commit, Day, NewBooking, RoomId, Slot, Status, Store, StoreError,
};

const BOOKINGS: TableDefinition<u32, &[u8]> = TableDefinition::new("bookings");
const NONCES: TableDefinition<&[u8], u32> = TableDefinition::new("nonces");
const HELD: TableDefinition<&[u8], u32> = TableDefinition::new("held");

const RECORD_V1: u8 = 1;

/// Bookings in a redb file; every change is durable before the call returns.
pub struct RedbStore {
    db: Database,
}

/// Why the store could not be opened.
#[derive(Debug)]
pub struct OpenError(pub String);

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl RedbStore {
    /// Opens (or creates) the store at `path`. Fails if another process holds it.
    pub fn open(path: &Path) -> Result<RedbStore, OpenError> {
        let db = Database::create(path).map_err(|e| match e {
            redb::DatabaseError::DatabaseAlreadyOpen => OpenError(format!(
                "{} is in use by another redmark process (one server per --data directory)",
                path.display()
            )),
            e => OpenError(format!("cannot open {}: {e}", path.display())),
        })?;
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
        // Create the tables so read transactions never meet a missing one.
        let tx = db.begin_write().map_err(|e| OpenError(e.to_string()))?;
        {
            tx.open_table(BOOKINGS)
                .map_err(|e| OpenError(e.to_string()))?;
            tx.open_table(NONCES)
                .map_err(|e| OpenError(e.to_string()))?;
            tx.open_table(HELD).map_err(|e| OpenError(e.to_string()))?;
        }
        tx.commit().map_err(|e| OpenError(e.to_string()))?;
        Ok(RedbStore { db })
    }

    /// Every booking, by id (for tools and tests).
    #[allow(dead_code)]
    pub fn all(&self) -> Result<Vec<Booking>, StoreError> {
        let tx = self.db.begin_read().map_err(io)?;
        let t = tx.open_table(BOOKINGS).map_err(io)?;
        let mut v = Vec::new();
        for row in t.iter().map_err(io)? {
            let (k, rec) = row.map_err(io)?;
            v.push(decode(k.value(), rec.value())?);
        }
        Ok(v)
    }
}

fn io<E: std::fmt::Display>(e: E) -> StoreError {
    tracing::error!("booking store: {e}");
    StoreError::Io
}

/// `held` key: year u16 BE, month, day, hour, then the room id.
fn held_key(room: &str, slot: Slot) -> Vec<u8> {
    let mut k = Vec::with_capacity(5 + room.len());
    k.extend_from_slice(&slot.day.year.to_be_bytes());
    k.extend_from_slice(&[slot.day.month, slot.day.day, slot.hour]);
    k.extend_from_slice(room.as_bytes());
    k
}

/// Record: version, status, year u16 LE, month, day, hour, attendees u16 LE, holder[8],
/// nonce[8], room length, room bytes.
fn encode(b: &Booking) -> Vec<u8> {
    let n = &b.new;
    let mut r = Vec::with_capacity(28 + n.room.len());
    r.push(RECORD_V1);
    r.push(match b.status {
        Status::Active => 0,
        Status::Cancelled => 1,
    });
    r.extend_from_slice(&n.slot.day.year.to_le_bytes());
    r.extend_from_slice(&[n.slot.day.month, n.slot.day.day, n.slot.hour]);
    r.extend_from_slice(&n.attendees.to_le_bytes());
    r.extend_from_slice(&n.holder);
    r.extend_from_slice(&n.nonce);
    r.push(n.room.len() as u8);
    r.extend_from_slice(n.room.as_bytes());
    r
}

fn decode(id: BookingId, r: &[u8]) -> Result<Booking, StoreError> {
    let bad = || io(format_args!("booking {id}: corrupt record"));
    if r.len() < 27 || r[0] != RECORD_V1 {
        return Err(bad());
    }
    let status = match r[1] {
        0 => Status::Active,
        1 => Status::Cancelled,
        _ => return Err(bad()),
    };
    let day = Day {
        year: u16::from_le_bytes([r[2], r[3]]),
        month: r[4],
        day: r[5],
    };
    let slot = Slot { day, hour: r[6] };
    let attendees = u16::from_le_bytes([r[7], r[8]]);
    let mut holder = [0; 8];
    holder.copy_from_slice(&r[9..17]);
    let mut nonce = [0; 8];
    nonce.copy_from_slice(&r[17..25]);
    let len = r[25] as usize;
    let room = r
        .get(26..26 + len)
        .and_then(|b| std::str::from_utf8(b).ok())
        .ok_or_else(bad)?;
    let room = RoomId::try_from(room).map_err(|_| bad())?;
    Ok(Booking {
        id,
        new: NewBooking {
            room,
            slot,
            attendees,
            holder,
            nonce,
        },
        status,
    })
}

fn load(
    t: &impl ReadableTable<u32, &'static [u8]>,
    id: BookingId,
) -> Result<Option<Booking>, StoreError> {
    match t.get(id).map_err(io)? {
        Some(rec) => decode(id, rec.value()).map(Some),
        None => Ok(None),
    }
}

impl Store for RedbStore {
    fn commit(&mut self, new: &NewBooking) -> Result<Commit, StoreError> {
        let mut tx = self.db.begin_write().map_err(io)?;
        tx.set_durability(Durability::Immediate);
        let outcome = {
            let mut bookings = tx.open_table(BOOKINGS).map_err(io)?;
            let mut nonces = tx.open_table(NONCES).map_err(io)?;
            let mut held = tx.open_table(HELD).map_err(io)?;
            // One holder's operation: a nonce is only ever matched together with its holder.
            let operation = [&new.holder[..], &new.nonce[..]].concat();
            let prior = nonces.get(&operation[..]).map_err(io)?.map(|g| g.value());
            if let Some(id) = prior {
                let b = load(&bookings, id)?.ok_or_else(|| io("nonce names a missing booking"))?;
                return Ok(Commit::Replayed(b));
            }
            let key = held_key(&new.room, new.slot);
            let holder = held.get(&key[..]).map_err(io)?.map(|g| g.value());
            if let Some(id) = holder {
                let b = load(&bookings, id)?.ok_or_else(|| io("slot held by a missing booking"))?;
                return Ok(Commit::Taken(b));
            }
            let last = bookings.last().map_err(io)?.map_or(0, |(k, _)| k.value());
            let id = last.checked_add(1).ok_or(StoreError::Full)?;
            let b = Booking {
                id,
                new: new.clone(),
                status: Status::Active,
            };
            bookings.insert(id, &encode(&b)[..]).map_err(io)?;
            nonces.insert(&operation[..], id).map_err(io)?;
            held.insert(&key[..], id).map_err(io)?;
            b
        };
        // Durable (fsynced) when commit returns: only then is the booking acknowledged.
        tx.commit().map_err(io)?;
        Ok(Commit::Created(outcome))
    }

    fn get(&self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        let tx = self.db.begin_read().map_err(io)?;
        let t = tx.open_table(BOOKINGS).map_err(io)?;
        load(&t, id)
    }

    fn occupant(&self, room: &str, slot: Slot) -> Result<Option<Booking>, StoreError> {
        let tx = self.db.begin_read().map_err(io)?;
        let held = tx.open_table(HELD).map_err(io)?;
        let Some(id) = held
            .get(&held_key(room, slot)[..])
            .map_err(io)?
            .map(|g| g.value())
        else {
            return Ok(None);
        };
        let t = tx.open_table(BOOKINGS).map_err(io)?;
        load(&t, id)
    }

    fn cancel(&mut self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        let mut tx = self.db.begin_write().map_err(io)?;
        tx.set_durability(Durability::Immediate);
        let b = {
            let mut bookings = tx.open_table(BOOKINGS).map_err(io)?;
            let mut held = tx.open_table(HELD).map_err(io)?;
            let Some(mut b) = load(&bookings, id)? else {
                return Ok(None);
            };
            if b.status == Status::Cancelled {
                return Ok(Some(b));
            }
            b.status = Status::Cancelled;
            bookings.insert(id, &encode(&b)[..]).map_err(io)?;
            held.remove(&held_key(&b.new.room, b.new.slot)[..])
                .map_err(io)?;
            b
        };
        tx.commit().map_err(io)?;
        Ok(Some(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(room: &str, hour: u8, nonce: u8) -> NewBooking {
        NewBooking {
            room: RoomId::try_from(room).unwrap(),
            slot: Slot {
                day: Day {
                    year: 2026,
                    month: 12,
                    day: 3,
                },
                hour,
            },
            attendees: 3,
            holder: [7; 8],
            nonce: [nonce; 8],
        }
    }

    #[test]
    fn commits_replays_takes_cancels_and_survives_reopen() {
        let dir = std::env::temp_dir().join(format!("redmark-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("b.redb");
        {
            let mut s = RedbStore::open(&path).unwrap();
            let Commit::Created(a) = s.commit(&new("atrium", 9, 1)).unwrap() else {
                panic!()
            };
            assert_eq!(a.id, 1);
            assert_eq!(
                s.commit(&new("atrium", 9, 1)).unwrap(),
                Commit::Replayed(a.clone())
            );
            assert_eq!(
                s.commit(&new("atrium", 9, 2)).unwrap(),
                Commit::Taken(a.clone())
            );
            let Commit::Created(b) = s.commit(&new("nook", 9, 3)).unwrap() else {
                panic!()
            };
            assert_eq!(b.id, 2);
            assert!(
                RedbStore::open(&path).is_err(),
                "second opener must be refused"
            );
            let c = s.cancel(1).unwrap().unwrap();
            assert_eq!(c.status, Status::Cancelled);
            assert_eq!(s.occupant("atrium", a.new.slot).unwrap(), None);
            assert_eq!(s.cancel(99).unwrap(), None);
        }
        let mut s = RedbStore::open(&path).unwrap();
        assert_eq!(s.get(1).unwrap().unwrap().status, Status::Cancelled);
        assert_eq!(
            s.occupant("nook", new("nook", 9, 3).slot)
                .unwrap()
                .unwrap()
                .id,
            2
        );
        let Commit::Created(d) = s.commit(&new("atrium", 9, 4)).unwrap() else {
            panic!()
        };
        assert_eq!(d.id, 3, "ids are never reused");
        assert_eq!(s.all().unwrap().len(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
