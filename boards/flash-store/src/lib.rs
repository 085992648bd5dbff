//! The door panel's booking [`Store`] on NOR flash, through `embedded-storage`'s blocking
//! [`NorFlash`] traits, and its boot counter.
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
//! # Titles stay on flash
//!
//! The RAM mirror keeps every field of a booking but its title (up to 48 bytes, which would
//! nearly double an entry: 1.6 KiB more for a panel's 32 bookings, on chips with 16 KiB of
//! RAM): it keeps the title's length and the slot of the booking record, and the title is read
//! back from the slot before it whenever a booking is returned (one 64-byte read). A mirror
//! entry stays 64 bytes on the panels, as before titles.
//!
//! # Append-only, wear spread, power-cut safe
//!
//! - A slot is written once after its page is erased, never rewritten. A slot whose CRC fails
//!   (a write cut by a power loss) is skipped for good; so is a record beyond it.
//! - The live log is the `pages - 1` pages with the highest sequence numbers (the window).
//!   When the newest page has no room for the next record (two for a titled booking) the next
//!   page of the ring is erased, the bookings whose latest record is in the page that is about
//!   to leave the window are copied into it (with their titles), and only then its header is
//!   written: a page without a valid header is not part of the log, so a power cut while a
//!   page is opened loses nothing. Every page is erased in turn.
//! - A change is acknowledged (returned `Ok`) only after its records were written and read
//!   back equal. A failed write or read-back poisons the store: every later change fails with
//!   [`StoreError::Io`] until it is reopened (on a panel: a reboot), so RAM never disagrees
//!   with what a reboot would find.
//! - At-most-once by (holder, nonce) and no two active bookings of a room that overlap, as
//!   `redmark_core::booking::MemStore` and the desktop's stores decide them, over a RAM mirror
//!   of up to `N` bookings rebuilt from flash at [`FlashStore::open`]: the clash check is a scan
//!   of at most `N` (32 on a panel) entries in RAM, its cost bounded by `N`, not by the
//!   log. When the mirror is full the oldest cancelled booking is forgotten to make room (its
//!   nonce with it); only `N` active bookings make the store full.
//!
//! # Boot counter
//!
//! [`FlashStore::boot`] appends a boot record with the epoch one past the highest on flash
//! (headers carry it across page erases) and returns it once it is durable: a panel binds
//! it into every requestState, so state from before a reset fails.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod record;

use embedded_storage::nor_flash::NorFlash;
use heapless::Vec;
use redmark_core::booking::{
    due, end_step, Actor, Booking, BookingId, Commit, EndStep, Holder, Minute, NewBooking, Resized, Span,
    Status, Store, StoreError, Title,
};
use redmark_core::seal::Nonce;

use record::{
    boot_record, decode, encode, header, intact, title_of, title_record, u32_at, Held, Rec, KIND_BOOT,
    KIND_TITLE, MAGIC,
};

pub use record::SLOT;

/// Bookings on NOR flash, mirrored in RAM (up to `N`, titles left on flash), and the panel's
/// boot counter.
pub struct FlashStore<F: NorFlash, const N: usize> {
    flash: F,
    base: u32,
    pages: u32,
    /// The bookings, each with where its latest record is.
    held: Vec<Held, N>,
    /// Newest page of the log, its sequence number and its next free slot.
    head: u32,
    seq: u32,
    next_slot: u32,
    next_id: BookingId,
    epoch: u32,
    poisoned: bool,
}

impl<F: NorFlash, const N: usize> FlashStore<F, N> {
    const SLOTS: u32 = (F::ERASE_SIZE / SLOT) as u32;

