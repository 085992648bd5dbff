//! The store's tables and the records in them: how a booking is encoded, read back and
//! written inside one transaction.

use std::ops::Bound;

use redb::{ReadableTable, TableDefinition};

pub(super) use super::errors::{corrupt, fault};
use super::keys::{holder_key, operation_key, room_key, room_key_start};
use super::tiers::{Due, Index, Levels, Tiers};
use super::trail::{keep, TrailTable, TRAIL};
use redmark_core::booking::{
    cancels_with_series, due, end_step, occurrence, Actor, Booking, BookingId, Change, Commit, Day,
    EndStep, Holder, Minute, NewBooking, Occurrence, Resized, RoomId, SeriesCommit, SeriesIds,
    Span, Status, StoreError, Title, MAX_MINUTES,
};

pub(super) const BOOKINGS: TableDefinition<u32, &[u8]> = TableDefinition::new("bookings");
/// Operations (holder ‖ nonce → id), settled part (the whole index before `tiers.rs`).
pub(super) const NONCES: Index = TableDefinition::new("nonces");
/// Active bookings by room, then start: [`room_key`] → id (settled part).
pub(super) const ROOM_STARTS: Index = TableDefinition::new("room_starts");
/// Active bookings by holder, then start, then room: [`holder_key`] → id (settled part).
pub(super) const HOLDER_STARTS: Index = TableDefinition::new("holder_starts");
/// The young and middle tables of the three indexes (`tiers.rs`).
pub(super) const YOUNG_NONCES: Index = TableDefinition::new("young_nonces");
pub(super) const MIDDLE_NONCES: Index = TableDefinition::new("middle_nonces");
pub(super) const YOUNG_ROOM_STARTS: Index = TableDefinition::new("young_room_starts");
pub(super) const MIDDLE_ROOM_STARTS: Index = TableDefinition::new("middle_room_starts");
pub(super) const YOUNG_HOLDER_STARTS: Index = TableDefinition::new("young_holder_starts");
pub(super) const MIDDLE_HOLDER_STARTS: Index = TableDefinition::new("middle_holder_starts");
/// Moves each index's young and middle entries on as `due` (one [`Due`] an index, from
/// [`Tables::due`]) says, in `tx` with no table of it open: at the end of a group's
/// transaction. Whether a middle table was moved into its settled one.
pub(super) fn settle(tx: &redb::WriteTransaction, due: [Due; 3]) -> Result<bool, StoreError> {
    let mut settled = false;
    for (tiers, due) in [NONCE_TIERS, ROOM_TIERS, HOLDER_TIERS].into_iter().zip(due) {
        settled |= tiers.settle(tx, due)?;
    }
    Ok(settled)
}

/// The three indexes, each young, middle and settled.
pub(super) const NONCE_TIERS: Tiers = Tiers([YOUNG_NONCES, MIDDLE_NONCES, NONCES]);
pub(super) const ROOM_TIERS: Tiers = Tiers([YOUNG_ROOM_STARTS, MIDDLE_ROOM_STARTS, ROOM_STARTS]);
pub(super) const HOLDER_TIERS: Tiers =
    Tiers([YOUNG_HOLDER_STARTS, MIDDLE_HOLDER_STARTS, HOLDER_STARTS]);
/// Every index table, for the checks that each names a stored booking.
pub(super) const INDEXES: [Index; 9] = [
    NONCES,
    ROOM_STARTS,
    HOLDER_STARTS,
    YOUNG_NONCES,
    MIDDLE_NONCES,
    YOUNG_ROOM_STARTS,
    MIDDLE_ROOM_STARTS,
    YOUNG_HOLDER_STARTS,
    MIDDLE_HOLDER_STARTS,
];
/// The index of stores before spans (hour slot ‖ room → id): converted at open (`migrate.rs`).
pub(super) const OLD_HELD: TableDefinition<&[u8], u32> = TableDefinition::new("held");
pub(super) const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
pub(super) const STORE_ID: &str = "store-id";

