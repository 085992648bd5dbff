//! Everything that talks to the semihosting host (QEMU): diagnostics on its stderr, the boot
//! epoch, and the exit status. None of it touches the UART.
//!
//! On a real panel without a debugger attached, semihosting traps; such a board replaces this
//! module (no diagnostics, the boot epoch from a counter kept in flash).

use core::fmt::{self, Write as _};

use cortex_m_semihosting::{debug, hio, syscall};

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

/// The boot epoch, bound into every requestState so state from before a reset fails.
///
/// QEMU keeps nothing across runs, so the epoch comes from the host at boot: `epoch=N` on the
/// semihosting command line (`-append "epoch=N"`, what the tests use to model resets), else
/// the host's clock in seconds (SYS_TIME), which differs on every boot a second or more apart.
pub fn boot_epoch() -> u32 {
    let mut buf = [0u8; 96];
    // SAFETY: SYS_GET_CMDLINE writes at most buf.len() bytes (NUL included) into buf.
    let r = unsafe { syscall!(GET_CMDLINE, buf.as_mut_ptr(), buf.len() - 1) };
    if r == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let args = core::str::from_utf8(&buf[..end]).unwrap_or("");
        if let Some(n) = args.split(' ').find_map(|a| a.strip_prefix("epoch=")?.parse().ok()) {
            return n;
        }
    }
    // SAFETY: SYS_TIME takes no argument block.
    unsafe { syscall!(TIME) as u32 }
}
