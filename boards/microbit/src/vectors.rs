//! The device part of the vector table: 16 entries (IRQ 0 to 15) instead of cortex-m-rt's
//! generic 240. The firmware enables UART0 (IRQ 2) and TIMER0 (IRQ 8), only as wake-up
//! sources: PRIMASK stays set, so no handler ever runs; every entry is the default handler.

extern "C" {
    /// cortex-m-rt's default exception handler.
    fn DefaultHandler();
}

/// Device interrupt vectors, placed right after the core exceptions by cortex-m-rt's link.x.
#[link_section = ".vector_table.interrupts"]
#[no_mangle]
#[used]
static __INTERRUPTS: [unsafe extern "C" fn(); 16] = [DefaultHandler; 16];
