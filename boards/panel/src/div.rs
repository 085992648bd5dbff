//! `__aeabi_uldivmod` (64-bit unsigned division on 32-bit ARM), small: one bit per step.
//!
//! compiler-builtins links its own as a weak symbol, a specialised division of about 0.9 KiB
//! of flash. The panel divides 64-bit numbers only to print them and to turn clock ticks
//! into seconds, a few times per message, where 64 steps cost nothing that shows.

/// Quotient of `n / d`, the remainder stored at `rem`. `d` is never 0: Rust checks before
/// it divides.
extern "C" fn udivmod(mut n: u64, d: u64, rem: *mut u64) -> u64 {
    let mut r: u64 = 0;
    for _ in 0..u64::BITS {
        // Shift the next bit of `n` into `r`; the quotient's bits shift into `n` from below.
        let carry = r >> 63;
        r = (r << 1) | (n >> 63);
        n <<= 1;
        if carry != 0 || r >= d {
            r = r.wrapping_sub(d);
            n |= 1;
        }
    }
    // SAFETY: `rem` points at the caller's 8-byte stack slot (`__aeabi_uldivmod` below).
    unsafe { rem.write(r) };
    n
}

/// ARM EABI `__aeabi_uldivmod`: `r0:r1 / r2:r3`, quotient in `r0:r1`, remainder in `r2:r3`
/// (a return Rust cannot express, hence the few instructions around [`udivmod`]).
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn __aeabi_uldivmod() {
    core::arch::naked_asm!(
        "push {{r4, lr}}",
        "sub sp, #16",
        "add r4, sp, #8",
        "str r4, [sp]",
        "bl {div}",
        "ldr r2, [sp, #8]",
        "ldr r3, [sp, #12]",
        "add sp, #16",
        "pop {{r4, pc}}",
        div = sym udivmod,
    )
}
