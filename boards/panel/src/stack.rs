//! Stack high-water mark by painting: at boot every free word between the statics and the
//! stack pointer is painted; the lowest word no longer painted marks the deepest the stack
//! has been. Growth is reported over semihosting (stderr), never on the UART.

use core::ptr::{addr_of, read_volatile, write_volatile};
use core::sync::atomic::{AtomicUsize, Ordering};

const PAINT: u32 = 0x5AC3_5AC3;
/// Left unpainted below the painter's own stack pointer.
const MARGIN: usize = 256;

extern "C" {
    /// End of the statics (.data, .bss, .uninit): the stack's floor. From cortex-m-rt's link.x.
    static __sheap: u32;
    /// Initial stack pointer (top of RAM). From cortex-m-rt's link.x.
    static _stack_start: u32;
}

/// Deepest stack use while booting (before [`boot_done`] repainted).
static BOOT: AtomicUsize = AtomicUsize::new(0);
/// Deepest stack use while serving, as last reported.
static REPORTED: AtomicUsize = AtomicUsize::new(0);

fn floor() -> usize {
    addr_of!(__sheap) as usize
}

/// Top of the stack (where it starts, growing down).
pub fn top() -> usize {
    addr_of!(_stack_start) as usize
}

/// Bytes between the statics and the top of RAM: the most the stack could grow.
pub fn room() -> usize {
    top() - floor()
}

/// Paints the free stack. Call once, first thing in `main`.
#[inline(never)]
pub fn paint() {
    let sp = cortex_m::register::msp::read() as usize;
    let mut p = (floor() + 3) & !3;
    while p + MARGIN < sp {
        // SAFETY: [floor, sp - MARGIN) is RAM that nothing uses yet: above the statics and
        // below every live stack frame.
        unsafe { write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
}

/// Deepest stack use so far, bytes.
pub fn high_water() -> usize {
    let mut p = (floor() + 3) & !3;
    // SAFETY: reads RAM between the statics and the top of the stack, word-aligned.
    while p < top() && unsafe { read_volatile(p as *const u32) } == PAINT {
        p += 4;
    }
    top() - p
}

/// Ends the boot phase: keeps its high-water mark and paints again, so serving is measured
/// on its own. The peak reported is the larger of the two.
pub fn boot_done() {
    BOOT.store(high_water(), Ordering::Relaxed);
    paint();
}

/// Reports the high-water mark over semihosting when serving has deepened the stack since
/// the last report.
pub fn report_growth() {
    let serving = high_water();
    if serving > REPORTED.load(Ordering::Relaxed) {
        REPORTED.store(serving, Ordering::Relaxed);
        let boot = BOOT.load(Ordering::Relaxed);
        crate::diag::stack(serving.max(boot), boot, serving);
    }
}
