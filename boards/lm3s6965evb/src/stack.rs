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

/// Reports the high-water mark over semihosting when it has grown since the last report.
pub fn report_growth() {
    let hw = high_water();
    if hw > REPORTED.load(Ordering::Relaxed) {
        REPORTED.store(hw, Ordering::Relaxed);
        crate::diag::stack(hw);
    }
}
