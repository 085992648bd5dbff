//! The device part of the vector table: 16 entries (IRQ 0 to 15) instead of cortex-m-rt's
//! generic 240, which saves about 900 bytes of flash. One handler: UART0 (IRQ 5) fills the
//! receive ring (see uart.rs); every other entry is the default handler.

extern "C" {
    /// cortex-m-rt's default exception handler (loops; see `HardFault` for faults).
    fn DefaultHandler();
}

/// Device interrupt vectors, placed right after the core exceptions by cortex-m-rt's link.x.
#[link_section = ".vector_table.interrupts"]
#[no_mangle]
#[used]
static __INTERRUPTS: [unsafe extern "C" fn(); VECTORS] = {
    #[allow(unused_mut)]
    let mut v: [unsafe extern "C" fn(); VECTORS] = [DefaultHandler; VECTORS];
    #[cfg(not(feature = "net"))]
    {
        v[5] = crate::uart::on_uart0;
    }
    v
};

/// Device vectors: up to UART0's (IRQ 5) or, networked, Ethernet's (IRQ 42, which only ever
/// wakes WFI: see enet.rs).
#[cfg(not(feature = "net"))]
const VECTORS: usize = 16;
#[cfg(feature = "net")]
const VECTORS: usize = 43;
