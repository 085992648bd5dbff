//! SSI0 (PL022), the bus the OLED and the microSD card share: its setup and one byte each way.
//!
//! Wiring (the EK-LM3S6965, and QEMU's `lm3s6965evb`): SSI0's clock, frame, RX and TX on PA2,
//! PA3, PA4, PA5. QEMU selects one device by PD0: low selects the card (its chip select is
//! active low), high the OLED (QEMU models its select as active high on the same pin; the
//! board wires it to the frame pin), and QEMU drives PD0 high at reset. Each byte waits for
//! its echo in the receive FIFO before the next, so QEMU's PL022 (which stops at 8 unread
//! bytes) never stalls and a select or D/C change never lands under a byte being shifted.

use core::ptr::{read_volatile, write_volatile};

/// SYSCTL RCGC1 (SSI0: bit 4) and RCGC2 (GPIO A: bit 0).
pub const RCGC1: usize = 0x400F_E104;
pub const RCGC2: usize = 0x400F_E108;
/// GPIO port A (PL061); AFSEL +0x420, DEN +0x51C, DIR +0x400; data at +(mask << 2).
const GPIO_A: usize = 0x4000_4000;
pub const DIR: usize = 0x400;
const AFSEL: usize = 0x420;
pub const DEN: usize = 0x51C;
/// PA2 (SSI0Clk), PA3 (SSI0Fss), PA4 (SSI0Rx), PA5 (SSI0Tx).
const SSI_PINS: u32 = 0x3C;
/// SSI0 (PL022): CR0, CR1, DR, SR, CPSR.
const SSI0: usize = 0x4000_8000;
const CR0: usize = 0x00;
const CR1: usize = 0x04;
const DR: usize = 0x08;
const SR: usize = 0x0C;
const CPSR: usize = 0x10;
/// CR0: 8-bit frames, SPI, clock idle high, data on the second edge (the SSD0323's mode 3,
/// which SD cards take too).
const CR0_8BIT_MODE3: u32 = 0x07 | 0xC0;
/// CR1: SSI enabled, master.
const CR1_SSE: u32 = 0x02;
/// SR: transmit FIFO not full, receive FIFO not empty.
const SR_TNF: u32 = 0x02;
const SR_RNE: u32 = 0x04;
/// SSI clock: the core clock / 2 (CPSR) / (1 + SCR 0); the SSD0323 takes up to 4 MHz, a real
/// board at 50 MHz needs CPSR 14 or SCR > 0.
const CPSR_DIV: u32 = 2;

fn reg(at: usize) -> *mut u32 {
    at as *mut u32
}

/// Sets `bits` in the register at `at`.
pub fn set_bits(at: usize, bits: u32) {
    // SAFETY: an always-mapped system or peripheral register of this chip; the bus's users
    // (ssi, oled, sd) are its only writers and run on one thread.
    unsafe { write_volatile(reg(at), read_volatile(reg(at)) | bits) }
}

/// Writes the register at `at`.
pub fn write(at: usize, v: u32) {
    // SAFETY: as for `set_bits`.
    unsafe { write_volatile(reg(at), v) }
}

fn read(at: usize) -> u32 {
    // SAFETY: as for `set_bits`.
    unsafe { read_volatile(reg(at)) }
}

/// Clocks SSI0 and GPIO A, routes the pins and enables the bus (again: the same settings).
pub fn start() {
    set_bits(RCGC1, 1 << 4);
    set_bits(RCGC2, 1 << 0);
    set_bits(GPIO_A + AFSEL, SSI_PINS);
    set_bits(GPIO_A + DEN, SSI_PINS);
    write(SSI0 + CR1, 0);
    write(SSI0 + CR0, CR0_8BIT_MODE3);
    write(SSI0 + CPSR, CPSR_DIV);
    write(SSI0 + CR1, CR1_SSE);
}

/// Sends `b` and returns the byte clocked in meanwhile.
pub fn byte(b: u8) -> u8 {
    while read(SSI0 + SR) & SR_TNF == 0 {}
    write(SSI0 + DR, u32::from(b));
    while read(SSI0 + SR) & SR_RNE == 0 {}
    read(SSI0 + DR) as u8
}
