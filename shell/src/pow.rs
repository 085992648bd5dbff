//! `pow`, the one C math function the binary calls (tokio's work-stealing scheduler tunes how
//! often it looks at its global queue with `f64::powf`), defined here so that the dynamic
//! linker does not load `libm.so.6` for it: that library's mapped pages were 0.3 MB of an idle
//! server's resident set, and one more library to open and relocate at every start. The
//! [`libm`] crate is rust-lang's port of musl's math library, in pure Rust.
//!
//! A definition in the executable takes precedence over a shared library's, so this is the
//! `pow` every caller in the process gets; were some dependency to need another libm function
//! later, the library would be loaded again and this would still be its `pow`.

/// The C library's `pow(x, y)`: `x` raised to the power `y`.
#[no_mangle]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

#[cfg(test)]
mod tests {
    /// `f64::powf` calls the C symbol `pow`, which in this binary is the one above.
    #[test]
    fn powf_is_this_pow_and_exact_on_exact_cases() {
        for (x, y, want) in [(2.0, 10.0, 1024.0), (0.5, 3.0, 0.125), (9.0, 0.5, 3.0)] {
            assert_eq!(f64::powf(x, y), want);
            assert_eq!(super::pow(x, y), want);
        }
        let (x, y) = (0.8f64, 2.7f64);
        assert!((x.powf(y) - (y * x.ln()).exp()).abs() < 1e-15);
        assert!(super::pow(-8.0, 1.0 / 3.0).is_nan());
    }
}
