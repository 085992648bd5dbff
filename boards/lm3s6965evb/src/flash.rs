//! The panel's NOR flash for the booking store, as `embedded-storage` sees it.
//!
//! QEMU's lm3s6965evb does not emulate the LM3S6965's flash controller (FMA/FMD/FMC at
//! 0x400F_D000): its flash is plain ROM to the guest, so writes go nowhere. Under QEMU the
//! store therefore lives in the top 8 KiB of SRAM (left out of `memory.x`'s RAM, so the
//! runtime never zeroes it), driven with NOR semantics: erase sets a 1 KiB page to 0xFF,
//! programming only clears bits, one aligned word at a time. SRAM keeps its contents across a
//! system reset (QEMU reloads only the image's own segments), so bookings and the boot
//! counter survive a reset of the emulated board, but not a restart of QEMU. A real panel
//! swaps this module for an FMC driver over the last 8 pages of flash (see the README).

use core::ptr::{read_volatile, write_volatile};

use embedded_storage::nor_flash::{ErrorType, MultiwriteNorFlash, NorFlash, NorFlashErrorKind, ReadNorFlash};

/// Where the emulated flash starts (the top 8 KiB of the LM3S6965's 64 KiB SRAM).
const BASE: usize = 0x2000_E000;
/// Erase pages (1 KiB each, as the LM3S6965's flash).
pub const PAGES: u32 = 8;
const PAGE: usize = 1024;
const SIZE: usize = PAGE * PAGES as usize;

/// The store's flash region.
pub struct Nor {
    _private: (),
}

impl Nor {
    /// The region (one owner: the booking store).
    pub const fn take() -> Nor {
        Nor { _private: () }
    }
}

fn in_range(offset: u32, len: usize) -> Result<usize, NorFlashErrorKind> {
    let at = offset as usize;
    if at.checked_add(len).is_some_and(|end| end <= SIZE) {
        Ok(BASE + at)
    } else {
        Err(NorFlashErrorKind::OutOfBounds)
    }
}

impl ErrorType for Nor {
    type Error = NorFlashErrorKind;
}

impl ReadNorFlash for Nor {
    const READ_SIZE: usize = 1;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), Self::Error> {
        let at = in_range(offset, bytes.len())?;
        for (i, b) in bytes.iter_mut().enumerate() {
            // SAFETY: inside the reserved SRAM region, which nothing else maps or uses.
            *b = unsafe { read_volatile((at + i) as *const u8) };
        }
        Ok(())
    }

    fn capacity(&self) -> usize {
        SIZE
    }
}

impl NorFlash for Nor {
    const WRITE_SIZE: usize = 4;
    const ERASE_SIZE: usize = PAGE;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), Self::Error> {
        if !(from as usize).is_multiple_of(PAGE) || !(to as usize).is_multiple_of(PAGE) || to < from {
            return Err(NorFlashErrorKind::NotAligned);
        }
        let at = in_range(from, (to - from) as usize)?;
        for w in (at..at + (to - from) as usize).step_by(4) {
            // SAFETY: an aligned word of the reserved region.
            unsafe { write_volatile(w as *mut u32, u32::MAX) };
        }
        Ok(())
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), Self::Error> {
        if !(offset as usize).is_multiple_of(4) || !bytes.len().is_multiple_of(4) {
            return Err(NorFlashErrorKind::NotAligned);
        }
        let at = in_range(offset, bytes.len())?;
        for (i, w) in bytes.chunks_exact(4).enumerate() {
            let p = (at + 4 * i) as *mut u32;
            let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            // SAFETY: an aligned word of the reserved region. NOR programming clears bits only.
            unsafe { write_volatile(p, read_volatile(p) & v) };
        }
        Ok(())
    }
}

/// Programming a programmed word clears the bits asked (how the store kills a superseded
/// record): `write` ANDs, as NOR flash programs.
impl MultiwriteNorFlash for Nor {}
