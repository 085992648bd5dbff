//! UART0 of the nRF51822 as an `embedded-io` byte stream, 115200 8N1.
//!
//! Receiving: a byte is ready when `EVENTS_RXDRDY` is set; the event is cleared before `RXD`
//! is read (the nRF51 sets it again if more bytes wait in its 6-byte receive FIFO). When none
//! is ready the core sleeps (WFI) with the UART's RXDRDY interrupt as the wake-up source.
//! Interrupts stay masked (PRIMASK) for the firmware's whole life: a pending interrupt still
//! ends WFI and no handler ever runs, so nothing races.
//!
//! Sending: write `TXD`, then wait for `EVENTS_TXDRDY` and clear it. (Waiting for TXDRDY
//! before the first byte ever sent would hang: nothing has set it yet.)

use core::convert::Infallible;
use core::ptr::{read_volatile, write_volatile};

use cortex_m::peripheral::NVIC;
use redmark_panel::stack;

use crate::clock;

const BASE: usize = 0x4000_2000;
const TASKS_STARTRX: usize = 0x000;
const TASKS_STARTTX: usize = 0x008;
const EVENTS_RXDRDY: usize = 0x108;
const EVENTS_TXDRDY: usize = 0x11C;
const EVENTS_ERROR: usize = 0x124;
const INTENSET: usize = 0x304;
const ERRORSRC: usize = 0x480;
const ENABLE: usize = 0x500;
const PSELTXD: usize = 0x50C;
const PSELRXD: usize = 0x514;
const RXD: usize = 0x518;
const TXD: usize = 0x51C;
const BAUDRATE: usize = 0x524;

/// BAUDRATE value for 115200 baud.
const BAUD_115200: u32 = 0x01D7_E000;
/// The micro:bit's USB-serial pins: TX P0.24, RX P0.25.
const PIN_TX: u32 = 24;
const PIN_RX: u32 = 25;

/// UART0's interrupt number (2 on the nRF51).
#[derive(Clone, Copy)]
struct Uart0Irq;

// SAFETY: 2 is UART0's position in the nRF51 vector table.
unsafe impl cortex_m::interrupt::InterruptNumber for Uart0Irq {
    fn number(self) -> u16 {
        2
    }
}

fn read(off: usize) -> u32 {
    // SAFETY: an aligned, always-mapped UART0 register.
    unsafe { read_volatile((BASE + off) as *const u32) }
}

fn write(off: usize, v: u32) {
    // SAFETY: as for `read`; this driver is the only user of UART0.
    unsafe { write_volatile((BASE + off) as *mut u32, v) }
}

/// UART0, 115200 8N1, no flow control.
pub struct Uart {
    _private: (),
}

impl Uart {
    /// Sets UART0 up. Call once.
    pub fn new() -> Uart {
        write(PSELTXD, PIN_TX);
        write(PSELRXD, PIN_RX);
        write(BAUDRATE, BAUD_115200);
        write(ENABLE, 4);
        write(INTENSET, 1 << 2); // RXDRDY
        write(TASKS_STARTTX, 1);
        write(TASKS_STARTRX, 1);
        // SAFETY: unmasking in the NVIC only lets the IRQ pend (and so end WFI); PRIMASK
        // stays set, so no handler runs.
        unsafe { NVIC::unmask(Uart0Irq) };
        Uart { _private: () }
    }

    fn ready() -> bool {
        read(EVENTS_RXDRDY) != 0
    }

    /// Sleeps until a byte may have arrived (or the clock ticked).
    fn idle() {
        NVIC::unpend(Uart0Irq);
        clock::poll();
        if !Self::ready() {
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
            if read(EVENTS_ERROR) != 0 {
                // Overrun or framing: clear and go on (the line framing recovers at '\n').
                write(EVENTS_ERROR, 0);
                write(ERRORSRC, read(ERRORSRC));
            }
            let mut n = 0;
            while n < buf.len() && Self::ready() {
                write(EVENTS_RXDRDY, 0);
                buf[n] = read(RXD) as u8;
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
            write(TXD, b.into());
            while read(EVENTS_TXDRDY) == 0 {}
            write(EVENTS_TXDRDY, 0);
        }
        Ok(buf.len())
    }

    /// The serve loop flushes after every answer: the moment to look at the stack.
    fn flush(&mut self) -> Result<(), Infallible> {
        stack::report_growth();
        Ok(())
    }
}
