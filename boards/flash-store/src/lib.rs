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
//! | booking | kind 1, status, room length, 0, id u32, year u16, month, day, hour, attendees u16, 0, holder 8, nonce 8, room 24, …, CRC-32 |
//! | boot | kind 2, 0, 0, 0, epoch u32, …, CRC-32 |
//!
//! (all little-endian; the CRC-32 is over the first 60 bytes, in the last 4). A booking record
//! is the whole booking as it stands: a cancel appends the booking again, cancelled. Replaying
//! the records in order rebuilds every booking.
//!
//! # Append-only, wear spread, power-cut safe
//!
//! - A slot is written once after its page is erased, never rewritten. A slot whose CRC fails
//!   (a write cut by a power loss) is skipped for good; so is a record beyond it.
//! - The live log is the `pages - 1` pages with the highest sequence numbers (the window).
//!   When the newest page is full the next page of the ring is erased, the bookings whose
//!   latest record is in the page that is about to leave the window are copied into it, and
//!   only then its header is written: a page without a valid header is not part of the log,
//!   so a power cut while a page is opened loses nothing. Every page is erased in turn.
//! - A change is acknowledged (returned `Ok`) only after its record was written and read
//!   back equal. A failed write or read-back poisons the store: every later change fails with
//!   [`StoreError::Io`] until it is reopened (on a panel: a reboot), so RAM never disagrees
//!   with what a reboot would find.
//! - At-most-once by (holder, nonce) and one active booking per (room, slot), as
//!   `redmark_core::booking::MemStore` and the desktop's redb store decide them, over a RAM
//!   mirror of up to `N` bookings rebuilt from flash at [`FlashStore::open`]. When the mirror is
//!   full the oldest cancelled booking is forgotten to make room (its nonce with it); only
//!   `N` active bookings make the store full.
//!
//! # Boot counter
//!
//! [`FlashStore::boot`] appends a boot record with the epoch one past the highest on flash
//! (headers carry it across page erases) and returns it once it is durable: a panel binds
//! it into every requestState, so state from before a reset fails.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use embedded_storage::nor_flash::NorFlash;
use heapless::Vec;
use redmark_core::booking::{
    next_held_in, next_in_room_in, Booking, BookingId, Commit, Day, Holder, NewBooking, RoomId, Slot, Status,
    Store, StoreError,
};
use redmark_core::limits::MAX_ROOM_ID;
use redmark_core::seal::Nonce;

/// Bytes per slot (one record).
pub const SLOT: usize = 64;
const MAGIC: [u8; 4] = *b"RMKP";
const KIND_BOOKING: u8 = 1;
const KIND_BOOT: u8 = 2;
const _: () = assert!(8 + 8 + 8 + 8 + MAX_ROOM_ID + 4 <= SLOT);

type Rec = [u8; SLOT];

/// CRC-32 (IEEE), bitwise: a few dozen bytes of code, no table.
fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = (c >> 1) ^ (0xEDB8_8320 & (c & 1).wrapping_neg());
        }
    }
    !c
}

fn seal(r: &mut Rec) {
    let c = crc32(&r[..SLOT - 4]);
    r[SLOT - 4..].copy_from_slice(&c.to_le_bytes());
}

fn intact(r: &Rec) -> bool {
    crc32(&r[..SLOT - 4]).to_le_bytes() == r[SLOT - 4..]
}

fn u32_at(r: &Rec, at: usize) -> u32 {
    u32::from_le_bytes([r[at], r[at + 1], r[at + 2], r[at + 3]])
}

fn header(seq: u32, next_id: u32, epoch: u32) -> Rec {
    let mut r = [0; SLOT];
    r[..4].copy_from_slice(&MAGIC);
    r[4..8].copy_from_slice(&seq.to_le_bytes());
    r[8..12].copy_from_slice(&next_id.to_le_bytes());
    r[12..16].copy_from_slice(&epoch.to_le_bytes());
    seal(&mut r);
    r
}

fn boot_record(epoch: u32) -> Rec {
    let mut r = [0; SLOT];
    r[0] = KIND_BOOT;
    r[4..8].copy_from_slice(&epoch.to_le_bytes());
    seal(&mut r);
    r
}

