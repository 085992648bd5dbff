//! The panel's monotonic clock: SysTick counting core cycles, its wraps counted by polling.
//!
//! SysTick runs from the core clock with the largest reload (2^24 cycles, about 1.34 s at
//! 12.5 MHz). A wrap is counted once: by the SysTick handler, or, while interrupts are masked
//! (a reading, the idle check), by [`poll`], which takes the pending exception over.

use core::cell::Cell;

use cortex_m::interrupt::Mutex;
use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::{SCB, SYST};
use cortex_m_rt::exception;

/// Core clock of QEMU's lm3s6965evb at reset: the 200 MHz PLL divided by SYSDIV+1 = 16.
pub const CORE_HZ: u64 = 12_500_000;
/// SysTick's period, cycles: the largest (2^24, about 1.34 s) on the UART image; 10 ms on the
/// networked one, whose wrap also wakes the loop for smoltcp's timers (retransmission,
/// keep-alive) and, under QEMU, paces what user networking delivers (see enet.rs).
#[cfg(not(feature = "net"))]
const PERIOD: u64 = 1 << 24;
#[cfg(feature = "net")]
const PERIOD: u64 = CORE_HZ / 100;

/// SysTick wraps since boot, in 64 bits (a 32-bit count of 10 ms wraps would roll over after
/// 497 days); read and counted with interrupts masked.
static WRAPS: Mutex<Cell<u64>> = Mutex::new(Cell::new(0));

/// Counts one wrap.
fn count_wrap() {
    cortex_m::interrupt::free(|cs| {
        let wraps = WRAPS.borrow(cs);
        wraps.set(wraps.get() + 1);
    });
}

/// Starts SysTick.
pub fn start(mut syst: SYST) {
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload((PERIOD - 1) as u32);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
}

/// SysTick: a wrap.
#[exception]
fn SysTick() {
    count_wrap();
}

/// Counts a wrap still pending (call with interrupts masked).
pub fn poll() {
    if SCB::is_pendst_pending() {
        SCB::clear_pendst();
        count_wrap();
    }
}

/// Core cycles since boot.
pub fn ticks() -> u64 {
    cortex_m::interrupt::free(|cs| {
        poll();
        let mut cur = SYST::get_current();
        if SCB::is_pendst_pending() {
            // Wrapped between the poll and the reading: count it and read again.
            poll();
            cur = SYST::get_current();
        }
        WRAPS.borrow(cs).get() * PERIOD + (PERIOD - 1 - u64::from(cur))
    })
}

/// Seconds since boot.
pub fn now_s() -> u64 {
    ticks() / CORE_HZ
}

/// Milliseconds since boot.
#[cfg_attr(not(feature = "net"), allow(dead_code))]
pub fn now_ms() -> u64 {
    ticks() / (CORE_HZ / 1000)
}
