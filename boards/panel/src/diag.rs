//! Everything that talks to the semihosting host (QEMU): diagnostics on its stderr and the
//! exit status. None of it touches the UART, and nothing the panel needs comes from the host
//! (the boot epoch is a counter in flash).
//!
//! Lines are assembled from [`Piece`]s, not `core::fmt`: the panel's own diagnostics then add
//! no formatting code (a hex `Formatter`, `fmt::Write` for the host stream) to the image.
//!
//! On a real panel without a debugger attached, semihosting traps; such a board replaces this
//! module (no diagnostics).

use cortex_m_semihosting::{debug, hio};

/// One piece of a diagnostic line.
pub enum Piece<'a> {
    /// Text as it is.
    Text(&'a str),
    /// A number in decimal.
    Num(u64),
    /// A 32-bit number as `0x` and eight hex digits.
    Hex(u32),
}

/// Longest rendering of a piece that is not text: `u64::MAX` has 20 digits.
const NUM_MAX: usize = 20;

/// Writes `n` right-aligned into `buf` in base `radix`, at least `width` digits; returns the
/// start of the digits.
fn digits(buf: &mut [u8; NUM_MAX], mut n: u64, radix: u64, width: usize) -> usize {
    let mut at = NUM_MAX;
    while n > 0 || NUM_MAX - at < width.max(1) {
        at -= 1;
        buf[at] = b"0123456789abcdef"[(n % radix) as usize];
        n /= radix;
    }
    at
}

/// One diagnostic line on the host's stderr: `redmark-panel: ` and the pieces.
pub fn line(pieces: &[Piece<'_>]) {
    let Ok(mut err) = hio::hstderr() else { return };
    let _ = err.write_all(b"redmark-panel: ");
    let mut buf = [0; NUM_MAX];
    for piece in pieces {
        let _ = match *piece {
            Piece::Text(t) => err.write_all(t.as_bytes()),
            Piece::Num(n) => {
                let at = digits(&mut buf, n, 10, 1);
                err.write_all(&buf[at..])
            }
            Piece::Hex(n) => {
                let at = digits(&mut buf, u64::from(n), 16, 8);
                err.write_all(b"0x").and_then(|()| err.write_all(&buf[at..]))
            }
        };
    }
    let _ = err.write_all(b"\n");
}

/// `panic at FILE:LINE` (with `--features panic-location` only). Through `core::fmt`: writing
/// the file name as a [`Piece`] costs more flash here (10 020 B of flash in all against 4 148 B).
#[cfg(feature = "panic-location")]
pub fn panic_at(at: &core::panic::Location<'_>) {
    use core::fmt::Write as _;
    if let Ok(mut err) = hio::hstderr() {
        let _ = writeln!(err, "redmark-panel: panic at {}:{}", at.file(), at.line());
    }
}

/// One line of text.
pub fn text(t: &str) {
    line(&[Piece::Text(t)]);
}

/// The stack grew to a new high-water mark (`peak` = the larger of boot and serving).
pub fn stack(peak: usize, boot: usize, serving: usize) {
    use Piece::{Num, Text};
    line(&[
        Text("stack high-water "),
        Num(peak as u64),
        Text(" bytes (boot "),
        Num(boot as u64),
        Text(", serving "),
        Num(serving as u64),
        Text(")"),
    ]);
}

/// Ends the emulation with a failure status (after a panic or a fault).
pub fn fail() -> ! {
    debug::exit(debug::EXIT_FAILURE);
    loop {
        cortex_m::asm::wfi();
    }
}