/// A record of a store before spans: a whole hour, no title (read, never written).
pub(super) const RECORD_V1: u8 = 1;
/// A record with a span and a title.
pub(super) const RECORD_V2: u8 = 2;
/// A v2 record whose status byte may also say released (2) and checked in (bit 7): written
/// only for such a booking, so a store that never used check-in stays v2 (the release before
/// reads it).
pub(super) const RECORD_V3: u8 = 3;
/// A v3 record followed by the series' id (u32 LE) after the title: written only for an
/// occurrence of a series, so a store that never booked one stays as it was.
pub(super) const RECORD_V4: u8 = 4;
/// Bit 7 of a v3 record's status byte: its holder checked in.
const CHECKED_IN: u8 = 0x80;

/// A store id: 16 random bytes, in the store's `meta` table and in [`MARKER_FILE`](super::open::MARKER_FILE).
pub(super) type StoreId = [u8; 16];

/// Record v2 (v3 when released or checked in: [`RECORD_V3`]): version, status, start u32 LE, end u32 LE, attendees u16 LE, `holder[8]`,
/// `nonce[8]`, room length, room bytes, title length, title bytes (UTF-8).
pub(super) fn encode(b: &Booking) -> Vec<u8> {
    let n = &b.new;
    let mut r = Vec::with_capacity(30 + n.room.len() + n.title.len());
    let v3 = b.checked_in || b.status == Status::Released;
    r.push(match (b.series, v3) {
        (Some(_), _) => RECORD_V4,
        (None, true) => RECORD_V3,
        (None, false) => RECORD_V2,
    });
    let status = match b.status {
        Status::Active => 0,
        Status::Cancelled => 1,
        Status::Released => 2,
    };
    r.push(status | if b.checked_in { CHECKED_IN } else { 0 });
    r.extend_from_slice(&n.span.start.to_le_bytes());
    r.extend_from_slice(&n.span.end.to_le_bytes());
    r.extend_from_slice(&n.attendees.to_le_bytes());
    r.extend_from_slice(&n.holder);
    r.extend_from_slice(&n.nonce);
    r.push(n.room.len() as u8);
    r.extend_from_slice(n.room.as_bytes());
    r.push(n.title.len() as u8);
    r.extend_from_slice(n.title.as_bytes());
    if let Some(series) = b.series {
        r.extend_from_slice(&series.to_le_bytes());
    }
    r
}

pub(super) fn decode(id: BookingId, r: &[u8]) -> Result<Booking, StoreError> {
    decode_quiet(id, r).ok_or_else(|| corrupt(format_args!("booking {id}: corrupt record")))
}

/// The booking in record `r` (v1 or v2), or `None` if it does not decode.
pub(super) fn decode_quiet(id: BookingId, r: &[u8]) -> Option<Booking> {
    let byte = *r.get(1)?;
    let (status, checked_in) = match (r[0], byte & !CHECKED_IN, byte & CHECKED_IN != 0) {
        (_, 0, false) => (Status::Active, false),
        (_, 1, false) => (Status::Cancelled, false),
        (RECORD_V3 | RECORD_V4, 0, checked_in) => (Status::Active, checked_in),
        (RECORD_V3 | RECORD_V4, 1, checked_in) => (Status::Cancelled, checked_in),
        (RECORD_V3 | RECORD_V4, 2, false) => (Status::Released, false),
        _ => return None,
    };
    let (span, rest, title) = match r[0] {
        RECORD_V1 => (decode_hour(r.get(2..7)?)?, r.get(7..)?, None),
        RECORD_V2 | RECORD_V3 | RECORD_V4 => {
            let word = |at: usize| Some(u32::from_le_bytes(r.get(at..at + 4)?.try_into().ok()?));
            // A damaged but decodable record must not reach a span's arithmetic.
            let span = Span::new(word(2)?, word(6)?)?;
            (span, r.get(10..)?, Some(()))
        }
        _ => return None,
    };
    // attendees, holder, nonce, room length, room (then, in v2, the title).
    let attendees = u16::from_le_bytes([*rest.first()?, *rest.get(1)?]);
    let holder: Holder = rest.get(2..10)?.try_into().ok()?;
    let nonce = rest.get(10..18)?.try_into().ok()?;
    let len = usize::from(*rest.get(18)?);
    let room = std::str::from_utf8(rest.get(19..19 + len)?).ok()?;
    let room = RoomId::try_from(room).ok()?;
    let mut series = None;
    let title = match title {
        None => Title::new(),
        Some(()) => {
            let after = rest.get(19 + len..)?;
            let tlen = usize::from(*after.first()?);
            let tail = if r[0] == RECORD_V4 { 4 } else { 0 };
            if after.len() != 1 + tlen + tail {
                return None;
            }
            if tail > 0 {
                series = Some(u32::from_le_bytes(after.get(1 + tlen..)?.try_into().ok()?));
            }
            Title::try_from(std::str::from_utf8(&after[1..1 + tlen]).ok()?).ok()?
        }
    };
    Some(Booking {
        id,
        new: NewBooking {
            room,
            span,
            title,
            attendees,
            holder,
            nonce,
        },
        status,
        checked_in,
        series,
    })
}

