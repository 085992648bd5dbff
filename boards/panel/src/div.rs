//! Integer division for the EABI, small: one bit per step. `__aeabi_uldivmod` (64-bit, every
//! target) and, on ARMv6-M, which has no divide instruction, `__aeabi_uidiv`/`__aeabi_uidivmod`.
//!
//! compiler-builtins links its own as weak symbols, specialised divisions of about 0.9 KiB
//! (64-bit) and 0.4 KiB (32-bit) of flash. The panel divides to print numbers and to turn clock
//! ticks into seconds, a few dozen times per message, where 32 or 64 steps cost nothing that
//! shows.

/// The top `steps` bits of `n` divided by `d`: (quotient, remainder). `d` is never 0: Rust
/// checks before it divides.
fn divide(mut n: u64, d: u64, steps: u32) -> (u64, u64) {
    let mut r: u64 = 0;
    for _ in 0..steps {
        // Shift the next bit of `n` into `r`; the quotient's bits shift into `n` from below.
        let carry = r >> 63;
        r = (r << 1) | (n >> 63);
        n <<= 1;
        if carry != 0 || r >= d {
            r = r.wrapping_sub(d);
            n |= 1;
        }
    }
    (n, r)
}

/// `n / d`, the remainder stored at `rem`: the Rust half of `__aeabi_uldivmod`.
extern "C" fn udivmod(n: u64, d: u64, rem: *mut u64) -> u64 {
    let (q, r) = divide(n, d, u64::BITS);
    // SAFETY: `rem` points at the caller's 8-byte stack slot (`__aeabi_uldivmod` below).
    unsafe { rem.write(r) };
    q
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

/// 32-bit `n / d` and `n % d`: `n` in the top half, so 32 steps leave the quotient below.
#[cfg(armv6m)]
fn divide32(n: u32, d: u32) -> (u32, u32) {
    let (q, r) = divide(u64::from(n) << 32, u64::from(d), u32::BITS);
    (q as u32, r as u32)
}

/// ARM EABI `__aeabi_uidiv` (ARMv6-M only).
#[cfg(armv6m)]
#[no_mangle]
pub extern "aapcs" fn __aeabi_uidiv(n: u32, d: u32) -> u32 {
    divide32(n, d).0
}

/// ARM EABI `__aeabi_uidivmod` (ARMv6-M only): quotient in `r0`, remainder in `r1`, which is
/// how a `u64` returns.
#[cfg(armv6m)]
#[no_mangle]
pub extern "aapcs" fn __aeabi_uidivmod(n: u32, d: u32) -> u64 {
    let (q, r) = divide32(n, d);
    (u64::from(r) << 32) | u64::from(q)
}
