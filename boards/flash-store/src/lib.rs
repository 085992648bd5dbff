//! The door panel's booking [`Store`] on NOR flash, through `embedded-storage`'s blocking
//! [`NorFlash`](embedded_storage::nor_flash::NorFlash) traits, and its boot counter.
//!
//! # Layout
//!
//! The store owns `pages` erase pages of a flash, used as a ring. Every page is cut into
//! 64-byte slots; slot 0 is the page header, the others hold records:
//!
//! | record | bytes |
//! | --- | --- |
//! | header | magic `RMKP`, sequence u32, next booking id u32, boot epoch u32, …, CRC-32 |
//! | booking (kind 3) | kind 3, status, room length, title length, id u32, start u32, end u32, holder 8, nonce 8, room 24, attendees u16, 0, 0, CRC-32 |
//! | title (kind 4) | kind 4, title length, 0, 0, id u32, title 48, …, CRC-32 |
//! | boot | kind 2, 0, 0, 0, epoch u32, …, CRC-32 |
//! | booking (kind 1, read only) | kind 1, status, room length, 0, id u32, year u16, month, day, hour, attendees u16, 0, holder 8, nonce 8, room 24, …, CRC-32 |
//!
//! (all little-endian; the CRC-32 is over the first 60 bytes, in the last 4; start and end
//! are UTC minutes since 1970, the end not included). A booking record is the whole booking
//! as it stands: a cancel appends the booking again, cancelled. Replaying the records in order
//! rebuilds every booking.
//!
//! A booking with a title is two records in adjacent slots of one page: its title record,
//! then its booking record (title length > 0). Every write of such a booking (booked,
//! cancelled, carried into a new page) writes both, title first, so the booking record is
//! the commit point: a power cut between them leaves a title record no booking record claims,
//! which replay ignores. A booking record whose title record is not the intact one right before
//! it (only a flash that changed after it was verified) is kept without its title.
//!
//! Kind 1 is the record of the panels that booked whole hours (before spans and titles): it
//! still reads back, as `Span::hour(day, hour)` with no title, and is written again as kind 3
//! when a cancel or a page change rewrites the booking. A panel upgraded from that image keeps
//! its bookings and its boot epoch.
//!
//! # Read in place
//!
//! RAM holds no booking: every query (the clash check, at-most-once by (holder, nonce), a
//! holder's or a room's next booking, release) reads the booking records of the window on
//! flash, one 64-byte slot at a time, and a returned booking's title is read from the slot
//! before its record. The store's RAM is its flash driver and a few words (head page,
//! sequence, next id, epoch, capacity), whatever the count: a query costs one pass over the
//! window (its pages' slots; memory-mapped on a panel's flash), bounded by the region's size.
//!
//! Each booking has one intact record in the window: when a change writes its new record
//! (and read it back), the record it supersedes is killed by programming its first word to 0
//! (NOR flash clears bits without an erase: [`MultiwriteNorFlash`]), so it no longer reads as
//! intact. A power cut between the two leaves the old record whole next to the newest booking
//! record of the log; [`FlashStore::load`] kills it (only that booking can have two). The
//! images before this one never killed a record: a window with a page of theirs (their
//! headers lack the mark, see `record::header`) is cleaned at load, each record of their pages
//! that a later one of its booking supersedes killed, so their bookings read back as they left
//! them; then their pages are turned out of the window (new pages opened, the bookings carried
//! into them), once. The window is found by sequence numbers, not by a page's place in the
//! ring, so a region that grows (more pages, around the old ones) keeps the log it holds.
//!
//! # Append-only, wear spread, power-cut safe
//!
//! - A slot is written once after its page is erased; the only later write is the kill of a
//!   superseded record (above). A slot whose CRC fails (a write cut by a power loss, a killed
//!   record) is skipped for good.
//! - The live log is the `pages - 1` pages with the highest sequence numbers (the window).
//!   When the newest page has no room for the next record (two for a titled booking) the
//!   first page after it in the ring that is outside the window is erased, the bookings whose
//!   record is in the page that is about to leave the window are copied into it (with their
//!   titles), and only then its header is written: a page without a valid header is not part
//!   of the log, so a power cut while a page is opened loses nothing. Every page is erased in
//!   turn.
//! - A change is acknowledged (returned `Ok`) only after its records were written and read
//!   back equal. A failed write or read-back poisons the store: every later change fails with
//!   [`StoreError::Io`] until it is reopened (on a panel: a reboot). A failed kill poisons it
//!   too (the change it followed is durable and acknowledged); until the reopen kills it, the
//!   old record's place is remembered and skipped.
//! - At-most-once by (holder, nonce) and no two active bookings of a room that overlap, as
//!   `redmark_core::booking::MemStore` and the desktop's stores decide them, over the records
//!   on flash. The store holds up to [`FlashStore::capacity`] bookings: [`MAX_BOOKINGS`], or
//!   fewer if the region's pages could not hold that many titled bookings (two records each)
//!   with room to turn the ring. When it is full the oldest cancelled or released booking is
//!   forgotten (its record killed, its nonce with it) to make room; only that many active
//!   bookings make it full ([`StoreError::Full`]). The store has no clock: its owner forgets
//!   the bookings that have ended ([`FlashStore::forget_ended`], a panel a day after they end).
//!
//! # Boot counter
//!
//! [`FlashStore::boot`] appends a boot record with the epoch one past the highest on flash
//! (headers carry it across page erases) and returns it once it is durable: a panel binds
//! it into every requestState, so state from before a reset fails.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod log;
mod record;

