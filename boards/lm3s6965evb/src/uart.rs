//! UART0 of the LM3S6965 (an ARM PL011) as an `embedded-io` byte stream, 115200 8N1, with
//! an interrupt-fed receive ring (and the 16-byte receive FIFO with feature `uart-fifo`).
//!
//! The UART0 interrupt ([`on_uart0`]) drains the FIFO into a 512-byte ring while the engine
//! computes, so a burst at 115 200 baud (11.5 bytes a millisecond) waits in RAM, not in a
//! FIFO that overflows after 1.4 ms. When the ring is full the handler stops draining and
//! masks the receive interrupt: further bytes wait in the FIFO (and, under QEMU, in the host
//! pipe; on a panel with RTS/CTS, at the sender) until the reader has made room, so no byte
//! is ever dropped by the panel. Reading takes bytes from the ring; when it is empty the core
//! sleeps (WFI) in a critical section, so a byte arriving after the check still ends WFI and
//! its handler runs right after.

use core::cell::UnsafeCell;
use core::convert::Infallible;
use core::ptr::{read_volatile, write_volatile};
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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
const IFLS: usize = 0x34;
const IMSC: usize = 0x38;
const ICR: usize = 0x44;

const FR_RXFE: u32 = 1 << 4;
const FR_TXFF: u32 = 1 << 5;
/// Receive and receive-timeout interrupts.
const IMSC_RX: u32 = (1 << 4) | (1 << 6);
/// 8N1, FIFOs off (on with feature `uart-fifo`).
const LCRH_8N1: u32 = if cfg!(feature = "uart-fifo") { 0x70 } else { 0x60 };

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
    // SAFETY: an aligned, always-mapped PL011 register; reads have no memory side effects
    // beyond the UART's own (DR pops the FIFO).
    unsafe { read_volatile(reg(off)) }
}

fn write(off: usize, v: u32) {
    // SAFETY: as for `read`; this driver is the only user of UART0.
    unsafe { write_volatile(reg(off), v) }
}

/// Bytes the ring holds (a power of two).
const RING: usize = 512;

/// A single-producer, single-consumer byte ring: the UART0 handler writes `buf[head]` and
/// then `head`; the reader reads `buf[tail]` and then writes `tail`. Indices run freely
/// (wrapping) and are reduced modulo [`RING`] on use.
struct Ring {
    buf: UnsafeCell<[u8; RING]>,
    head: AtomicUsize,
    tail: AtomicUsize,
    /// The handler found the ring full and masked the receive interrupt.
    stalled: AtomicBool,
}

// SAFETY: one producer (the handler) and one consumer (the reader) touch disjoint slots,
// ordered by the Release/Acquire index stores and loads.
unsafe impl Sync for Ring {}

static RX: Ring = Ring {
    buf: UnsafeCell::new([0; RING]),
    head: AtomicUsize::new(0),
    tail: AtomicUsize::new(0),
    stalled: AtomicBool::new(false),
};

/// Moves what the FIFO holds into the ring, until the FIFO is empty or the ring full (then
/// masks the receive interrupt). Runs in the handler, or with interrupts masked.
fn drain() {
    while read(FR) & FR_RXFE == 0 {
        let head = RX.head.load(Ordering::Relaxed);
        if head.wrapping_sub(RX.tail.load(Ordering::Acquire)) == RING {
            write(IMSC, 0);
            RX.stalled.store(true, Ordering::Relaxed);
            return;
        }
        let b = read(DR) as u8;
        // SAFETY: slot `head` is not readable by the consumer until `head` moves past it.
        unsafe { (*RX.buf.get())[head % RING] = b };
        RX.head.store(head.wrapping_add(1), Ordering::Release);
    }
}

/// UART0's interrupt handler (vector 5, see vectors.rs): fills the ring.
pub extern "C" fn on_uart0() {
    write(ICR, IMSC_RX);
    drain();
}

/// UART0, 115200 8N1.
pub struct Uart {
    _private: (),
}

impl Uart {
    /// Sets UART0 up (clock gating is on at reset under QEMU; a real board would enable
    /// RCGC1.UART0 and the GPIO A pins first). Call once, with interrupts masked.
    pub fn new() -> Uart {
        write(CR, 0);
        // 12.5 MHz / (16 × 115200) = 6.78: IBRD 6, FBRD round(0.78 × 64) = 50.
        write(IBRD, 6);
        write(FBRD, 50);
        // The FIFO stays off unless the board is built with `uart-fifo` (a real panel). Not a
        // slip: QEMU 7.2's PL011 empties its receive FIFO whenever FEN changes, and a client
        // may have sent before the firmware ran. Draining the held byte first does not save
        // the next one: reading DR lets QEMU deliver another byte at once, which the FEN
        // change then drops (seen: `tests/tests/client_qemu.rs`, whose client writes before the
        // panel is up, got a parse error). With the FIFO off QEMU holds input in the host pipe
        // until DR is read, so nothing is lost; QEMU 7.2 moves one byte per main-loop poll
        // whatever FEN says, so the FIFO would not speed it up either. The ring does.
        write(LCRH, LCRH_8N1);
        // Interrupt at 1/8 full (2 bytes), plus the receive timeout for the last ones.
        write(IFLS, 0);
        write(ICR, 0x7FF);
        write(IMSC, IMSC_RX);
        write(CR, 0x301);
        // Clearing the interrupts above dropped the one for a byte already held (a client may
        // write before the firmware runs): take it now, or no interrupt would ever come for it.
        drain();
        // SAFETY: the handler only touches the ring's producer side and UART0.
        unsafe { NVIC::unmask(Uart0Irq) };
        Uart { _private: () }
    }

    /// Sleeps until the ring may hold a byte (or the clock ticked).
    fn idle() {
        cortex_m::interrupt::disable();
        clock::poll();
        // Whatever the UART holds (the handler's interrupt may have been cleared before it
        // ran), unless the ring is stalled full.
        if !RX.stalled.load(Ordering::Relaxed) {
            drain();
        }
        if RX.head.load(Ordering::Acquire) == RX.tail.load(Ordering::Relaxed) {
            // An interrupt pending after the check ends WFI at once; its handler runs below.
            cortex_m::asm::wfi();
        }
        // SAFETY: the firmware's handlers (UART0, SysTick) are written for it.
        unsafe { cortex_m::interrupt::enable() };
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
            let tail = RX.tail.load(Ordering::Relaxed);
            let ready = RX.head.load(Ordering::Acquire).wrapping_sub(tail);
            if ready > 0 {
                let n = ready.min(buf.len());
                for (i, b) in buf[..n].iter_mut().enumerate() {
                    // SAFETY: slots [tail, head) are written and not written again until
                    // `tail` moves past them.
                    *b = unsafe { (*RX.buf.get())[tail.wrapping_add(i) % RING] };
                }
                RX.tail.store(tail.wrapping_add(n), Ordering::Release);
                if RX.stalled.load(Ordering::Relaxed) {
                    cortex_m::interrupt::free(|_| {
                        RX.stalled.store(false, Ordering::Relaxed);
                        drain();
                        if !RX.stalled.load(Ordering::Relaxed) {
                            write(IMSC, IMSC_RX);
                        }
                    });
                }
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
