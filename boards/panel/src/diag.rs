//! Everything that talks to the semihosting host (QEMU): diagnostics on its stderr and the
//! exit status. None of it touches the UART, and nothing the panel needs comes from the host
//! (the boot epoch is a counter in flash).
//!
//! On a real panel without a debugger attached, semihosting traps; such a board replaces this
//! module (no diagnostics).

use core::fmt::{self, Write as _};

use cortex_m_semihosting::{debug, hio};

fn write(args: fmt::Arguments<'_>) {
    if let Ok(mut err) = hio::hstderr() {
        let _ = err.write_fmt(args);
    }
}

/// One diagnostic line on the host's stderr.
pub fn line(args: fmt::Arguments<'_>) {
    write(format_args!("redmark-panel: {args}\n"));
}

/// The stack grew to a new high-water mark (`peak` = the larger of boot and serving).
pub fn stack(peak: usize, boot: usize, serving: usize) {
    line(format_args!("stack high-water {peak} bytes (boot {boot}, serving {serving})"));
}

/// Ends the emulation with a failure status (after a panic or a fault).
pub fn fail() -> ! {
    debug::exit(debug::EXIT_FAILURE);
    loop {
        cortex_m::asm::wfi();
    }
}
