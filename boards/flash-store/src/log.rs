//! The flash log under the store: reading its records in place over the window of pages,
//! appending with read-back, killing superseded records, opening the next page, and the
//! replay at load.

use embedded_storage::nor_flash::MultiwriteNorFlash;
use redmark_core::booking::{Booking, BookingId, StoreError, Title};

use crate::record::{
    decode, encode, header, intact, is_booking, kills, title_of, u32_at, Held, Rec, KILLED, KIND_BOOT,
    KIND_TITLE, MAGIC, SLOT,
};
use crate::FlashStore;

impl<F: MultiwriteNorFlash> FlashStore<F> {
    pub(crate) const SLOTS: u32 = (F::ERASE_SIZE / SLOT) as u32;

    pub(crate) fn addr(&self, page: u32, slot: u32) -> u32 {
        self.base + page * F::ERASE_SIZE as u32 + slot * SLOT as u32
    }

    pub(crate) fn read(&mut self, page: u32, slot: u32) -> Result<Rec, StoreError> {
        let mut r = [0; SLOT];
        let at = self.addr(page, slot);
        self.flash.read(at, &mut r).map_err(|_| StoreError::Io)?;
        Ok(r)
    }

    /// The header of `page` if it is a valid one.
    fn header_of(&mut self, page: u32) -> Result<Option<Rec>, StoreError> {
        let h = self.read(page, 0)?;
        Ok((h[..4] == MAGIC && intact(&h)).then_some(h))
    }

    /// The sequence number of `page` if it has a valid header.
    pub(crate) fn page_seq(&mut self, page: u32) -> Result<Option<u32>, StoreError> {
        Ok(self.header_of(page)?.map(|h| u32_at(&h, 4)))
    }

    /// Whether a page of sequence number `seq` is in the window (the `pages - 1` newest).
    fn in_window(&self, seq: u32) -> bool {
        seq <= self.seq && self.seq - seq < self.pages - 1
    }

    /// The sequence number of `page` if it is in the window.
    fn window_seq(&mut self, page: u32) -> Result<Option<u32>, StoreError> {
        Ok(self.page_seq(page)?.filter(|&s| self.in_window(s)))
    }

    /// Calls `f` with every booking in the log (its one intact record, where it is) and the
    /// sequence number of its page. The pages come in the ring's order, which no answer
    /// depends on (a booking has one record).
    /// (`dyn`: one copy of the loop in the image, not one per query.)
    pub(crate) fn each(&mut self, f: &mut dyn FnMut(&Held, u32)) -> Result<(), StoreError> {
        for page in 0..self.pages {
            let Some(seq) = self.window_seq(page)? else { continue };
            // The intact title record in the slot before: (slot, booking id, length).
            let mut title: Option<(u32, BookingId, u8)> = None;
            for slot in 1..Self::SLOTS {
                let r = self.read(page, slot)?;
                if r[0] == KIND_TITLE && intact(&r) {
                    title = Some((slot, u32_at(&r, 4), r[1]));
                    continue;
                }
                if self.stale == Some((page, slot)) || !is_booking(&r) {
                    continue;
                }
                let Some(mut h) = decode(&r) else { continue };
                if h.title_len > 0 && title != Some((slot - 1, h.id, h.title_len)) {
                    // Its title record is not where it was written: the booking without it.
                    h.title_len = 0;
                }
                (h.page, h.slot) = (page as u16, slot as u16);
                f(&h, seq);
            }
        }
        Ok(())
    }

    /// The first booking `is` picks.
    pub(crate) fn find_by(&mut self, is: &dyn Fn(&Held) -> bool) -> Result<Option<Held>, StoreError> {
        self.least(is, &|_, _| false)
    }

    /// Of the bookings `is` picks, the first that no later one comes `before`.
    pub(crate) fn least(
        &mut self,
        is: &dyn Fn(&Held) -> bool,
        before: &dyn Fn(&Held, &Held) -> bool,
    ) -> Result<Option<Held>, StoreError> {
        let mut best: Option<Held> = None;
        self.each(&mut |h, _| {
            if is(h) && best.as_ref().is_none_or(|b| before(h, b)) {
                best = Some(h.clone());
            }
        })?;
        Ok(best)
    }

    /// The title record of `h` (read from the slot before its record) and its title, `None`
    /// if it has none.
    pub(crate) fn title_record_of(&mut self, h: &Held) -> Result<Option<(Rec, Title)>, StoreError> {
        if h.title_len == 0 {
            return Ok(None);
        }
        let r = self.read(u32::from(h.page), u32::from(h.slot) - 1)?;
        // Checked as the record was found: only a flash that changed since fails here.
        let title = title_of(&r, h.id, h.title_len).ok_or(StoreError::Io)?;
        Ok(Some((r, title)))
    }

