//! The store's tables and the records in them: how a booking is encoded, read back and
//! written inside one transaction.

use redb::{ReadableTable, TableDefinition};
use redmark_core::booking::{
    Booking, BookingId, Commit, Day, Holder, NewBooking, RoomId, Slot, Status, StoreError,
};

pub(super) const BOOKINGS: TableDefinition<u32, &[u8]> = TableDefinition::new("bookings");
pub(super) const NONCES: TableDefinition<&[u8], u32> = TableDefinition::new("nonces");
pub(super) const HELD: TableDefinition<&[u8], u32> = TableDefinition::new("held");
pub(super) const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
pub(super) const STORE_ID: &str = "store-id";

pub(super) const RECORD_V1: u8 = 1;

/// A store id: 16 random bytes, in the store's `meta` table and in [`MARKER_FILE`](super::open::MARKER_FILE).
pub(super) type StoreId = [u8; 16];

/// A redb error as a store error (logged): `Corrupt` when redb says the file is corrupted.
pub(super) fn fault<E: Into<redb::Error>>(e: E) -> StoreError {
    let e = e.into();
    tracing::error!("booking store: {e}");
    match e {
        redb::Error::Corrupted(_) => StoreError::Corrupt,
        _ => StoreError::Io,
    }
}

/// A damaged record or a broken link between tables: logged, and `Corrupt` to the caller.
pub(super) fn corrupt(why: std::fmt::Arguments<'_>) -> StoreError {
    tracing::error!("booking store: {why}: bookings.redb is damaged");
    StoreError::Corrupt
}

/// `held` key: year u16 BE, month, day, hour, then the room id.
pub(super) fn held_key(room: &str, slot: Slot) -> Vec<u8> {
    let mut k = Vec::with_capacity(5 + room.len());
    k.extend_from_slice(&slot.day.year.to_be_bytes());
    k.extend_from_slice(&[slot.day.month, slot.day.day, slot.hour]);
    k.extend_from_slice(room.as_bytes());
    k
}

/// Record: version, status, year u16 LE, month, day, hour, attendees u16 LE, `holder[8]`,
/// `nonce[8]`, room length, room bytes.
pub(super) fn encode(b: &Booking) -> Vec<u8> {
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

pub(super) fn decode(id: BookingId, r: &[u8]) -> Result<Booking, StoreError> {
    decode_quiet(id, r).ok_or_else(|| corrupt(format_args!("booking {id}: corrupt record")))
}

/// The booking in record `r`, or `None` if it does not decode.
pub(super) fn decode_quiet(id: BookingId, r: &[u8]) -> Option<Booking> {
    if r.len() < 27 || r[0] != RECORD_V1 {
        return None;
    }
    let status = match r[1] {
        0 => Status::Active,
        1 => Status::Cancelled,
        _ => return None,
    };
    // A record's day and hour are checked like a client's (a real day, an hour below 24): a
    // damaged but decodable record must not reach `Slot`'s arithmetic or be compared as a slot.
    let day = Day {
        year: u16::from_le_bytes([r[2], r[3]]),
        month: r[4],
        day: r[5],
    };
    if Day::parse(&day.to_string()) != Some(day) || r[6] >= 24 {
        return None;
    }
    let slot = Slot { day, hour: r[6] };
    let attendees = u16::from_le_bytes([r[7], r[8]]);
    let mut holder = [0; 8];
    holder.copy_from_slice(&r[9..17]);
    let mut nonce = [0; 8];
    nonce.copy_from_slice(&r[17..25]);
    let len = r[25] as usize;
    let room = r
        .get(26..26 + len)
        .and_then(|b| std::str::from_utf8(b).ok())?;
    let room = RoomId::try_from(room).ok()?;
    Some(Booking {
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

pub(super) fn load(
    t: &impl ReadableTable<u32, &'static [u8]>,
    id: BookingId,
) -> Result<Option<Booking>, StoreError> {
    match t.get(id).map_err(fault)? {
        Some(rec) => decode(id, rec.value()).map(Some),
        None => Ok(None),
    }
}

/// The three booking tables of one write transaction.
pub(super) struct Tables<'t> {
    bookings: redb::Table<'t, u32, &'static [u8]>,
    nonces: redb::Table<'t, &'static [u8], u32>,
    held: redb::Table<'t, &'static [u8], u32>,
}

impl<'t> Tables<'t> {
    pub(super) fn open(tx: &'t redb::WriteTransaction) -> Result<Self, StoreError> {
        Ok(Tables {
            bookings: tx.open_table(BOOKINGS).map_err(fault)?,
            nonces: tx.open_table(NONCES).map_err(fault)?,
            held: tx.open_table(HELD).map_err(fault)?,
        })
    }

    /// Books `new` unless its operation already booked or the slot is held. `Ok(Err(Full))`:
    /// this booking is refused and nothing changed; an outer error spoils the transaction.
    pub(super) fn book(
        &mut self,
        new: &NewBooking,
    ) -> Result<Result<Commit, StoreError>, StoreError> {
        // One holder's operation: a nonce is only ever matched together with its holder.
        let operation = [&new.holder[..], &new.nonce[..]].concat();
        let prior = self
            .nonces
            .get(&operation[..])
            .map_err(fault)?
            .map(|g| g.value());
        if let Some(id) = prior {
            let b = load(&self.bookings, id)?.ok_or_else(|| {
                corrupt(format_args!("a nonce names booking {id}, which is missing"))
            })?;
            return Ok(Ok(Commit::Replayed(b)));
        }
        let key = held_key(&new.room, new.slot);
        let holder = self.held.get(&key[..]).map_err(fault)?.map(|g| g.value());
        if let Some(id) = holder {
            let b = load(&self.bookings, id)?.ok_or_else(|| {
                corrupt(format_args!(
                    "a slot is held by booking {id}, which is missing"
                ))
            })?;
            return Ok(Ok(Commit::Taken(b)));
        }
        let last = self
            .bookings
            .last()
            .map_err(fault)?
            .map_or(0, |(k, _)| k.value());
        let Some(id) = last.checked_add(1) else {
            return Ok(Err(StoreError::Full));
        };
        let b = Booking {
            id,
            new: new.clone(),
            status: Status::Active,
        };
        self.bookings.insert(id, &encode(&b)[..]).map_err(fault)?;
        self.nonces.insert(&operation[..], id).map_err(fault)?;
        self.held.insert(&key[..], id).map_err(fault)?;
        Ok(Ok(Commit::Created(b)))
    }

    /// Marks booking `id` of `holder` cancelled (idempotent) and frees its slot.
    pub(super) fn cancel(
        &mut self,
        id: BookingId,
        holder: &Holder,
    ) -> Result<Option<Booking>, StoreError> {
        let Some(mut b) = load(&self.bookings, id)?.filter(|b| b.new.holder == *holder) else {
            return Ok(None);
        };
        if b.status == Status::Cancelled {
            return Ok(Some(b));
        }
        b.status = Status::Cancelled;
        self.bookings.insert(id, &encode(&b)[..]).map_err(fault)?;
        self.held
            .remove(&held_key(&b.new.room, b.new.slot)[..])
            .map_err(fault)?;
        Ok(Some(b))
    }
}
