//! The booking store on the board's microSD card (QEMU: `-drive if=sd,format=raw,file=…`), in
//! SPI mode on SSI0 beside the OLED ([`ssi`]), as `embedded-storage` NOR flash: a small block
//! driver (CMD0, CMD8, ACMD41, CMD58, CMD16, CMD17, CMD24; nothing else is used) and an
//! adapter over its 512-byte blocks. With no card answering, the store stays in the RAM that
//! stands in for the chip's flash ([`flash`](crate::flash)): [`Medium`] is either.
//!
//! The store owns the card's first [`PAGES`] KiB, raw (no file system): a 1 KiB page is two
//! blocks; erasing one writes both as 0xFF, and programming reads a block, clears the bits
//! asked (NOR rules: what the store's kills rely on) and writes it back. One block is kept
//! in RAM ([`BLOCK`] bytes) so a query reading the log slot after slot reads each block once.
//! A write is done when the card has taken it (its data response, then not busy); QEMU
//! writes it to the image file then, so a QEMU killed after an acknowledged booking keeps it.
//!
//! The card is selected by PD0 low (see [`ssi`]) only inside one command; PD0 is high (the
//! OLED selected) otherwise, and nothing is clocked then but the OLED's own bytes.

use embedded_storage::nor_flash::{ErrorType, MultiwriteNorFlash, NorFlash, NorFlashErrorKind, ReadNorFlash};

use crate::flash;
use crate::ssi::{self, set_bits, write, DEN, DIR, RCGC2};

/// Bytes in a card block.
pub const BLOCK: usize = 512;
/// The store's erase page: two blocks, as the RAM stand-in's 1 KiB page.
const PAGE: usize = 1024;
/// Pages of the store on the card: 64 KiB, the micro:bit's region (256 titled bookings).
pub const PAGES: u32 = 64;
const SIZE: usize = PAGE * PAGES as usize;
/// Bytes clocked while waiting for a reply, a data token or the end of busy before the card
/// counts as failed.
const POLLS: u32 = 100_000;
/// ACMD41 tries before a card that stays idle counts as absent.
const INIT_TRIES: u32 = 1000;
/// GPIO port D (PL061): RCGC2 bit 3; PD0 is the card's chip select.
const GPIO_D: usize = 0x4000_7000;
const CS: u32 = 0x01;
/// The start of a data block, read or written.
const TOKEN: u8 = 0xFE;
/// A data response that says the card took the block.
const ACCEPTED: u8 = 0x05;

/// Selects the card (PD0 low) or the OLED (high).
fn select(card: bool) {
    write(GPIO_D + ((CS as usize) << 2), if card { 0 } else { CS });
}

/// Clocks 0xFF until the card answers something else, at most [`POLLS`] times.
fn answer() -> Option<u8> {
    (0..POLLS).map(|_| ssi::byte(0xFF)).find(|&b| b != 0xFF)
}

/// Sends a command frame and returns its R1 answer (0xFF if none).
fn command(index: u8, arg: u32, crc: u8) -> u8 {
    ssi::byte(0xFF);
    ssi::byte(0x40 | index);
    for b in arg.to_be_bytes() {
        ssi::byte(b);
    }
    ssi::byte(crc);
    (0..POLLS).map(|_| ssi::byte(0xFF)).find(|&b| b & 0x80 == 0).unwrap_or(0xFF)
}

/// Four more answer bytes (R3, R7), big-endian.
fn word() -> u32 {
    u32::from_be_bytes([ssi::byte(0xFF), ssi::byte(0xFF), ssi::byte(0xFF), ssi::byte(0xFF)])
}

/// A card in SPI mode, ready for block reads and writes.
pub struct Card {
    /// Whether a command's address counts blocks (SDHC) or bytes (SDSC).
    by_block: bool,
}

impl Card {
    /// Wakes the card on the bus; `None` if none answers as an SD card.
    pub fn init() -> Option<Card> {
        set_bits(RCGC2, 1 << 3);
        set_bits(GPIO_D + DIR, CS);
        set_bits(GPIO_D + DEN, CS);
        // Driven high (QEMU's PL061 signals a pin only when its level changes, and the board
        // raised PD0 behind its back at power-up), so the low level of a select reaches the bus.
        select(false);
        ssi::start();
        select(true);
        let card = Card::wake();
        select(false);
        card
    }