/// A v1 record's year u16 LE, month, day, hour as the hour it held, checked like a client's
/// (a real day, an hour below 24).
fn decode_hour(b: &[u8]) -> Option<Span> {
    let day = Day {
        year: u16::from_le_bytes([b[0], b[1]]),
        month: b[2],
        day: b[3],
    };
    (Day::parse(&day.to_string()) == Some(day) && b[4] < 24).then(|| Span::hour(day, b[4]))
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

/// The booking `id` an index entry names: a missing one means the tables disagree (damage).
pub(super) fn indexed(
    bookings: &impl ReadableTable<u32, &'static [u8]>,
    id: BookingId,
) -> Result<Booking, StoreError> {
    load(bookings, id)?.ok_or_else(|| {
        corrupt(format_args!(
            "an index names booking {id}, which is missing"
        ))
    })
}

/// [`Store::next_in_room`](redmark_core::booking::Store::next_in_room) over [`ROOM_STARTS`]:
/// the last booking starting at or before `from` if it is still under way, else the first
/// starting after, if it starts before `before` (`Minute::MAX`: any). A room's active bookings
/// never overlap, so at most two index reads; the later booking's record is read only when its
/// start, which its key holds, is before `before` (a clash check's is almost never).
pub(super) fn next_in_room<T: ReadableTable<&'static [u8], u32>>(
    rooms: &Levels<T>,
    bookings: &impl ReadableTable<u32, &'static [u8]>,
    room: &str,
    from: Minute,
    before: Minute,
) -> Result<Option<Booking>, StoreError> {
    let (Some(first), Some(at), Some(end)) = (
        room_key(room, 0),
        room_key(room, from),
        room_key(room, before),
    ) else {
        return Ok(None);
    };
    let before_from = rooms.last_in((Bound::Included(&first[..]), Bound::Included(&at[..])))?;
    if let Some((_, id)) = before_from {
        let b = indexed(bookings, id)?;
        if b.new.span.end > from {
            return Ok(Some(b));
        }
    }
    let after = (Bound::Excluded(&at[..]), Bound::Excluded(&end[..]));
    let next = rooms.first_in(after)?;
    next.map(|(_, id)| indexed(bookings, id)).transpose()
}

/// [`Store::next_held`](redmark_core::booking::Store::next_held) over [`HOLDER_STARTS`]: one
/// index read.
pub(super) fn next_held<T: ReadableTable<&'static [u8], u32>>(
    holders: &Levels<T>,
    bookings: &impl ReadableTable<u32, &'static [u8]>,
    holder: &Holder,
    start: Minute,
    room: &str,
) -> Result<Option<Booking>, StoreError> {
    let from = holder_key(holder, start, room);
    let after = (Bound::Excluded(&from[..]), Bound::Unbounded);
    match holders.first_in(after)? {
        Some((k, id)) if k.starts_with(holder) => indexed(bookings, id).map(Some),
        _ => Ok(None),
    }
}

/// The booking tables of one write transaction.
pub(super) struct Tables<'t> {
    bookings: redb::Table<'t, u32, &'static [u8]>,
    nonces: Levels<redb::Table<'t, &'static [u8], u32>>,
    rooms: Levels<redb::Table<'t, &'static [u8], u32>>,
    holders: Levels<redb::Table<'t, &'static [u8], u32>>,
    trail: TrailTable<'t>,
}

impl<'t> Tables<'t> {
    pub(super) fn open(tx: &'t redb::WriteTransaction) -> Result<Self, StoreError> {
        Ok(Tables {
            bookings: tx.open_table(BOOKINGS).map_err(fault)?,
            nonces: NONCE_TIERS.open(|t| tx.open_table(t))?,
            rooms: ROOM_TIERS.open(|t| tx.open_table(t))?,
            holders: HOLDER_TIERS.open(|t| tx.open_table(t))?,
            trail: tx.open_table(TRAIL).map_err(fault)?,
        })
    }