use embedded_storage::nor_flash::MultiwriteNorFlash;
use redmark_core::booking::{
    due, end_step, Actor, Booking, BookingId, Commit, EndStep, Holder, Minute, NewBooking, Resized, Span,
    Status, Store, StoreError, Title,
};
use redmark_core::seal::Nonce;

use record::{boot_record, encode, title_record, Held};

pub use record::SLOT;

/// Most bookings (of any status) a store holds: four weeks of a busy room (nine a working day)
/// with room to spare. A panel's region is sized for it (docs/panel.md).
pub const MAX_BOOKINGS: u32 = 256;

/// Bookings on NOR flash, read in place (no booking in RAM), and the panel's boot counter.
pub struct FlashStore<F: MultiwriteNorFlash> {
    flash: F,
    base: u32,
    pages: u32,
    /// Most bookings held: [`MAX_BOOKINGS`] unless lowered ([`FlashStore::holding`]) or the
    /// region's pages hold fewer (set by [`FlashStore::load`]).
    capacity: u32,
    /// Newest page of the log, its sequence number and its next free slot.
    head: u32,
    seq: u32,
    next_slot: u32,
    next_id: BookingId,
    epoch: u32,
    poisoned: bool,
    /// A superseded record whose kill failed (page, slot): skipped until a reopen kills it.
    stale: Option<(u32, u32)>,
    /// Writes done (wrapping): see [`FlashStore::writes`].
    writes: u32,
}

impl<F: MultiwriteNorFlash> FlashStore<F> {
    /// The store on `pages` erase pages of `flash` from byte offset `base` (page aligned),
    /// not yet read: [`FlashStore::load`] it before use. (Separate from loading so a firmware
    /// can place the store in a static and load it there.)
    pub const fn new(flash: F, base: u32, pages: u32) -> Self {
        FlashStore {
            flash,
            base,
            pages,
            capacity: MAX_BOOKINGS,
            head: 0,
            seq: 0,
            next_slot: 0,
            next_id: 1,
            epoch: 0,
            poisoned: true,
            stale: None,
            writes: 0,
        }
    }

    /// The same store holding at most `bookings` bookings (fewer than [`MAX_BOOKINGS`]).
    pub const fn holding(mut self, bookings: u32) -> Self {
        if bookings < self.capacity {
            self.capacity = bookings;
        }
        self
    }

    /// [`FlashStore::new`] and [`FlashStore::load`].
    ///
    /// # Errors
    /// As [`FlashStore::load`].
    pub fn open(flash: F, base: u32, pages: u32) -> Result<Self, StoreError> {
        let mut s = Self::new(flash, base, pages);
        s.load()?;
        Ok(s)
    }

