//! The evaluation board's OLED: an OSRAM 128×64 panel, 4-bit gray, behind an SSD0323
//! controller on SSI0 (PL022), as `redmark_panel::net::face::Screen`.
//!
//! Wiring (the EK-LM3S6965, and QEMU's `lm3s6965evb`): SSI0's clock, frame and TX on PA2,
//! PA3, PA5; the controller's D/C input on PC7 (high: data, low: command); the SD card's chip
//! select on PD0, which QEMU drives high at reset (the OLED selected), left alone here.
//! Each byte waits for its echo in the receive FIFO before the next, so D/C never changes
//! under a byte still being shifted out (and QEMU's PL022, which stops at 8 unread bytes, never
//! stalls). The controller keeps its own 4-bit frame buffer: the panel draws into a window of
//! it, two pixels per byte (the left one in the high nibble); nothing is buffered here.

use core::ptr::{read_volatile, write_volatile};

use redmark_panel::net::face::Screen;

/// SYSCTL RCGC1 (SSI0: bit 4) and RCGC2 (GPIO A: bit 0, C: bit 2).
const RCGC1: usize = 0x400F_E104;
const RCGC2: usize = 0x400F_E108;
/// GPIO port A and C (PL061); AFSEL +0x420, DEN +0x51C, DIR +0x400; data at +(mask << 2).
const GPIO_A: usize = 0x4000_4000;
const GPIO_C: usize = 0x4000_6000;
const DIR: usize = 0x400;
const AFSEL: usize = 0x420;
const DEN: usize = 0x51C;
/// PA2 (SSI0Clk), PA3 (SSI0Fss), PA5 (SSI0Tx).
const SSI_PINS: u32 = 0x2C;
/// PC7: the controller's D/C.
const DC: u32 = 0x80;
/// SSI0 (PL022): CR0, CR1, DR, SR, CPSR.
const SSI0: usize = 0x4000_8000;
const CR0: usize = 0x00;
const CR1: usize = 0x04;
const DR: usize = 0x08;
const SR: usize = 0x0C;
const CPSR: usize = 0x10;
/// CR0: 8-bit frames, SPI, clock idle high, data on the second edge (the SSD0323's mode 3).
const CR0_8BIT_MODE3: u32 = 0x07 | 0xC0;
/// CR1: SSI enabled, master.
const CR1_SSE: u32 = 0x02;
/// SR: transmit FIFO not full, receive FIFO not empty.
const SR_TNF: u32 = 0x02;
const SR_RNE: u32 = 0x04;
/// SSI clock: the core clock / 2 (CPSR) / (1 + SCR 0); the SSD0323 takes up to 4 MHz, a real
/// board at 50 MHz needs CPSR 14 or SCR > 0.
const CPSR_DIV: u32 = 2;

/// Controller commands (SSD0323 datasheet): display off/on, remap (horizontal address
/// increment, nibble order as drawn), column and row address windows.
const DISPLAY_OFF: u8 = 0xAE;
const DISPLAY_ON: u8 = 0xAF;
const REMAP: u8 = 0xA0;
const REMAP_VALUE: u8 = 0x52;
const SET_COLUMNS: u8 = 0x15;
const SET_ROWS: u8 = 0x75;

fn reg(at: usize) -> *mut u32 {
    at as *mut u32
}

fn set_bits(at: usize, bits: u32) {
    // SAFETY: an always-mapped system or peripheral register of this chip; this driver is its
    // only user.
    unsafe { write_volatile(reg(at), read_volatile(reg(at)) | bits) }
}

fn write(at: usize, v: u32) {
    // SAFETY: as for `set_bits`.
    unsafe { write_volatile(reg(at), v) }
}

fn read(at: usize) -> u32 {
    // SAFETY: as for `set_bits`.
    unsafe { read_volatile(reg(at)) }
}

/// The OLED, and the left pixel of a pair not sent yet.
pub struct Oled {
    pending: Option<u8>,
}

impl Oled {
    /// Clocks SSI0 and the GPIO ports, routes the pins, and turns the display on (blank as
    /// the controller left it).
    pub fn new() -> Oled {
        set_bits(RCGC1, 1 << 4);
        set_bits(RCGC2, (1 << 0) | (1 << 2));
        set_bits(GPIO_A + AFSEL, SSI_PINS);
        set_bits(GPIO_A + DEN, SSI_PINS);
        set_bits(GPIO_C + DIR, DC);
        set_bits(GPIO_C + DEN, DC);
        write(SSI0 + CR1, 0);
        write(SSI0 + CR0, CR0_8BIT_MODE3);
        write(SSI0 + CPSR, CPSR_DIV);
        write(SSI0 + CR1, CR1_SSE);
        let mut o = Oled { pending: None };
        o.command(&[DISPLAY_OFF, REMAP, REMAP_VALUE, DISPLAY_ON]);
        o
    }

    fn mode(data: bool) {
        write(GPIO_C + ((DC as usize) << 2), if data { DC } else { 0 });
    }

    fn byte(b: u8) {
        while read(SSI0 + SR) & SR_TNF == 0 {}
        write(SSI0 + DR, u32::from(b));
        while read(SSI0 + SR) & SR_RNE == 0 {}
        let _ = read(SSI0 + DR);
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