    fn wake() -> Option<Card> {
        if command(0, 0, 0x95) != 0x01 {
            return None;
        }
        // Version 2 cards echo the check pattern; version 1 cards call CMD8 illegal.
        let v2 = command(8, 0x1AA, 0x87) == 0x01 && word() & 0xFFF == 0x1AA;
        let hcs = if v2 { 1 << 30 } else { 0 };
        let ready = (0..INIT_TRIES).any(|_| command(55, 0, 0xFF) <= 1 && command(41, hcs, 0xFF) == 0);
        // R1 of CMD58 may keep the idle bit (QEMU's ssi-sd always sets it there).
        if !ready || command(58, 0, 0xFF) & !0x01 != 0 {
            return None;
        }
        let by_block = word() & (1 << 30) != 0;
        if !by_block && command(16, BLOCK as u32, 0xFF) != 0 {
            return None;
        }
        Some(Card { by_block })
    }

    fn address(&self, block: u32) -> u32 {
        if self.by_block {
            block
        } else {
            block * BLOCK as u32
        }
    }

    /// Reads block `block` into `buf`.
    fn read(&mut self, block: u32, buf: &mut [u8; BLOCK]) -> Result<(), NorFlashErrorKind> {
        select(true);
        let ok = command(17, self.address(block), 0xFF) == 0 && answer() == Some(TOKEN);
        if ok {
            for b in buf.iter_mut() {
                *b = ssi::byte(0xFF);
            }
            // The block's CRC (not checked: the store's records carry their own).
            ssi::byte(0xFF);
            ssi::byte(0xFF);
        }
        select(false);
        ok.then_some(()).ok_or(NorFlashErrorKind::Other)
    }

    /// Writes `buf` to block `block`; done when the card has taken it and is no longer busy.
    fn write(&mut self, block: u32, buf: &[u8; BLOCK]) -> Result<(), NorFlashErrorKind> {
        select(true);
        let mut ok = command(24, self.address(block), 0xFF) == 0;
        if ok {
            ssi::byte(0xFF);
            ssi::byte(TOKEN);
            for &b in buf {
                ssi::byte(b);
            }
            ssi::byte(0xFF);
            ssi::byte(0xFF);
            ok =
                answer().is_some_and(|r| r & 0x1F == ACCEPTED) && (0..POLLS).any(|_| ssi::byte(0xFF) == 0xFF);
        }
        select(false);
        ok.then_some(()).ok_or(NorFlashErrorKind::Other)
    }
}

/// The store's pages on the card as NOR flash, one block cached.
pub struct CardNor {
    card: Card,
    /// The block in `data`, if one is.
    cached: Option<u32>,
    data: [u8; BLOCK],
}

impl CardNor {
    /// The store's region of `card`.
    pub fn new(card: Card) -> CardNor {
        CardNor { card, cached: None, data: [0; BLOCK] }
    }

    /// Block `block` in the cache.
    fn load(&mut self, block: u32) -> Result<(), NorFlashErrorKind> {
        if self.cached != Some(block) {
            self.cached = None;
            self.card.read(block, &mut self.data)?;
            self.cached = Some(block);
        }
        Ok(())
    }

    /// Writes the cached block back (forgotten if that fails: the card's copy is unknown).
    fn store(&mut self, block: u32) -> Result<(), NorFlashErrorKind> {
        let written = self.card.write(block, &self.data);
        if written.is_err() {
            self.cached = None;
        }
        written
    }

    /// Calls `f` with each block `[offset, offset + len)` touches: the block, the range in it,
    /// and the range in the caller's bytes.
    fn blocks(
        offset: u32,
        len: usize,
        mut f: impl FnMut(u32, core::ops::Range<usize>, core::ops::Range<usize>) -> Result<(), NorFlashErrorKind>,
    ) -> Result<(), NorFlashErrorKind> {
        let end = (offset as usize)
            .checked_add(len)
            .filter(|&e| e <= SIZE)
            .ok_or(NorFlashErrorKind::OutOfBounds)?;
        let mut at = offset as usize;
        while at < end {
            let (block, from) = (at / BLOCK, at % BLOCK);
            let n = (BLOCK - from).min(end - at);
            let done = at - offset as usize;
            f(block as u32, from..from + n, done..done + n)?;
            at += n;
        }
        Ok(())
    }
}