fn encode(b: &Booking) -> Rec {
    let n = &b.new;
    let mut r = [0; SLOT];
    r[0] = KIND_BOOKING;
    r[1] = match b.status {
        Status::Active => 0,
        Status::Cancelled => 1,
    };
    r[2] = n.room.len() as u8;
    r[4..8].copy_from_slice(&b.id.to_le_bytes());
    r[8..10].copy_from_slice(&n.slot.day.year.to_le_bytes());
    r[10..13].copy_from_slice(&[n.slot.day.month, n.slot.day.day, n.slot.hour]);
    r[13..15].copy_from_slice(&n.attendees.to_le_bytes());
    r[16..24].copy_from_slice(&n.holder);
    r[24..32].copy_from_slice(&n.nonce);
    r[32..32 + n.room.len()].copy_from_slice(n.room.as_bytes());
    seal(&mut r);
    r
}

fn decode(r: &Rec) -> Option<Booking> {
    let status = match r[1] {
        0 => Status::Active,
        1 => Status::Cancelled,
        _ => return None,
    };
    let len = usize::from(r[2]);
    let room = core::str::from_utf8(r.get(32..32 + len).filter(|_| len <= MAX_ROOM_ID)?).ok()?;
    let mut holder = [0; 8];
    holder.copy_from_slice(&r[16..24]);
    let mut nonce = [0; 8];
    nonce.copy_from_slice(&r[24..32]);
    Some(Booking {
        id: u32_at(r, 4),
        new: NewBooking {
            room: RoomId::try_from(room).ok()?,
            slot: Slot {
                day: Day { year: u16::from_le_bytes([r[8], r[9]]), month: r[10], day: r[11] },
                hour: r[12],
            },
            attendees: u16::from_le_bytes([r[13], r[14]]),
            holder,
            nonce,
        },
        status,
    })
}