    /// The booking `h`, its title read from flash.
    pub(crate) fn booking(&mut self, h: &Held) -> Result<Booking, StoreError> {
        let title = self.title_record_of(h)?.map(|(_, t)| t).unwrap_or_default();
        Ok(h.booking(title))
    }

    /// The booking `h` if there is one, its title read.
    pub(crate) fn found(&mut self, h: Option<Held>) -> Result<Option<Booking>, StoreError> {
        h.map(|h| self.booking(&h)).transpose()
    }

    /// Writes `r` into slot `slot` of `page` (not moving the log) and reads it back.
    fn put(&mut self, page: u32, slot: u32, r: &Rec) -> Result<(), StoreError> {
        let at = self.addr(page, slot);
        let written = self.flash.write(at, r).is_ok() && self.read(page, slot).is_ok_and(|b| b == *r);
        self.writes = self.writes.wrapping_add(1);
        if written {
            Ok(())
        } else {
            self.poisoned = true;
            Err(StoreError::Io)
        }
    }

    /// Kills the record at (`page`, `slot`): its first word programmed to 0 and read back. A
    /// failure poisons the store and remembers the record as stale (skipped).
    pub(crate) fn kill(&mut self, page: u32, slot: u32) -> Result<(), StoreError> {
        let at = self.addr(page, slot);
        let killed =
            self.flash.write(at, &KILLED).is_ok() && self.read(page, slot).is_ok_and(|r| r[..4] == KILLED);
        self.writes = self.writes.wrapping_add(1);
        if killed {
            return Ok(());
        }
        self.poisoned = true;
        self.stale = Some((page, slot));
        Err(StoreError::Io)
    }

    /// Room in the head page for `need` more records, opening pages as needed; whether it
    /// opened one (records may have moved).
    pub(crate) fn reserve(&mut self, need: u32) -> Result<bool, StoreError> {
        if self.poisoned {
            return Err(StoreError::Io);
        }
        let mut opened = false;
        while self.next_slot + need > Self::SLOTS {
            self.open_next_page()?;
            opened = true;
        }
        Ok(opened)
    }

    /// Appends a record to the log, after its title record if it has one (both in one page);
    /// `Ok` with the record's slot once both are written and read back.
    pub(crate) fn append(&mut self, title: Option<&Rec>, r: &Rec) -> Result<u32, StoreError> {
        let need = 1 + u32::from(title.is_some());
        self.reserve(need)?;
        let slot = self.next_slot + need - 1;
        self.next_slot += need;
        if let Some(t) = title {
            self.put(self.head, slot - 1, t)?;
        }
        self.put(self.head, slot, r)?;
        Ok(slot)
    }

    /// Erases the first page after the head (in the ring's order) outside the window, copies
    /// into it the bookings of the page leaving the window (each after its title record), then
    /// writes its header: from then on it is the head.
    fn open_next_page(&mut self) -> Result<(), StoreError> {
        let fail = |s: &mut Self| {
            s.poisoned = true;
            StoreError::Io
        };
        let mut next = None;
        for k in 1..self.pages {
            let p = (self.head + k) % self.pages;
            if self.window_seq(p)?.is_none() {
                next = Some(p);
                break;
            }
        }
        // The window has `pages - 1` pages at most: one is outside it.
        let Some(page) = next else { return Err(fail(self)) };
        // The page whose sequence number leaves the window when this one joins it.
        let mut leaving = None;
        if let Some(gone) = (self.seq + 2).checked_sub(self.pages).filter(|&s| s > 0) {
            for p in 0..self.pages {
                if self.page_seq(p)? == Some(gone) {
                    leaving = Some(p);
                }
            }
        }
        let from = self.addr(page, 0);
        if self.flash.erase(from, from + F::ERASE_SIZE as u32).is_err() {
            return Err(fail(self));
        }
        let mut slot = 1;
        if let Some(old) = leaving {
            let mut title: Option<(u32, Rec)> = None;
            for s in 1..Self::SLOTS {
                let Ok(r) = self.read(old, s) else { return Err(fail(self)) };
                if r[0] == KIND_TITLE && intact(&r) {
                    title = Some((s, r));
                    continue;
                }
                if self.stale == Some((old, s)) || !is_booking(&r) {
                    continue;
                }
                let Some(mut h) = decode(&r) else { continue };
                let t = title.filter(|(at, t)| *at + 1 == s && title_of(t, h.id, h.title_len).is_some());
                if t.is_none() {
                    h.title_len = 0;
                }
                if slot + 1 + u32::from(t.is_some()) > Self::SLOTS {
                    // More records than a page holds (cannot happen: they come from one page).
                    return Err(fail(self));
                }
                if let Some((_, t)) = t {
                    self.put(page, slot, &t)?;
                    slot += 1;
                }
                // Written again as kind 3 (a whole-hour kind 1 record too).
                self.put(page, slot, &encode(&h))?;
                slot += 1;
            }
        }
        let h = header(self.seq + 1, self.next_id, self.epoch);
        self.put(page, 0, &h)?;
        if self.stale.is_some_and(|(p, _)| Some(p) == leaving) {
            self.stale = None;
        }
        self.head = page;
        self.seq += 1;
        self.next_slot = slot;
        Ok(())
    }