    /// Most bookings this store holds (after [`FlashStore::load`]).
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Reads the log (formatting blank or foreign flash, killing what a power cut left
    /// superseded); until it succeeds every change fails.
    ///
    /// # Errors
    /// [`StoreError::Io`] if the flash fails or the geometry is unusable (fewer than 3
    /// pages, pages of fewer than 4 slots, a write size that does not divide a record's first
    /// word, or a window too small to turn the ring with one titled booking in it).
    pub fn load(&mut self) -> Result<(), StoreError> {
        let pages = self.pages;
        let geometry_ok = pages >= 3
            && pages <= u32::from(u16::MAX)
            && F::ERASE_SIZE.is_multiple_of(SLOT)
            && Self::SLOTS >= 4
            && Self::SLOTS <= u32::from(u16::MAX)
            && record::KILLED.len().is_multiple_of(F::WRITE_SIZE)
            && SLOT.is_multiple_of(F::READ_SIZE)
            && (self.base as usize).is_multiple_of(F::ERASE_SIZE);
        if !geometry_ok {
            return Err(StoreError::Io);
        }
        // Room to rotate: if every page of the window had fewer than two free slots, the
        // live records (two a titled booking) would fill (pages - 1) * (SLOTS - 2) slots.
        let turns = (u64::from(pages - 1) * u64::from(Self::SLOTS - 2) - 1) / 2;
        self.capacity = self.capacity.min(turns.min(u64::from(u32::MAX)) as u32);
        if self.capacity == 0 {
            return Err(StoreError::Io);
        }
        self.replay()
    }

    /// Counts a boot: appends the epoch one past the highest recorded and returns it once it
    /// is durable. Call once per boot, before serving.
    ///
    /// # Errors
    /// [`StoreError::Io`] if it could not be written and verified.
    pub fn boot(&mut self) -> Result<u32, StoreError> {
        let epoch = self.epoch.checked_add(1).ok_or(StoreError::Full)?;
        self.append(None, &boot_record(epoch))?;
        self.epoch = epoch;
        Ok(epoch)
    }

    /// How many records it has written or killed (wrapping): a reader that saw the same count
    /// before would read the same bookings now (the door's face reads the log again only when
    /// this or the minute changed: every query is a pass over flash).
    pub fn writes(&self) -> u32 {
        self.writes
    }

    /// The current boot epoch (0 before the first [`FlashStore::boot`] on blank flash).
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// Gives the flash back (tests reopen it to model a reboot).
    pub fn into_flash(self) -> F {
        self.flash
    }

    /// As [`Store::release_due`], for the bookings of `room` only: a door panel releases its
    /// own room's no-shows (check-in is at its door; a room without one has nobody to check in).
    pub fn release_due_in(
        &mut self,
        room: &str,
        now: Minute,
        window: u16,
    ) -> Result<Option<Booking>, StoreError> {
        self.release_first(|b| b.room == room && due(&b.booking(Title::new()), now, window))
    }

    /// Forgets up to `most` bookings that had ended by `by`, the lowest ids first (their
    /// records killed, their nonces with them): a panel's past meetings leave room for new
    /// ones, which only active bookings fill ([`StoreError::Full`]). How many it forgot.
    pub fn forget_ended(&mut self, by: Minute, most: u32) -> Result<u32, StoreError> {
        if self.poisoned {
            return Err(StoreError::Io);
        }
        let mut forgot = 0;
        while forgot < most {
            let Some(h) = self.least(&|h| h.span.end <= by, &|h, b| h.id < b.id)? else { break };
            self.kill(u32::from(h.page), u32::from(h.slot))?;
            forgot += 1;
        }
        Ok(forgot)
    }

    /// Releases the due booking (`is_due`) with the lowest id, once durable.
    fn release_first(&mut self, is_due: impl Fn(&Held) -> bool) -> Result<Option<Booking>, StoreError> {
        let Some(h) = self.least(&is_due, &|h, b| h.id < b.id)? else { return Ok(None) };
        self.rewrite(h, |h| h.status = Status::Released).map(Some)
    }

    /// The booking `h` (its record as found) changed by `change`, in a new record (its title
    /// record again before it), the old one killed; returned once the new one is durable.
    fn rewrite(&mut self, h: Held, change: impl FnOnce(&mut Held)) -> Result<Booking, StoreError> {
        let need = 1 + u32::from(h.title_len > 0);
        // Opening a page may have carried the record into it: where it is now.
        let h =
            if self.reserve(need)? { self.find_by(&|x| x.id == h.id)?.ok_or(StoreError::Io)? } else { h };
        let title = self.title_record_of(&h)?;
        let mut new = h.clone();
        change(&mut new);
        let slot = self.append(title.as_ref().map(|(r, _)| r), &encode(&new))?;
        (new.page, new.slot) = (self.head as u16, slot as u16);
        // Durable from here; a failed kill poisons the store and the reopen finishes it.
        let _ = self.kill(u32::from(h.page), u32::from(h.slot));
        Ok(new.booking(title.map(|(_, t)| t).unwrap_or_default()))
    }
}

impl<F: MultiwriteNorFlash> Store for FlashStore<F> {
    /// Keeps no trail (docs/panel.md): `_by` is not stored.
    async fn commit_by(&mut self, new: &NewBooking, _by: &Actor) -> Result<Commit, StoreError> {
        // One pass: the same operation, the earliest active booking of the room that overlaps
        // (what `occupant` answers), how many bookings there are, the oldest one to forget.
        let (mut replay, mut clash, mut forget) = (None::<Held>, None::<Held>, None::<Held>);
        let mut count = 0u32;
        self.each(&mut |h, _| {
            count += 1;
            if replay.is_none() && h.nonce == new.nonce && h.holder == new.holder {
                replay = Some(h.clone());
            }
            let overlaps = h.is_active_in(&new.room) && h.span.overlaps(&new.span);
            if overlaps && clash.as_ref().is_none_or(|c| h.span.start < c.span.start) {
                clash = Some(h.clone());
            }
            if h.status != Status::Active && forget.as_ref().is_none_or(|f| h.id < f.id) {
                forget = Some(h.clone());
            }
        })?;
        if let Some(h) = replay {
            return Ok(Commit::Replayed(self.booking(&h)?));
        }
        if let Some(h) = clash {
            return Ok(Commit::Taken(self.booking(&h)?));
        }
        if self.poisoned {
            return Err(StoreError::Io);
        }
        if count >= self.capacity {
            let Some(old) = forget else { return Err(StoreError::Full) };
            self.kill(u32::from(old.page), u32::from(old.slot))?;
        }
        let h = Held::new(self.next_id, new);
        let title = (h.title_len > 0).then(|| title_record(h.id, &new.title));
        self.append(title.as_ref(), &encode(&h))?;
        self.next_id += 1;
        Ok(Commit::Created(Booking {
            id: h.id,
            new: new.clone(),
            status: Status::Active,
            checked_in: false,
            series: None,
        }))
    }