    /// Books `new` unless its operation already booked or an active booking of the room
    /// overlaps it, keeping `by` in its trail. `Ok(Err(Full))`: this booking is refused and
    /// nothing changed; an outer error spoils the transaction.
    pub(super) fn book(
        &mut self,
        new: &NewBooking,
        by: &Actor,
    ) -> Result<Result<Commit, StoreError>, StoreError> {
        let prior = self.nonces.get(&operation_key(&new.holder, &new.nonce))?;
        if let Some(id) = prior {
            let b = load(&self.bookings, id)?.ok_or_else(|| {
                corrupt(format_args!("a nonce names booking {id}, which is missing"))
            })?;
            return Ok(Ok(Commit::Replayed(b)));
        }
        if let Some(b) = self.in_the_way(new)? {
            return Ok(Ok(Commit::Taken(b)));
        }
        let Some(id) = self.last_id()?.checked_add(1) else {
            return Ok(Err(StoreError::Full));
        };
        let b = Booking {
            id,
            new: new.clone(),
            status: Status::Active,
            checked_in: false,
            series: None,
        };
        self.write_new(&b, by)?;
        Ok(Ok(Commit::Created(b)))
    }

    /// The earliest active booking of `new`'s room that overlaps its span: what refuses it.
    /// When it is free, one read of the room index (the last booking starting before the end)
    /// and that booking's record.
    fn in_the_way(&self, new: &NewBooking) -> Result<Option<Booking>, StoreError> {
        let (room, span) = (&new.room, new.span);
        let (Some(first), Some(end)) = (room_key(room, 0), room_key(room, span.end)) else {
            return Ok(None);
        };
        let last = self
            .rooms
            .last_in((Bound::Included(&first[..]), Bound::Excluded(&end[..])))?;
        let Some((key, id)) = last else {
            return Ok(None);
        };
        let start = room_key_start(&key)
            .ok_or_else(|| corrupt(format_args!("a room index key without a start")))?;
        if start < span.start {
            // A room's active bookings never overlap: none before this one reaches the span.
            let b = indexed(&self.bookings, id)?;
            return Ok((b.new.span.end > span.start).then_some(b));
        }
        // One starts inside the span: taken. The answer names the earliest in the way.
        next_in_room(&self.rooms, &self.bookings, room, span.start, span.end)
    }

    /// The highest booking id given so far (0: none).
    fn last_id(&self) -> Result<BookingId, StoreError> {
        Ok(self
            .bookings
            .last()
            .map_err(fault)?
            .map_or(0, |(k, _)| k.value()))
    }

    /// Writes new booking `b`: its record, its operation, both indexes and its trail's first
    /// step.
    fn write_new(&mut self, b: &Booking, by: &Actor) -> Result<(), StoreError> {
        self.bookings.insert(b.id, &encode(b)[..]).map_err(fault)?;
        self.nonces
            .insert(&operation_key(&b.new.holder, &b.new.nonce), b.id)?;
        self.index(b)?;
        keep(&mut self.trail, b.id, Change::Made, by)
    }

