//! The booking store's flash: the last 64 pages (1 KiB each) of the nRF51822's 256 KiB,
//! programmed through the NVMC, as `embedded-storage` NOR flash.
//!
//! 64 KiB hold `redmark_flash_store::MAX_BOOKINGS` (256) titled bookings, two 64-byte records
//! each (512 records), in a window of 63 pages of 15 record slots (945), so a page's carry-over
//! copies about half a page, not all of it. The region grew downward around the last 8 pages
//! (0x3E000, the store's before it read in place): a panel upgraded in place keeps its log
//! (the store finds its pages by their sequence numbers). The image stays below 0x30000
//! (memory.x; about 73 KiB of 192 KiB used).
//!
//! QEMU's microbit emulates the NVMC: erase sets a page to 0xFF, a word write programs it.
//! What it keeps: across a system reset (QMP `system_reset`, the reset button) the flash
//! keeps what was written (QEMU reloads only the image's own bytes); across a restart of
//! QEMU nothing (the flash is not backed by a file).

use core::ptr::{read_volatile, write_volatile};

use embedded_storage::nor_flash::{ErrorType, MultiwriteNorFlash, NorFlash, NorFlashErrorKind, ReadNorFlash};

/// Where the store's pages start (page 192).
pub const BASE: u32 = 0x3_0000;
/// Erase pages the store owns.
pub const PAGES: u32 = 64;
const PAGE: usize = 1024;
const END: usize = 0x4_0000;

const NVMC: usize = 0x4001_E000;
const READY: usize = 0x400;
const CONFIG: usize = 0x504;
const ERASEPAGE: usize = 0x508;
const CONFIG_REN: u32 = 0;
const CONFIG_WEN: u32 = 1;
const CONFIG_EEN: u32 = 2;

fn nvmc(off: usize, v: u32) {
    // SAFETY: an aligned NVMC register; this module is its only user.
    unsafe { write_volatile((NVMC + off) as *mut u32, v) };
    // SAFETY: READY is a read-only status register.
    while unsafe { read_volatile((NVMC + READY) as *const u32) } & 1 == 0 {}
}

/// The store's flash pages.
pub struct Nor {
    _private: (),
}

impl Nor {
    /// The pages (one owner: the booking store).
    pub const fn take() -> Nor {
        Nor { _private: () }
    }
}

/// The absolute address of `[offset, offset + len)` if it lies in the store's pages. The
/// store addresses the flash from 0 (the chip's first byte), as its `base` says.
fn span(offset: u32, len: usize) -> Result<usize, NorFlashErrorKind> {
    let at = offset as usize;
    match at.checked_add(len) {
        Some(end) if at >= BASE as usize && end <= END => Ok(at),
        _ => Err(NorFlashErrorKind::OutOfBounds),
    }
}

impl ErrorType for Nor {
    type Error = NorFlashErrorKind;
}

impl ReadNorFlash for Nor {
    const READ_SIZE: usize = 1;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), Self::Error> {
        let at = span(offset, bytes.len())?;
        for (i, b) in bytes.iter_mut().enumerate() {
            // SAFETY: memory-mapped flash inside the store's pages.
            *b = unsafe { read_volatile((at + i) as *const u8) };
        }
        Ok(())
    }

    fn capacity(&self) -> usize {
        END
    }
}

impl NorFlash for Nor {
    const WRITE_SIZE: usize = 4;
    const ERASE_SIZE: usize = PAGE;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), Self::Error> {
        if !(from as usize).is_multiple_of(PAGE) || !(to as usize).is_multiple_of(PAGE) || to < from {
            return Err(NorFlashErrorKind::NotAligned);
        }
        let at = span(from, (to - from) as usize)?;
        nvmc(CONFIG, CONFIG_EEN);
        for page in (at..at + (to - from) as usize).step_by(PAGE) {
            nvmc(ERASEPAGE, page as u32);
        }
        nvmc(CONFIG, CONFIG_REN);
        Ok(())
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), Self::Error> {
        if !(offset as usize).is_multiple_of(4) || !bytes.len().is_multiple_of(4) {
            return Err(NorFlashErrorKind::NotAligned);
        }
        let at = span(offset, bytes.len())?;
        nvmc(CONFIG, CONFIG_WEN);
        for (i, w) in bytes.chunks_exact(4).enumerate() {
            let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            // SAFETY: an aligned word of the store's pages, writes enabled in the NVMC.
            unsafe { write_volatile((at + 4 * i) as *mut u32, v) };
            // SAFETY: READY is a read-only status register.
            while unsafe { read_volatile((NVMC + READY) as *const u32) } & 1 == 0 {}
        }
        nvmc(CONFIG, CONFIG_REN);
        Ok(())
    }
}

/// Programming a programmed word clears the bits asked (how the store kills a superseded
/// record): the NVMC allows two writes of a word between erases (nRF51 reference manual,
/// n_WRITE), and the store writes a word at most twice.
impl MultiwriteNorFlash for Nor {}