    async fn get(&mut self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        let h = self.find_by(&|b| b.id == id)?;
        self.found(h)
    }

    async fn made_by(&mut self, holder: &Holder, nonce: &Nonce) -> Result<Option<Booking>, StoreError> {
        let h = self.find_by(&|b| b.nonce == *nonce && b.holder == *holder)?;
        self.found(h)
    }

    async fn next_held(
        &mut self,
        holder: &Holder,
        start: Minute,
        room: &str,
    ) -> Result<Option<Booking>, StoreError> {
        // As `redmark_core::booking::next_held_in`, over the log.
        let after = |b: &Held| (b.span.start, b.room.as_str()) > (start, room);
        let h = self
            .least(&|b| b.status != Status::Cancelled && b.holder == *holder && after(b), &|h, b| {
                (h.span.start, h.room.as_str(), h.id) < (b.span.start, b.room.as_str(), b.id)
            })?;
        self.found(h)
    }

    async fn next_in_room(&mut self, room: &str, from: Minute) -> Result<Option<Booking>, StoreError> {
        // As `redmark_core::booking::next_in_room_in`, over the log.
        let h =
            self.least(&|b| b.is_active_in(room) && b.span.end > from, &|h, b| h.span.start < b.span.start)?;
        self.found(h)
    }

    // No trail here (docs/panel.md): `commit_by` and `trail` are the trait's defaults.
    async fn cancel(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        let theirs = |b: &Held| b.id == id && (by.operator || b.holder == by.holder);
        let Some(h) = self.find_by(&theirs)? else { return Ok(None) };
        if h.status == Status::Cancelled {
            return self.booking(&h).map(Some);
        }
        self.rewrite(h, |h| h.status = Status::Cancelled).map(Some)
    }

    async fn set_end(
        &mut self,
        id: BookingId,
        by: &Actor,
        from: Minute,
        to: Minute,
    ) -> Result<Option<Resized>, StoreError> {
        let Some(h) = self.find_by(&|b| b.id == id && b.holder == by.holder)? else { return Ok(None) };
        let span = match end_step(&self.booking(&h)?, from, to) {
            EndStep::Move(span) => span,
            EndStep::Answer(done) => return Ok(Some(done)),
        };
        // The booking ends at `from`, so only another one can hold the time added.
        if let Some(added) = Span::new(from, to) {
            if let Some(other) = self.next_in_room(&h.room.clone(), from).await? {
                if other.new.span.overlaps(&added) {
                    return Ok(Some(Resized::Taken(other)));
                }
            }
        }
        self.rewrite(h, |h| h.span = span).map(|b| Some(Resized::Moved(b)))
    }

    /// Keeps no trail (docs/panel.md): `by` names only the holder.
    async fn check_in(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        let Some(h) = self.find_by(&|b| b.id == id && b.holder == by.holder)? else { return Ok(None) };
        if h.status != Status::Active || h.checked_in {
            return self.booking(&h).map(Some);
        }
        self.rewrite(h, |h| h.checked_in = true).map(Some)
    }

    /// Keeps no trail (docs/panel.md): `_by` is not stored.
    async fn release_due(
        &mut self,
        now: Minute,
        window: u16,
        _by: &Actor,
    ) -> Result<Option<Booking>, StoreError> {
        self.release_first(|b| due(&b.booking(Title::new()), now, window))
    }
}

#[cfg(test)]
mod tests;
