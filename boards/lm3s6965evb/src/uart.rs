//! UART0 of the LM3S6965 (an ARM PL011) as an `embedded-io` byte stream.
//!
//! Receiving polls the receive register; when it is empty the core sleeps (WFI) with the UART's receive
//! interrupt as the wake-up source. Interrupts stay masked (PRIMASK) for the firmware's whole
//! life: a pending interrupt still ends WFI, and no handler ever runs, so nothing races.

use core::convert::Infallible;
use core::ptr::{read_volatile, write_volatile};

use cortex_m::peripheral::NVIC;

use redmark_panel::stack;

use crate::clock;

const BASE: usize = 0x4000_C000;
const DR: usize = 0x00;
const FR: usize = 0x18;
const IBRD: usize = 0x24;
const FBRD: usize = 0x28;
const LCRH: usize = 0x2C;
const CR: usize = 0x30;
const IMSC: usize = 0x38;
const ICR: usize = 0x44;

const FR_RXFE: u32 = 1 << 4;
const FR_TXFF: u32 = 1 << 5;
/// Receive and receive-timeout interrupts.
const IMSC_RX: u32 = (1 << 4) | (1 << 6);

/// UART0's interrupt number (IRQ 5 on the LM3S6965).
#[derive(Clone, Copy)]
struct Uart0Irq;

// SAFETY: 5 is UART0's position in the LM3S6965 vector table.
unsafe impl cortex_m::interrupt::InterruptNumber for Uart0Irq {
    fn number(self) -> u16 {
        5
    }
}

fn reg(off: usize) -> *mut u32 {
    (BASE + off) as *mut u32
}

fn read(off: usize) -> u32 {
    // SAFETY: an aligned, always-mapped PL011 register; reads have no memory side effects.
    unsafe { read_volatile(reg(off)) }
}

fn write(off: usize, v: u32) {
    // SAFETY: as for `read`; this driver is the only user of UART0.
    unsafe { write_volatile(reg(off), v) }
}

/// UART0, 115200 8N1.
pub struct Uart {
    _private: (),
}

impl Uart {
    /// Sets UART0 up (clock gating is on at reset under QEMU; a real board would enable
    /// RCGC1.UART0 and the GPIO A pins first). Call once.
    pub fn new() -> Uart {
        write(CR, 0);
        // 12.5 MHz / (16 × 115200) = 6.78: IBRD 6, FBRD round(0.78 × 64) = 50.
        write(IBRD, 6);
        write(FBRD, 50);
        // 8N1, FIFO off. Not a slip: QEMU's PL011 empties its receive FIFO whenever FEN
        // changes, so switching it on at boot loses whatever a client sent before the firmware
        // ran (seen: the first message of a test arriving without its first bytes). With the
        // FIFO off QEMU holds further input until DR is read, so nothing is lost, at some
        // cost in throughput. A real board (no input before its own init) switches the FIFO on,
        // and needs an interrupt-fed receive ring or flow control to take 115200 baud while
        // it computes an answer.
        write(LCRH, 0x60);
        write(ICR, 0x7FF);
        write(IMSC, IMSC_RX);
        write(CR, 0x301);
        // SAFETY: unmasking in the NVIC only lets the IRQ pend (and so end WFI); PRIMASK
        // stays set, so no handler runs.
        unsafe { NVIC::unmask(Uart0Irq) };
        Uart { _private: () }
    }

    fn rx_empty() -> bool {
        read(FR) & FR_RXFE != 0
    }

    /// Sleeps until a byte may have arrived (or the clock ticked).
    fn idle() {
        NVIC::unpend(Uart0Irq);
        clock::poll();
        if Self::rx_empty() {
            // A byte arriving after the check pends the IRQ, which ends WFI at once.
            cortex_m::asm::wfi();
        }
        clock::poll();
    }
}

impl embedded_io::ErrorType for Uart {
    type Error = Infallible;
}

impl embedded_io::Read for Uart {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let mut n = 0;
            while n < buf.len() && !Self::rx_empty() {
                buf[n] = read(DR) as u8;
                n += 1;
            }
            if n > 0 {
                return Ok(n);
            }
            Self::idle();
        }
    }
}

impl embedded_io::Write for Uart {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        for &b in buf {
            while read(FR) & FR_TXFF != 0 {}
            write(DR, b.into());
        }
        Ok(buf.len())
    }

    /// The serve loop flushes after every answer: the moment to look at the stack, so a
    /// high-water report follows each answer that deepened it (before the next message).
    fn flush(&mut self) -> Result<(), Infallible> {
        stack::report_growth();
        Ok(())
    }
}