    /// The store on `pages` erase pages of `flash` from byte offset `base` (page aligned),
    /// not yet read: [`FlashStore::load`] it before use. (Separate from loading so a firmware
    /// can place the store in a static and load it there, without a copy on its stack.)
    pub const fn new(flash: F, base: u32, pages: u32) -> Self {
        FlashStore {
            flash,
            base,
            pages,
            held: Vec::new(),
            head: 0,
            seq: 0,
            next_slot: 0,
            next_id: 1,
            epoch: 0,
            poisoned: true,
        }
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

    /// Rebuilds the bookings from the log (formatting blank or foreign flash); until it
    /// succeeds every change fails.
    ///
    /// # Errors
    /// [`StoreError::Io`] if the flash fails or the geometry is unusable (fewer than 3
    /// pages, pages of fewer than 4 slots, a write size that does not divide a slot, or a
    /// mirror of `N` titled bookings (two records each) that the `pages - 1` pages of the
    /// window could not hold with two slots to spare in one of them).
    pub fn load(&mut self) -> Result<(), StoreError> {
        let pages = self.pages;
        let geometry_ok = pages >= 3
            && pages <= u32::from(u16::MAX)
            && F::ERASE_SIZE.is_multiple_of(SLOT)
            && Self::SLOTS >= 4
            && Self::SLOTS <= u32::from(u16::MAX)
            && SLOT.is_multiple_of(F::WRITE_SIZE)
            && SLOT.is_multiple_of(F::READ_SIZE)
            && (self.base as usize).is_multiple_of(F::ERASE_SIZE)
            // Room to rotate: if every page of the window had fewer than two free slots, the
            // live records would fill (pages - 1) * (SLOTS - 2) slots (see open_next_page).
            && 2 * (N as u64) < u64::from(pages - 1) * u64::from(Self::SLOTS - 2);
        if !geometry_ok {
            return Err(StoreError::Io);
        }
        let s = self;
        s.held.clear();
        s.next_slot = Self::SLOTS;
        s.next_id = 1;
        s.epoch = 0;
        s.poisoned = true;
        // The newest page: the valid header with the highest sequence number.
        let mut newest: Option<(u32, u32)> = None;
        for p in 0..pages {
            if let Some(seq) = s.page_seq(p)? {
                if newest.is_none_or(|(_, q)| seq > q) {
                    newest = Some((p, seq));
                }
            }
        }
        let Some((head, seq)) = newest else {
            // Blank: the first page, sequence 1.
            s.head = pages - 1;
            s.seq = 0;
            s.open_next_page()?;
            s.poisoned = false;
            return Ok(());
        };
        // Replay the window, oldest page first.
        let window = (pages - 1).min(seq);
        for back in (0..window).rev() {
            let p = (head + pages - back) % pages;
            if s.page_seq(p)? != Some(seq - back) {
                continue;
            }
            let h = s.read(p, 0)?;
            s.next_id = s.next_id.max(u32_at(&h, 8));
            s.epoch = s.epoch.max(u32_at(&h, 12));
            let mut used = 1;
            // The intact title record in the slot before: (slot, booking id, length).
            let mut title: Option<(u32, BookingId, u8)> = None;
            for slot in 1..Self::SLOTS {
                let r = s.read(p, slot)?;
                if r.iter().all(|&b| b == 0xFF) {
                    continue;
                }
                used = slot + 1;
                if !intact(&r) {
                    continue;
                }
                if r[0] == KIND_TITLE {
                    title = Some((slot, u32_at(&r, 4), r[1]));
                } else {
                    s.apply(&r, p, slot, title);
                }
            }
            if back == 0 {
                s.next_slot = used;
            }
        }
        s.head = head;
        s.seq = seq;
        s.poisoned = false;
        Ok(())
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

    /// The current boot epoch (0 before the first [`FlashStore::boot`] on blank flash).
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// Gives the flash back (tests reopen it to model a reboot).
    pub fn into_flash(self) -> F {
        self.flash
    }

    fn addr(&self, page: u32, slot: u32) -> u32 {
        self.base + page * F::ERASE_SIZE as u32 + slot * SLOT as u32
    }

    fn read(&mut self, page: u32, slot: u32) -> Result<Rec, StoreError> {
        let mut r = [0; SLOT];
        let at = self.addr(page, slot);
        self.flash.read(at, &mut r).map_err(|_| StoreError::Io)?;
        Ok(r)
    }

    fn page_seq(&mut self, page: u32) -> Result<Option<u32>, StoreError> {
        let h = self.read(page, 0)?;
        Ok((h[..4] == MAGIC && intact(&h)).then(|| u32_at(&h, 4)))
    }

    /// Applies one intact record found at (`page`, `slot`) while replaying; `title` is the
    /// intact title record just before it, if any.
    fn apply(&mut self, r: &Rec, page: u32, slot: u32, title: Option<(u32, BookingId, u8)>) {
        if r[0] == KIND_BOOT {
            self.epoch = self.epoch.max(u32_at(r, 4));
            return;
        }
        let Some(mut b) = decode(r) else { return };
        if b.title_len > 0 && title != Some((slot - 1, b.id, b.title_len)) {
            // Its title record is not where it was written: keep the booking without it.
            b.title_len = 0;
        }
        (b.page, b.slot) = (page as u16, slot as u16);
        self.next_id = self.next_id.max(b.id.saturating_add(1));
        if let Some(e) = self.held.iter_mut().find(|e| e.id == b.id) {
            *e = b;
        } else if self.make_room() {
            let _ = self.held.push(b);
        }
    }

    /// Room for one more booking in the mirror: forgets the oldest cancelled one if full.
    fn make_room(&mut self) -> bool {
        if !self.held.is_full() {
            return true;
        }
        let oldest = self
            .held
            .iter()
            .enumerate()
            .filter(|(_, b)| b.status != Status::Active)
            .min_by_key(|(_, b)| b.id)
            .map(|(i, _)| i);
        match oldest {
            Some(i) => {
                self.held.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// The title record of the `i`th booking (read from the slot before its booking record),
    /// `None` if it has no title.
    fn title_record_of(&mut self, i: usize) -> Result<Option<(Rec, Title)>, StoreError> {
        let h = &self.held[i];
        if h.title_len == 0 {
            return Ok(None);
        }
        let (id, len, page, slot) = (h.id, h.title_len, u32::from(h.page), u32::from(h.slot));
        let r = self.read(page, slot - 1)?;
        // Checked at load and read back when written: only a flash that changed fails here.
        let title = title_of(&r, id, len).ok_or(StoreError::Io)?;
        Ok(Some((r, title)))
    }

    /// The `i`th booking, its title read back from flash.
    fn booking(&mut self, i: usize) -> Result<Booking, StoreError> {
        let title = self.title_record_of(i)?.map(|(_, t)| t).unwrap_or_default();
        Ok(self.held[i].booking(title))
    }

    /// The `i`th booking if there is one, its title read back.
    fn found(&mut self, i: Option<usize>) -> Result<Option<Booking>, StoreError> {
        i.map(|i| self.booking(i)).transpose()
    }

    /// Writes `r` into the next free slot of `page` (not moving the log) and reads it back.
    fn put(&mut self, page: u32, slot: u32, r: &Rec) -> Result<(), StoreError> {
        let at = self.addr(page, slot);
        let written = self.flash.write(at, r).is_ok() && self.read(page, slot).is_ok_and(|b| b == *r);
        if written {
            Ok(())
        } else {
            self.poisoned = true;
            Err(StoreError::Io)
        }
    }

    /// Appends a record to the log, after its title record if it has one (both in one page);
    /// `Ok` with the record's slot once both are written and read back.
    fn append(&mut self, title: Option<&Rec>, r: &Rec) -> Result<u32, StoreError> {
        if self.poisoned {
            return Err(StoreError::Io);
        }
        let need = 1 + u32::from(title.is_some());
        while self.next_slot + need > Self::SLOTS {
            self.open_next_page()?;
        }
        let slot = self.next_slot + need - 1;
        self.next_slot += need;
        if let Some(t) = title {
            self.put(self.head, slot - 1, t)?;
        }
        self.put(self.head, slot, r)?;
        Ok(slot)
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

    /// Releases the first booking `is_due` finds, once durable.
    fn release_first(&mut self, is_due: impl Fn(&Held) -> bool) -> Result<Option<Booking>, StoreError> {
        let Some(i) = self.held.iter().position(is_due) else { return Ok(None) };
        self.rewrite(i, |h| h.status = Status::Released).map(Some)
    }

    /// The `i`th booking changed by `change`, in a new record (its title record again before
    /// it); returned once durable.
    fn rewrite(&mut self, i: usize, change: impl FnOnce(&mut Held)) -> Result<Booking, StoreError> {
        let title = self.title_record_of(i)?;
        let mut h = self.held[i].clone();
        change(&mut h);
        let slot = self.append(title.as_ref().map(|(r, _)| r), &encode(&h))?;
        (h.page, h.slot) = (self.head as u16, slot as u16);
        let b = h.booking(title.map(|(_, t)| t).unwrap_or_default());
        self.held[i] = h;
        Ok(b)
    }

    /// Erases the next page of the ring, copies into it the bookings whose latest record is
    /// in the page leaving the window (each after its title record), then writes its header:
    /// from then on it is the head.
    fn open_next_page(&mut self) -> Result<(), StoreError> {
        let fail = |s: &mut Self| {
            s.poisoned = true;
            StoreError::Io
        };
        let page = (self.head + 1) % self.pages;
        let leaving = (page + 1) % self.pages;
        let from = self.addr(page, 0);
        if self.flash.erase(from, from + F::ERASE_SIZE as u32).is_err() {
            return Err(fail(self));
        }
        let mut slot = 1;
        for i in 0..self.held.len() {
            if u32::from(self.held[i].page) != leaving {
                continue;
            }
            let Ok(title) = self.title_record_of(i) else { return Err(fail(self)) };
            if slot + 1 + u32::from(title.is_some()) > Self::SLOTS {
                // More live records than a page holds (cannot happen: they come from one page).
                return Err(fail(self));
            }
            if let Some((t, _)) = title {
                self.put(page, slot, &t)?;
                slot += 1;
            }
            let r = encode(&self.held[i]);
            self.put(page, slot, &r)?;
            (self.held[i].page, self.held[i].slot) = (page as u16, slot as u16);
            slot += 1;
        }
        let h = header(self.seq + 1, self.next_id, self.epoch);
        self.put(page, 0, &h)?;
        self.head = page;
        self.seq += 1;
        self.next_slot = slot;
        Ok(())
    }
}

impl<F: NorFlash, const N: usize> Store for FlashStore<F, N> {
    /// Keeps no trail (docs/panel.md): `_by` is not stored.
    async fn commit_by(&mut self, new: &NewBooking, _by: &Actor) -> Result<Commit, StoreError> {
        if let Some(b) = self.made_by(&new.holder, &new.nonce).await? {
            return Ok(Commit::Replayed(b));
        }
        // The earliest active booking of the room that overlaps (what `occupant` answers).
        let clash = self
            .held
            .iter()
            .enumerate()
            .filter(|(_, b)| b.is_active_in(&new.room) && b.span.overlaps(&new.span))
            .min_by_key(|(_, b)| b.span.start)
            .map(|(i, _)| i);
        if let Some(b) = self.found(clash)? {
            return Ok(Commit::Taken(b));
        }
        if self.poisoned {
            return Err(StoreError::Io);
        }
        if !self.make_room() {
            return Err(StoreError::Full);
        }
        let mut h = Held::new(self.next_id, new);
        let title = (h.title_len > 0).then(|| title_record(h.id, &new.title));
        let slot = self.append(title.as_ref(), &encode(&h))?;
        self.next_id += 1;
        (h.page, h.slot) = (self.head as u16, slot as u16);
        // Room was made above; the push cannot fail.
        let _ = self.held.push(h);
        Ok(Commit::Created(Booking {
            id: self.next_id - 1,
            new: new.clone(),
            status: Status::Active,
            checked_in: false,
            series: None,
        }))
    }

    async fn get(&mut self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        let i = self.held.iter().position(|b| b.id == id);
        self.found(i)
    }

    async fn made_by(&mut self, holder: &Holder, nonce: &Nonce) -> Result<Option<Booking>, StoreError> {
        let i = self.held.iter().position(|b| b.nonce == *nonce && b.holder == *holder);
        self.found(i)
    }

    async fn next_held(
        &mut self,
        holder: &Holder,
        start: Minute,
        room: &str,
    ) -> Result<Option<Booking>, StoreError> {
        // As `redmark_core::booking::next_held_in`, over the mirror.
        let after = (start, room);
        let i = self
            .held
            .iter()
            .enumerate()
            .filter(|(_, b)| b.status != Status::Cancelled && b.holder == *holder)
            .filter(|(_, b)| (b.span.start, b.room.as_str()) > after)
            .min_by_key(|(_, b)| (b.span.start, b.room.as_str()))
            .map(|(i, _)| i);
        self.found(i)
    }

    async fn next_in_room(&mut self, room: &str, from: Minute) -> Result<Option<Booking>, StoreError> {
        // As `redmark_core::booking::next_in_room_in`, over the mirror.
        let i = self
            .held
            .iter()
            .enumerate()
            .filter(|(_, b)| b.is_active_in(room) && b.span.end > from)
            .min_by_key(|(_, b)| b.span.start)
            .map(|(i, _)| i);
        self.found(i)
    }

    // No trail here (docs/panel.md): `commit_by` and `trail` are the trait's defaults.
    async fn cancel(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        let theirs = |b: &Held| b.id == id && (by.operator || b.holder == by.holder);
        let Some(i) = self.held.iter().position(theirs) else { return Ok(None) };
        if self.held[i].status == Status::Cancelled {
            return self.booking(i).map(Some);
        }
        let title = self.title_record_of(i)?;
        let mut h = self.held[i].clone();
        h.status = Status::Cancelled;
        let slot = self.append(title.as_ref().map(|(r, _)| r), &encode(&h))?;
        (h.page, h.slot) = (self.head as u16, slot as u16);
        let b = h.booking(title.map(|(_, t)| t).unwrap_or_default());
        self.held[i] = h;
        Ok(Some(b))
    }
    async fn set_end(
        &mut self,
        id: BookingId,
        by: &Actor,
        from: Minute,
        to: Minute,
    ) -> Result<Option<Resized>, StoreError> {
        let theirs = |b: &Held| b.id == id && b.holder == by.holder;
        let Some(i) = self.held.iter().position(theirs) else { return Ok(None) };
        let span = match end_step(&self.booking(i)?, from, to) {
            EndStep::Move(span) => span,
            EndStep::Answer(done) => return Ok(Some(done)),
        };
        // The booking ends at `from`, so only another one can hold the time added.
        if let Some(added) = Span::new(from, to) {
            if let Some(other) = self.next_in_room(&self.held[i].room.clone(), from).await? {
                if other.new.span.overlaps(&added) {
                    return Ok(Some(Resized::Taken(other)));
                }
            }
        }
        // The new end in a new record of the booking (its title record again before it).
        let title = self.title_record_of(i)?;
        let mut h = self.held[i].clone();
        h.span = span;
        let slot = self.append(title.as_ref().map(|(r, _)| r), &encode(&h))?;
        (h.page, h.slot) = (self.head as u16, slot as u16);
        let b = h.booking(title.map(|(_, t)| t).unwrap_or_default());
        self.held[i] = h;
        Ok(Some(Resized::Moved(b)))
    }

    /// Keeps no trail (docs/panel.md): `by` names only the holder.
    async fn check_in(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        let theirs = |b: &Held| b.id == id && b.holder == by.holder;
        let Some(i) = self.held.iter().position(theirs) else { return Ok(None) };
        if self.held[i].status != Status::Active || self.held[i].checked_in {
            return self.booking(i).map(Some);
        }
        self.rewrite(i, |h| h.checked_in = true).map(Some)
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
