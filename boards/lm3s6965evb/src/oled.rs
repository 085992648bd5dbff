//! The evaluation board's OLED: an OSRAM 128×64 panel, 4-bit gray, behind an SSD0323
//! controller on SSI0 (PL022), as `redmark_panel::net::face::Screen`.
//!
//! Wiring: the bus as [`ssi`] says (the OLED selected while PD0 is high, as QEMU leaves it
//! and the SD card's driver leaves it after each block); the controller's D/C input on PC7
//! (high: data, low: command). The controller keeps its own 4-bit frame buffer: the panel draws into a window of
//! it, two pixels per byte (the left one in the high nibble); nothing is buffered here.

use redmark_panel::net::face::Screen;

use crate::ssi::{self, set_bits, write, DEN, DIR, RCGC2};

/// GPIO port C (PL061); data at +(mask << 2).
const GPIO_C: usize = 0x4000_6000;
/// PC7: the controller's D/C.
const DC: u32 = 0x80;

/// Controller commands (SSD0323 datasheet): display off/on, remap (horizontal address
/// increment, nibble order as drawn), column and row address windows.
const DISPLAY_OFF: u8 = 0xAE;
const DISPLAY_ON: u8 = 0xAF;
const REMAP: u8 = 0xA0;
const REMAP_VALUE: u8 = 0x52;
const SET_COLUMNS: u8 = 0x15;
const SET_ROWS: u8 = 0x75;

/// The OLED, and the left pixel of a pair not sent yet.
pub struct Oled {
    pending: Option<u8>,
}

impl Oled {
    /// Clocks SSI0 and the GPIO ports, routes the pins, and turns the display on (blank as
    /// the controller left it).
    pub fn new() -> Oled {
        ssi::start();
        set_bits(RCGC2, 1 << 2);
        set_bits(GPIO_C + DIR, DC);
        set_bits(GPIO_C + DEN, DC);
        let mut o = Oled { pending: None };
        o.command(&[DISPLAY_OFF, REMAP, REMAP_VALUE, DISPLAY_ON]);
        o
    }

    fn mode(data: bool) {
        write(GPIO_C + ((DC as usize) << 2), if data { DC } else { 0 });
    }

    fn byte(b: u8) {
        ssi::byte(b);
    }

    fn command(&mut self, bytes: &[u8]) {
        Oled::mode(false);
        for &b in bytes {
            Oled::byte(b);
        }
        Oled::mode(true);
    }
}

impl Screen for Oled {
    const WIDTH: u8 = 128;
    const HEIGHT: u8 = 64;

    fn window(&mut self, x: u8, y: u8, w: u8, h: u8) {
        self.pending = None;
        let (c0, c1) = (x / 2, (x + w).div_ceil(2).saturating_sub(1));
        self.command(&[SET_COLUMNS, c0, c1, SET_ROWS, y, (y + h).saturating_sub(1)]);
    }

    fn pixel(&mut self, gray: u8) {
        match self.pending.take() {
            None => self.pending = Some(gray & 0x0F),
            Some(left) => Oled::byte(left << 4 | (gray & 0x0F)),
        }
    }
}
