//! The evaluation board's five-button gamepad: up, down, left, right on PE0-PE3 and select on
//! PF1, each pulling its pin low while pressed (QEMU's `lm3s6965evb` presses them for the
//! arrow keys and Ctrl, e.g. QMP `send-key`). A press counts when the button is let go: the
//! GPIO port's edge detector, set to rising edges, latches it in its raw interrupt status, so a
//! press shorter than the panel's look is not missed (no interrupt is enabled). On release
//! because QEMU 7.2 starts the pins low, as if every button were held: the first press makes no
//! falling edge, its release a rising one.

use core::ptr::{read_volatile, write_volatile};

use redmark_panel::net::door::{DOWN, LEFT, RIGHT, SELECT, UP};

/// SYSCTL RCGC2: GPIO E (bit 4) and F (bit 5).
const RCGC2: usize = 0x400F_E108;
const GPIO_E: usize = 0x4002_4000;
const GPIO_F: usize = 0x4002_5000;
/// PL061 IEV (rising edge), DEN, PUR (pull-up), RIS (raw interrupt status), ICR (clear).
const IEV: usize = 0x40C;
const DEN: usize = 0x51C;
const PUR: usize = 0x510;
const RIS: usize = 0x414;
const ICR: usize = 0x41C;
/// PE0-PE3; PF1.
const E_PINS: u32 = 0x0F;
const F_PINS: u32 = 0x02;

fn reg(at: usize) -> *mut u32 {
    at as *mut u32
}

/// Clocks the ports, makes the pins digital inputs with pull-ups that latch rising edges;
/// forgets earlier edges.
pub fn start() {
    // SAFETY: system and GPIO registers of this chip; this module is their only user.
    unsafe {
        write_volatile(reg(RCGC2), read_volatile(reg(RCGC2)) | (1 << 4) | (1 << 5));
        for (port, pins) in [(GPIO_E, E_PINS), (GPIO_F, F_PINS)] {
            write_volatile(reg(port + DEN), read_volatile(reg(port + DEN)) | pins);
            write_volatile(reg(port + PUR), read_volatile(reg(port + PUR)) | pins);
            write_volatile(reg(port + IEV), read_volatile(reg(port + IEV)) | pins);
            write_volatile(reg(port + ICR), pins);
        }
    }
}

/// The buttons pressed since the last call (`redmark_panel::net::door`'s bits).
pub fn pressed() -> u8 {
    // SAFETY: as in `start`; reading RIS and writing ICR only touch these pins' edge latches.
    let (e, f) = unsafe {
        let e = read_volatile(reg(GPIO_E + RIS)) & E_PINS;
        let f = read_volatile(reg(GPIO_F + RIS)) & F_PINS;
        write_volatile(reg(GPIO_E + ICR), e);
        write_volatile(reg(GPIO_F + ICR), f);
        (e, f)
    };
    let mut bits = 0;
    for (pin, bit) in [(1, UP), (2, DOWN), (4, LEFT), (8, RIGHT)] {
        if e & pin != 0 {
            bits |= bit;
        }
    }
    if f & 0x02 != 0 {
        bits |= SELECT;
    }
    bits
}
