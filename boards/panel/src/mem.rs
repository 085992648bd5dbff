//! `memcpy`, `memmove`, `memset` and their ARM EABI aliases, small: a word loop when source
//! and destination share an alignment, else a byte loop.
//!
//! compiler-builtins links its own as weak symbols: tuned, unrolled ones of about 2.9 KiB of
//! flash together (`memmove` alone is 1.6 KiB). These strong definitions replace them for
//! about 0.2 KiB. The panel copies at most a few KiB per message, where the difference in speed
//! does not show next to the UART.
//!
//! Every access is volatile so the compiler cannot recognise a loop here as a copy and turn it
//! back into a call to `memcpy` (itself).

use core::ptr::{read_volatile, write_volatile};

const WORD: usize = core::mem::size_of::<u32>();

/// Copies `n` bytes from `s` to `d`, lowest address first (so `d` may overlap `s` above `d`).
unsafe fn forward(d: *mut u8, s: *const u8, n: usize) {
    let mut i = 0;
    if (d as usize ^ s as usize) % WORD == 0 {
        while i < n && (d as usize + i) % WORD != 0 {
            write_volatile(d.add(i), read_volatile(s.add(i)));
            i += 1;
        }
        while n - i >= WORD {
            write_volatile(d.add(i).cast::<u32>(), read_volatile(s.add(i).cast::<u32>()));
            i += WORD;
        }
    }
    while i < n {
        write_volatile(d.add(i), read_volatile(s.add(i)));
        i += 1;
    }
}

/// Copies `n` bytes from `s` to `d`, highest address first (so `d` may overlap `s` below `d`).
unsafe fn backward(d: *mut u8, s: *const u8, mut n: usize) {
    while n > 0 {
        n -= 1;
        write_volatile(d.add(n), read_volatile(s.add(n)));
    }
}

/// Sets `n` bytes at `d` to `c`.
unsafe fn fill(d: *mut u8, c: u8, n: usize) {
    let mut i = 0;
    while i < n && (d as usize + i) % WORD != 0 {
        write_volatile(d.add(i), c);
        i += 1;
    }
    let w = u32::from_ne_bytes([c; WORD]);
    while n - i >= WORD {
        write_volatile(d.add(i).cast::<u32>(), w);
        i += WORD;
    }
    while i < n {
        write_volatile(d.add(i), c);
        i += 1;
    }
}

/// Copies between overlapping or disjoint regions.
unsafe fn moved(d: *mut u8, s: *const u8, n: usize) {
    if (d as usize) <= (s as usize) {
        forward(d, s, n)
    } else {
        backward(d, s, n)
    }
}

/// C `memcpy`.
#[no_mangle]
pub unsafe extern "C" fn memcpy(d: *mut u8, s: *const u8, n: usize) -> *mut u8 {
    forward(d, s, n);
    d
}

/// C `memmove`.
#[no_mangle]
pub unsafe extern "C" fn memmove(d: *mut u8, s: *const u8, n: usize) -> *mut u8 {
    moved(d, s, n);
    d
}

/// C `memset`.
#[no_mangle]
pub unsafe extern "C" fn memset(d: *mut u8, c: i32, n: usize) -> *mut u8 {
    fill(d, c as u8, n);
    d
}

/// ARM EABI `__aeabi_memcpy` (and the 4- and 8-byte-aligned variants below).
#[no_mangle]
pub unsafe extern "aapcs" fn __aeabi_memcpy(d: *mut u8, s: *const u8, n: usize) {
    forward(d, s, n)
}

/// ARM EABI `__aeabi_memcpy4`.
#[no_mangle]
pub unsafe extern "aapcs" fn __aeabi_memcpy4(d: *mut u8, s: *const u8, n: usize) {
    forward(d, s, n)
}

/// ARM EABI `__aeabi_memcpy8`.
#[no_mangle]
pub unsafe extern "aapcs" fn __aeabi_memcpy8(d: *mut u8, s: *const u8, n: usize) {
    forward(d, s, n)
}

/// ARM EABI `__aeabi_memmove`.
#[no_mangle]
pub unsafe extern "aapcs" fn __aeabi_memmove(d: *mut u8, s: *const u8, n: usize) {
    moved(d, s, n)
}

/// ARM EABI `__aeabi_memmove4`.
#[no_mangle]
pub unsafe extern "aapcs" fn __aeabi_memmove4(d: *mut u8, s: *const u8, n: usize) {
    moved(d, s, n)
}

/// ARM EABI `__aeabi_memmove8`.
#[no_mangle]
pub unsafe extern "aapcs" fn __aeabi_memmove8(d: *mut u8, s: *const u8, n: usize) {
    moved(d, s, n)
}

/// ARM EABI `__aeabi_memset` (note the argument order: length before value).
#[no_mangle]
pub unsafe extern "aapcs" fn __aeabi_memset(d: *mut u8, n: usize, c: i32) {
    fill(d, c as u8, n)
}

/// ARM EABI `__aeabi_memset4`.
#[no_mangle]
pub unsafe extern "aapcs" fn __aeabi_memset4(d: *mut u8, n: usize, c: i32) {
    fill(d, c as u8, n)
}

/// ARM EABI `__aeabi_memset8`.
#[no_mangle]
pub unsafe extern "aapcs" fn __aeabi_memset8(d: *mut u8, n: usize, c: i32) {
    fill(d, c as u8, n)
}

/// ARM EABI `__aeabi_memclr`.
#[no_mangle]
pub unsafe extern "aapcs" fn __aeabi_memclr(d: *mut u8, n: usize) {
    fill(d, 0, n)
}

/// ARM EABI `__aeabi_memclr4`.
#[no_mangle]
pub unsafe extern "aapcs" fn __aeabi_memclr4(d: *mut u8, n: usize) {
    fill(d, 0, n)
}

/// ARM EABI `__aeabi_memclr8`.
#[no_mangle]
pub unsafe extern "aapcs" fn __aeabi_memclr8(d: *mut u8, n: usize) {
    fill(d, 0, n)
}