    /// Books a whole series ([`Store::commit_series`](redmark_core::booking::Store::commit_series)):
    /// every occurrence checked first, then all written under consecutive ids, or nothing.
    /// `Ok(Err(Full))`: refused, nothing changed.
    pub(super) fn book_series(
        &mut self,
        base: &NewBooking,
        other: &str,
        occurrences: &[Occurrence],
        by: &Actor,
    ) -> Result<Result<SeriesCommit, StoreError>, StoreError> {
        if let Some(first) = self.nonces.get(&operation_key(&base.holder, &base.nonce))? {
            let b = indexed(&self.bookings, first)?;
            let series = b.series.unwrap_or(b.id);
            let mut ids = SeriesIds::new();
            let mut id = series;
            while let Some(o) = load(&self.bookings, id)?.filter(|o| o.series == Some(series)) {
                if ids.push(o.id).is_err() {
                    break;
                }
                id = id.saturating_add(1);
            }
            return Ok(Ok(SeriesCommit::Replayed(series, ids)));
        }
        let mut news = Vec::with_capacity(occurrences.len());
        let mut taken = 0u64;
        for (i, o) in occurrences.iter().enumerate() {
            let new = occurrence(base, other, o, i)?;
            if self.in_the_way(&new)?.is_some() {
                taken |= 1 << i;
            }
            news.push(new);
        }
        if taken != 0 {
            return Ok(Ok(SeriesCommit::Taken(taken)));
        }
        let last = self.last_id()?;
        let series = last.saturating_add(1);
        let Some(_) = last.checked_add(news.len() as u32) else {
            return Ok(Err(StoreError::Full));
        };
        let mut ids = SeriesIds::new();
        for (k, new) in news.into_iter().enumerate() {
            let id = series + k as u32;
            let b = Booking {
                id,
                new,
                status: Status::Active,
                checked_in: false,
                series: Some(series),
            };
            self.write_new(&b, by)?;
            let _ = ids.push(id);
        }
        Ok(Ok(SeriesCommit::Created(series, ids)))
    }

    /// Cancels what is left of series `series` from `from`
    /// ([`Store::cancel_series`](redmark_core::booking::Store::cancel_series)): its bookings
    /// have consecutive ids from the series' own, each cancelled as [`Tables::cancel`] does.
    pub(super) fn cancel_series(
        &mut self,
        series: BookingId,
        from: Minute,
        by: &Actor,
    ) -> Result<Option<SeriesIds>, StoreError> {
        let may =
            |b: &Booking| b.series == Some(series) && (by.operator || b.new.holder == by.holder);
        if !load(&self.bookings, series)?.is_some_and(|b| may(&b)) {
            return Ok(None);
        }
        let mut ids = SeriesIds::new();
        let mut id = series;
        while let Some(b) = load(&self.bookings, id)?.filter(|b| b.series == Some(series)) {
            if cancels_with_series(&b, series, from) {
                self.cancel(id, by)?;
                let _ = ids.push(id);
            }
            let Some(next) = id.checked_add(1) else { break };
            id = next;
        }
        Ok(Some(ids))
    }

    /// Enters active booking `b` in both indexes.
    fn index(&mut self, b: &Booking) -> Result<(), StoreError> {
        let n = &b.new;
        // A stored room id fits its key (at most MAX_ROOM_ID bytes).
        let room = room_key(&n.room, n.span.start).ok_or(StoreError::Io)?;
        self.rooms.insert(&room[..], b.id)?;
        let mine = holder_key(&n.holder, n.span.start, &n.room);
        self.holders.insert(&mine[..], b.id)?;
        Ok(())
    }

    /// Marks booking `id` cancelled if `by` holds it or is an operator (idempotent), frees its
    /// span and keeps `by` in its trail.
    pub(super) fn cancel(
        &mut self,
        id: BookingId,
        by: &Actor,
    ) -> Result<Option<Booking>, StoreError> {
        let may = |b: &Booking| by.operator || b.new.holder == by.holder;
        let Some(mut b) = load(&self.bookings, id)?.filter(may) else {
            return Ok(None);
        };
        if b.status == Status::Cancelled {
            return Ok(Some(b));
        }
        let released = b.status == Status::Released;
        b.status = Status::Cancelled;
        self.bookings.insert(id, &encode(&b)[..]).map_err(fault)?;
        let n = &b.new;
        if let Some(room) = room_key(&n.room, n.span.start).filter(|_| !released) {
            self.rooms.remove(&room[..])?;
        }
        let mine = holder_key(&n.holder, n.span.start, &n.room);
        // A released booking's entry may since name the holder's new booking of that time.
        if !released || self.holders.get(&mine[..])? == Some(id) {
            self.holders.remove(&mine[..])?;
        }
        keep(&mut self.trail, id, Change::Cancelled, by)?;
        Ok(Some(b))
    }