/// Bookings on NOR flash, mirrored in RAM (up to `N`), and the panel's boot counter.
pub struct FlashStore<F: NorFlash, const N: usize> {
    flash: F,
    base: u32,
    pages: u32,
    /// The bookings, with the page holding each one's latest record.
    bookings: Vec<(Booking, u32), N>,
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
            bookings: Vec::new(),
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
    /// mirror of `N` bookings that the `pages - 1` pages of the window could not hold).
    pub fn load(&mut self) -> Result<(), StoreError> {
        let pages = self.pages;
        let geometry_ok = pages >= 3
            && F::ERASE_SIZE.is_multiple_of(SLOT)
            && Self::SLOTS >= 4
            && SLOT.is_multiple_of(F::WRITE_SIZE)
            && SLOT.is_multiple_of(F::READ_SIZE)
            && (self.base as usize).is_multiple_of(F::ERASE_SIZE)
            // Room to rotate: fewer live records than the window holds (see open_next_page).
            && (N as u32) < (pages - 1) * (Self::SLOTS - 1);
        if !geometry_ok {
            return Err(StoreError::Io);
        }
        let s = self;
        s.bookings.clear();
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
            for slot in 1..Self::SLOTS {
                let r = s.read(p, slot)?;
                if r.iter().all(|&b| b == 0xFF) {
                    continue;
                }
                used = slot + 1;
                if intact(&r) {
                    s.apply(&r, p);
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
        self.append(&boot_record(epoch))?;
        self.epoch = epoch;
        Ok(epoch)
    }

    /// The current boot epoch (0 before the first [`FlashStore::boot`] on blank flash).
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// Every booking held, in no particular order.
    pub fn bookings(&self) -> impl Iterator<Item = &Booking> {
        self.bookings.iter().map(|(b, _)| b)
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

    /// Applies one intact record found in `page` while replaying.
    fn apply(&mut self, r: &Rec, page: u32) {
        match r[0] {
            KIND_BOOT => self.epoch = self.epoch.max(u32_at(r, 4)),
            KIND_BOOKING => {
                let Some(b) = decode(r) else { return };
                self.next_id = self.next_id.max(b.id.saturating_add(1));
                if let Some(e) = self.bookings.iter_mut().find(|(e, _)| e.id == b.id) {
                    *e = (b, page);
                } else if self.make_room() {
                    let _ = self.bookings.push((b, page));
                }
            }
            _ => {}
        }
    }

    /// Room for one more booking in the mirror: forgets the oldest cancelled one if full.
    fn make_room(&mut self) -> bool {
        if !self.bookings.is_full() {
            return true;
        }
        let oldest = self
            .bookings
            .iter()
            .enumerate()
            .filter(|(_, (b, _))| b.status == Status::Cancelled)
            .min_by_key(|(_, (b, _))| b.id)
            .map(|(i, _)| i);
        match oldest {
            Some(i) => {
                self.bookings.swap_remove(i);
                true
            }
            None => false,
        }
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

    /// Appends a record to the log; `Ok` once it is written and read back.
    fn append(&mut self, r: &Rec) -> Result<(), StoreError> {
        if self.poisoned {
            return Err(StoreError::Io);
        }
        while self.next_slot >= Self::SLOTS {
            self.open_next_page()?;
        }
        let slot = self.next_slot;
        self.next_slot += 1;
        self.put(self.head, slot, r)
    }

    /// Erases the next page of the ring, copies into it the bookings whose latest record is
    /// in the page leaving the window, then writes its header: from then on it is the head.
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
        for i in 0..self.bookings.len() {
            if self.bookings[i].1 != leaving {
                continue;
            }
            if slot >= Self::SLOTS {
                // More live records than a page holds: the mirror is too large for the region.
                return Err(fail(self));
            }
            let r = encode(&self.bookings[i].0);
            self.put(page, slot, &r)?;
            self.bookings[i].1 = page;
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
    async fn commit(&mut self, new: &NewBooking) -> Result<Commit, StoreError> {
        if let Some(b) = self.made_by(&new.holder, &new.nonce).await? {
            return Ok(Commit::Replayed(b));
        }
        if let Some(b) = self.occupant(&new.room, new.slot).await? {
            return Ok(Commit::Taken(b));
        }
        if self.poisoned {
            return Err(StoreError::Io);
        }
        if !self.make_room() {
            return Err(StoreError::Full);
        }
        let b = Booking { id: self.next_id, new: new.clone(), status: Status::Active };
        self.append(&encode(&b))?;
        self.next_id += 1;
        let page = self.head;
        // Room was made above; the push cannot fail.
        let _ = self.bookings.push((b.clone(), page));
        Ok(Commit::Created(b))
    }

    async fn get(&mut self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        Ok(self.bookings().find(|b| b.id == id).cloned())
    }

    async fn made_by(&mut self, holder: &Holder, nonce: &Nonce) -> Result<Option<Booking>, StoreError> {
        let same_operation = |b: &&Booking| b.new.nonce == *nonce && b.new.holder == *holder;
        Ok(self.bookings().find(same_operation).cloned())
    }

    async fn occupant(&mut self, room: &str, slot: Slot) -> Result<Option<Booking>, StoreError> {
        let held = |b: &&Booking| b.status == Status::Active && b.new.room == room && b.new.slot == slot;
        Ok(self.bookings().find(held).cloned())
    }

    async fn next_held(
        &mut self,
        holder: &Holder,
        slot: Slot,
        room: &str,
    ) -> Result<Option<Booking>, StoreError> {
        Ok(next_held_in(self.bookings(), holder, slot, room).cloned())
    }

    async fn next_in_room(&mut self, room: &str, from: Slot) -> Result<Option<Booking>, StoreError> {
        Ok(next_in_room_in(self.bookings(), room, from).cloned())
    }

    async fn cancel(&mut self, id: BookingId, holder: &Holder) -> Result<Option<Booking>, StoreError> {
        let theirs = |(b, _): &(Booking, u32)| b.id == id && b.new.holder == *holder;
        let Some(i) = self.bookings.iter().position(theirs) else { return Ok(None) };
        if self.bookings[i].0.status == Status::Cancelled {
            return Ok(Some(self.bookings[i].0.clone()));
        }
        let mut b = self.bookings[i].0.clone();
        b.status = Status::Cancelled;
        self.append(&encode(&b))?;
        self.bookings[i] = (b.clone(), self.head);
        Ok(Some(b))
    }
}

#[cfg(test)]
mod tests;
