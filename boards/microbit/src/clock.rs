//! The panel's monotonic clock: the nRF51's TIMER0, 32-bit, at 16 MHz / 2^9 = 31 250 Hz.
//!
//! The counter wraps every 2^32 / 31 250 s (about 38 hours); wraps are counted by polling
//! (a reading lower than the last). Compare events at 0 and 2^31 pend TIMER0's interrupt
//! twice a wrap, which ends any WFI, so the firmware polls at least that often even when
//! idle. Interrupts stay masked (PRIMASK): no handler runs.

use core::ptr::{read_volatile, write_volatile};
use core::sync::atomic::{AtomicU32, Ordering};

use cortex_m::peripheral::NVIC;

const BASE: usize = 0x4000_8000;
const TASKS_START: usize = 0x000;
const TASKS_CLEAR: usize = 0x00C;
const TASKS_CAPTURE3: usize = 0x04C;
const EVENTS_COMPARE0: usize = 0x140;
const EVENTS_COMPARE1: usize = 0x144;
const INTENSET: usize = 0x304;
const MODE: usize = 0x504;
const BITMODE: usize = 0x508;
const PRESCALER: usize = 0x510;
const CC0: usize = 0x540;
const CC1: usize = 0x544;
const CC3: usize = 0x54C;

/// Counter ticks per second.
pub const HZ: u64 = 16_000_000 >> 9;

/// TIMER0's interrupt number (8 on the nRF51).
#[derive(Clone, Copy)]
struct Timer0Irq;

// SAFETY: 8 is TIMER0's position in the nRF51 vector table.
unsafe impl cortex_m::interrupt::InterruptNumber for Timer0Irq {
    fn number(self) -> u16 {
        8
    }
}

fn write(off: usize, v: u32) {
    // SAFETY: an aligned TIMER0 register; this module is its only user.
    unsafe { write_volatile((BASE + off) as *mut u32, v) }
}

fn read(off: usize) -> u32 {
    // SAFETY: as for `write`.
    unsafe { read_volatile((BASE + off) as *const u32) }
}

/// Wraps counted, and the last reading (one execution context: plain loads and stores).
static WRAPS: AtomicU32 = AtomicU32::new(0);
static LAST: AtomicU32 = AtomicU32::new(0);

/// Starts TIMER0.
pub fn start() {
    write(MODE, 0); // timer
    write(BITMODE, 3); // 32 bit
    write(PRESCALER, 9);
    write(CC0, 0);
    write(CC1, 1 << 31);
    write(INTENSET, (1 << 16) | (1 << 17)); // COMPARE0, COMPARE1
    write(TASKS_CLEAR, 1);
    write(TASKS_START, 1);
    // SAFETY: unmasking in the NVIC only lets the IRQ pend (ending WFI); PRIMASK stays set.
    unsafe { NVIC::unmask(Timer0Irq) };
}

/// Clears the compare events (so TIMER0's interrupt line drops) and counts a wrap.
pub fn poll() {
    write(EVENTS_COMPARE0, 0);
    write(EVENTS_COMPARE1, 0);
    NVIC::unpend(Timer0Irq);
    ticks32();
}

fn ticks32() -> u32 {
    write(TASKS_CAPTURE3, 1);
    let now = read(CC3);
    if now < LAST.load(Ordering::Relaxed) {
        WRAPS.store(WRAPS.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
    }
    LAST.store(now, Ordering::Relaxed);
    now
}

/// Seconds since boot.
pub fn now_s() -> u64 {
    let low = ticks32();
    ((u64::from(WRAPS.load(Ordering::Relaxed)) << 32) | u64::from(low)) / HZ
}