impl ErrorType for CardNor {
    type Error = NorFlashErrorKind;
}

impl ReadNorFlash for CardNor {
    const READ_SIZE: usize = 1;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), Self::Error> {
        CardNor::blocks(offset, bytes.len(), |block, inside, theirs| {
            self.load(block)?;
            bytes[theirs].copy_from_slice(&self.data[inside]);
            Ok(())
        })
    }

    fn capacity(&self) -> usize {
        SIZE
    }
}

impl NorFlash for CardNor {
    const WRITE_SIZE: usize = 4;
    const ERASE_SIZE: usize = PAGE;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), Self::Error> {
        if !(from as usize).is_multiple_of(PAGE) || !(to as usize).is_multiple_of(PAGE) || to < from {
            return Err(NorFlashErrorKind::NotAligned);
        }
        CardNor::blocks(from, (to - from) as usize, |block, _, _| {
            self.data = [0xFF; BLOCK];
            self.cached = Some(block);
            self.store(block)
        })
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), Self::Error> {
        if !(offset as usize).is_multiple_of(4) || !bytes.len().is_multiple_of(4) {
            return Err(NorFlashErrorKind::NotAligned);
        }
        CardNor::blocks(offset, bytes.len(), |block, inside, theirs| {
            self.load(block)?;
            for (d, s) in self.data[inside].iter_mut().zip(&bytes[theirs]) {
                *d &= s;
            }
            self.store(block)
        })
    }
}

/// Programming clears only the bits asked (`write` ANDs): a record can be killed.
impl MultiwriteNorFlash for CardNor {}

/// Where the networked panel keeps its bookings: the SD card, or the RAM stand-in without one.
// One of them lives in the store's static, and there is no heap to box the block cache in.
#[allow(clippy::large_enum_variant)]
pub enum Medium {
    /// The card's first [`PAGES`] KiB.
    Card(CardNor),
    /// The top 8 KiB of SRAM ([`flash::PAGES`] pages).
    Ram(flash::Nor),
}

impl Medium {
    /// The card if one answers, else the RAM stand-in; and the store's pages on it.
    pub fn find() -> (Medium, u32) {
        match Card::init() {
            Some(card) => (Medium::Card(CardNor::new(card)), PAGES),
            None => (Medium::Ram(flash::Nor::take()), flash::PAGES),
        }
    }

    /// Which one it is, for the boot diagnostics.
    pub fn name(&self) -> &'static str {
        match self {
            Medium::Card(_) => "store: SD card",
            Medium::Ram(_) => "store: no SD card, RAM stand-in",
        }
    }
}

impl ErrorType for Medium {
    type Error = NorFlashErrorKind;
}

impl ReadNorFlash for Medium {
    const READ_SIZE: usize = 1;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), Self::Error> {
        match self {
            Medium::Card(c) => c.read(offset, bytes),
            Medium::Ram(r) => r.read(offset, bytes),
        }
    }

    fn capacity(&self) -> usize {
        match self {
            Medium::Card(c) => c.capacity(),
            Medium::Ram(r) => r.capacity(),
        }
    }
}

impl NorFlash for Medium {
    const WRITE_SIZE: usize = 4;
    const ERASE_SIZE: usize = PAGE;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), Self::Error> {
        match self {
            Medium::Card(c) => c.erase(from, to),
            Medium::Ram(r) => r.erase(from, to),
        }
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), Self::Error> {
        match self {
            Medium::Card(c) => c.write(offset, bytes),
            Medium::Ram(r) => r.write(offset, bytes),
        }
    }
}

/// Both program as NOR does.
impl MultiwriteNorFlash for Medium {}

// Both media have the same geometry, so one store type serves either.
const _: () = assert!(
    <flash::Nor as NorFlash>::ERASE_SIZE == PAGE
        && <flash::Nor as NorFlash>::WRITE_SIZE == 4
        && <flash::Nor as ReadNorFlash>::READ_SIZE == 1
);