    /// Reads the log: the newest page, the next id and epoch, the head's next free slot; kills
    /// what a power cut (or an image before kills) left superseded. Blank flash is formatted.
    pub(crate) fn replay(&mut self) -> Result<(), StoreError> {
        self.next_slot = Self::SLOTS;
        self.next_id = 1;
        self.epoch = 0;
        self.poisoned = true;
        self.stale = None;
        // The newest page: the valid header with the highest sequence number.
        let mut newest: Option<(u32, u32)> = None;
        for p in 0..self.pages {
            if let Some(seq) = self.page_seq(p)? {
                if newest.is_none_or(|(_, q)| seq > q) {
                    newest = Some((p, seq));
                }
            }
        }
        let Some((head, seq)) = newest else {
            // Blank: the first page, sequence 1.
            self.head = self.pages - 1;
            self.seq = 0;
            self.open_next_page()?;
            self.poisoned = false;
            return Ok(());
        };
        (self.head, self.seq) = (head, seq);
        let mut used = 1;
        for p in 0..self.pages {
            let Some(h) = self.header_of(p)?.filter(|h| self.in_window(u32_at(h, 4))) else { continue };
            self.next_id = self.next_id.max(u32_at(&h, 8));
            self.epoch = self.epoch.max(u32_at(&h, 12));
            for slot in 1..Self::SLOTS {
                let r = self.read(p, slot)?;
                if p == head && r.iter().any(|&b| b != 0xFF) {
                    used = slot + 1;
                }
                if r[0] == KIND_BOOT && intact(&r) {
                    self.epoch = self.epoch.max(u32_at(&r, 4));
                }
            }
        }
        self.next_slot = used;
        // The newest booking record (sequence, slot, id), and the ids in use.
        let mut last: Option<(u32, u32, BookingId)> = None;
        let mut next_id = self.next_id;
        self.each(&mut |h, seq| {
            next_id = next_id.max(h.id.saturating_add(1));
            let at = (seq, u32::from(h.slot));
            if last.is_none_or(|(s, sl, _)| at > (s, sl)) {
                last = Some((at.0, at.1, h.id));
            }
        })?;
        self.next_id = next_id;
        if let Some(last) = last {
            self.kill_superseded(last)?;
        }
        // Pages of an image before kills, cleaned above, are turned out of the window (their
        // bookings carried into new pages as they stand), so the cleaning is done once, not at
        // every boot: at most `pages` page opens, once, on the first boot after an upgrade.
        for _ in 0..self.pages {
            if !self.has_old_pages()? {
                break;
            }
            self.open_next_page()?;
        }
        self.poisoned = false;
        Ok(())
    }

    /// Whether a page of the window was written by an image before kills (its header lacks
    /// the mark).
    pub(crate) fn has_old_pages(&mut self) -> Result<bool, StoreError> {
        for page in 0..self.pages {
            if self.header_of(page)?.is_some_and(|h| self.in_window(u32_at(&h, 4)) && !kills(&h)) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Kills each booking record that a later record of its booking supersedes: any in a page
    /// of an image before kills (which left them whole), and in the others those of the
    /// newest booking record's booking only (a power cut between a change and its kill),
    /// `last` being that record (sequence, slot, id).
    fn kill_superseded(&mut self, last: (u32, u32, BookingId)) -> Result<(), StoreError> {
        for page in 0..self.pages {
            let Some(h) = self.header_of(page)?.filter(|h| self.in_window(u32_at(h, 4))) else { continue };
            let (seq, old) = (u32_at(&h, 4), !kills(&h));
            for slot in 1..Self::SLOTS {
                let r = self.read(page, slot)?;
                let id = u32_at(&r, 4);
                if !is_booking(&r) || (!old && id != last.2) || (seq, slot) == (last.0, last.1) {
                    continue;
                }
                let mut later = false;
                self.each(&mut |h, s| later |= h.id == id && (s, u32::from(h.slot)) > (seq, slot))?;
                if later {
                    self.kill(page, slot)?;
                }
            }
        }
        Ok(())
    }
}