    /// Moves the end of `by`'s booking `id` from `from` to `to`
    /// ([`Store::set_end`](redmark_core::booking::Store::set_end)). Both indexes are keyed by
    /// the start, which stays: only the record (and the trail) changes.
    pub(super) fn set_end(
        &mut self,
        id: BookingId,
        by: &Actor,
        from: Minute,
        to: Minute,
    ) -> Result<Option<Resized>, StoreError> {
        let Some(mut b) = load(&self.bookings, id)?.filter(|b| b.new.holder == by.holder) else {
            return Ok(None);
        };
        b.new.span = match end_step(&b, from, to) {
            EndStep::Move(span) => span,
            EndStep::Answer(done) => return Ok(Some(done)),
        };
        if to > from {
            let next = next_in_room(&self.rooms, &self.bookings, &b.new.room, from, to)?;
            if let Some(other) = next {
                return Ok(Some(Resized::Taken(other)));
            }
        }
        self.bookings.insert(id, &encode(&b)[..]).map_err(fault)?;
        keep(&mut self.trail, id, Change::end_moved(from, to), by)?;
        Ok(Some(Resized::Moved(b)))
    }

    /// Marks `by`'s active booking `id` checked in
    /// ([`Store::check_in`](redmark_core::booking::Store::check_in)): only the record and the
    /// trail change.
    pub(super) fn check_in(
        &mut self,
        id: BookingId,
        by: &Actor,
    ) -> Result<Option<Booking>, StoreError> {
        let Some(mut b) = load(&self.bookings, id)?.filter(|b| b.new.holder == by.holder) else {
            return Ok(None);
        };
        if b.status == Status::Active && !b.checked_in {
            b.checked_in = true;
            self.bookings.insert(id, &encode(&b)[..]).map_err(fault)?;
            keep(&mut self.trail, id, Change::CheckedIn, by)?;
        }
        Ok(Some(b))
    }

    /// Releases the first booking (by id) [`due`] at `now`
    /// ([`Store::release_due`](redmark_core::booking::Store::release_due)): its time leaves
    /// the room index, it stays in its holder's (who reads that it was released). A scan of
    /// the records: the host calls it once a timer period, not per request.
    /// An active booking due for release at `now`, found through the room index: room by
    /// room, only the starts a booking still under way past its window can have (from a
    /// day before `now`, the longest booking, to `window` minutes before it), not every record.
    fn first_due(&self, now: Minute, window: u16) -> Result<Option<Booking>, StoreError> {
        let earliest = now.saturating_sub(MAX_MINUTES);
        let latest = now.saturating_sub(window.into());
        let mut after: Option<Vec<u8>> = None;
        loop {
            let lower = after.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
            let Some((key, _)) = self.rooms.first_in((lower, Bound::Unbounded))? else {
                return Ok(None);
            };
            // The key's room: its length byte, then its bytes (room_key).
            let room = key
                .first()
                .and_then(|&len| key.get(1..1 + usize::from(len)))
                .and_then(|r| std::str::from_utf8(r).ok())
                .ok_or_else(|| corrupt(format_args!("a room index key does not decode")))?;
            let (Some(lo), Some(hi), Some(end)) = (
                room_key(room, earliest),
                room_key(room, latest),
                room_key(room, Minute::MAX),
            ) else {
                return Ok(None);
            };
            for id in self
                .rooms
                .ids_in((Bound::Included(&lo[..]), Bound::Included(&hi[..])))?
            {
                let b = indexed(&self.bookings, id)?;
                if due(&b, now, window) {
                    return Ok(Some(b));
                }
            }
            after = Some(end);
        }
    }

    pub(super) fn release_due(
        &mut self,
        now: Minute,
        window: u16,
        by: &Actor,
    ) -> Result<Option<Booking>, StoreError> {
        let Some(mut b) = self.first_due(now, window)? else {
            return Ok(None);
        };
        b.status = Status::Released;
        self.bookings.insert(b.id, &encode(&b)[..]).map_err(fault)?;
        keep(&mut self.trail, b.id, Change::Released, by)?;
        if let Some(room) = room_key(&b.new.room, b.new.span.start) {
            self.rooms.remove(&room[..])?;
        }
        Ok(Some(b))
    }

    /// What each index's tiers have due (nonces, rooms, holders), read on the open tables: a
    /// group that moves nothing opens no table again.
    pub(super) fn due(&self) -> Result<[Due; 3], StoreError> {
        let made = self
            .bookings
            .last()
            .map_err(fault)?
            .map_or(0, |(k, _)| k.value());
        Ok([
            self.nonces.due(made)?,
            self.rooms.due(made)?,
            self.holders.due(made)?,
        ])
    }
}
