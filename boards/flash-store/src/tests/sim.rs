//! The tests' NOR flash in RAM, which loses power at the step a test chooses.

use std::vec::Vec;

use embedded_storage::nor_flash::{ErrorType, MultiwriteNorFlash, NorFlash, NorFlashErrorKind, ReadNorFlash};

use super::{PAGE, SIZE};

/// NOR flash in RAM: erase sets bytes to 0xFF, programming only clears bits, word by word.
/// With a budget of steps (one per programmed word, one per 64-byte chunk erased) it loses
/// power when the budget runs out: the word being programmed is left half programmed, or
/// the chunk being erased half erased, and every later operation fails.
#[derive(Clone)]
pub(super) struct SimFlash {
    pub(super) mem: Vec<u8>,
    pub(super) budget: Option<usize>,
    pub(super) steps: usize,
    pub(super) dead: bool,
    pub(super) erases: Vec<u32>,
    /// A byte that reads 0 whatever is programmed (a stuck cell).
    pub(super) stuck: Option<usize>,
}

impl SimFlash {
    pub(super) fn new() -> SimFlash {
        SimFlash::sized(SIZE)
    }

    /// A flash of `size` bytes (whole pages).
    pub(super) fn sized(size: usize) -> SimFlash {
        // Not blank: whatever a factory left (here: a pattern), to be formatted.
        let mem = (0..size).map(|i| (i * 7 + 3) as u8).collect();
        SimFlash { mem, budget: None, steps: 0, dead: false, erases: vec![0; size / PAGE], stuck: None }
    }

    /// Takes one step; false when the power is cut at it.
    fn step(&mut self) -> bool {
        self.steps += 1;
        match &mut self.budget {
            Some(0) => {
                self.dead = true;
                false
            }
            Some(n) => {
                *n -= 1;
                true
            }
            None => true,
        }
    }

    /// Power back on (a reboot): the flash keeps what it holds.
    pub(super) fn revive(mut self) -> SimFlash {
        self.budget = None;
        self.dead = false;
        self
    }
}

/// NOR flash: programming a programmed word clears the bits asked (how a record is killed).
impl MultiwriteNorFlash for SimFlash {}

impl ErrorType for SimFlash {
    type Error = NorFlashErrorKind;
}

impl ReadNorFlash for SimFlash {
    const READ_SIZE: usize = 1;
    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), Self::Error> {
        if self.dead {
            return Err(NorFlashErrorKind::Other);
        }
        let at = offset as usize;
        let src = self.mem.get(at..at + bytes.len()).ok_or(NorFlashErrorKind::OutOfBounds)?;
        bytes.copy_from_slice(src);
        if let Some(s) = self.stuck.filter(|s| (at..at + bytes.len()).contains(s)) {
            bytes[s - at] = 0;
        }
        Ok(())
    }
    fn capacity(&self) -> usize {
        self.mem.len()
    }
}

impl NorFlash for SimFlash {
    const WRITE_SIZE: usize = 4;
    const ERASE_SIZE: usize = PAGE;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), Self::Error> {
        assert!(
            (from as usize).is_multiple_of(PAGE)
                && (to as usize).is_multiple_of(PAGE)
                && to as usize <= self.mem.len()
        );
        if self.dead {
            return Err(NorFlashErrorKind::Other);
        }
        for chunk in (from as usize..to as usize).step_by(64) {
            if !self.step() {
                // Half erased: the first half of the chunk.
                self.mem[chunk..chunk + 32].fill(0xFF);
                return Err(NorFlashErrorKind::Other);
            }
            self.mem[chunk..chunk + 64].fill(0xFF);
        }
        for p in from as usize / PAGE..to as usize / PAGE {
            self.erases[p] += 1;
        }
        Ok(())
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), Self::Error> {
        let at = offset as usize;
        assert!(at.is_multiple_of(4) && bytes.len().is_multiple_of(4) && at + bytes.len() <= self.mem.len());
        if self.dead {
            return Err(NorFlashErrorKind::Other);
        }
        for (i, w) in bytes.chunks(4).enumerate() {
            let word = at + 4 * i..at + 4 * i + 4;
            // A word is programmed once after an erase, or killed (programmed to 0) after.
            assert!(
                self.mem[word.clone()].iter().all(|&b| b == 0xFF) || w == [0; 4],
                "programming a word not erased at {}",
                word.start
            );
            let powered = self.step();
            let dst = &mut self.mem[word];
            if !powered {
                // Half programmed: some of the bits that should clear have.
                for (d, s) in dst.iter_mut().zip(w) {
                    *d &= s | 0x5A;
                }
                return Err(NorFlashErrorKind::Other);
            }
            for (d, s) in dst.iter_mut().zip(w) {
                *d &= s;
            }
        }
        Ok(())
    }
}
