//! redmark door-panel firmware for QEMU's `lm3s6965evb` (Cortex-M3): the board-independent
//! panel (`redmark-panel`: engine, booking tools, flash store, boot counter) over this board's
//! UART0 (PL011), its flash (see [`flash`]) and a SysTick clock. With feature `net` the panel
//! serves over the Ethernet controller instead ([`enet`], smoltcp; see docs/panel-network.md),
//! shows the room's state on the board's OLED ([`oled`]) and keeps its bookings on the SD card
//! beside it on the same bus ([`sd`], [`ssi`]).
#![no_std]
#![no_main]

#[cfg(feature = "net")]
mod buttons;
mod clock;
#[cfg(feature = "net")]
mod enet;
mod flash;
#[cfg(feature = "net")]
mod oled;
#[cfg(feature = "net")]
mod sd;
#[cfg(feature = "net")]
mod ssi;
#[cfg(not(feature = "net"))]
mod uart;
mod vectors;

use cortex_m_rt::entry;
use redmark_panel::{diag, stack, Bookings};

#[entry]
fn main() -> ! {
    // Masked while the peripherals, the clock and the store's static are set up.
    cortex_m::interrupt::disable();
    #[cfg(not(feature = "net"))]
    let mut uart = uart::Uart::new();
    #[cfg(feature = "net")]
    let Some(device) = cortex_m::singleton!(: enet::Enet = enet::Enet::new()) else {
        diag::fail()
    };
    stack::paint();
    let Some(cp) = cortex_m::Peripherals::take() else { diag::fail() };
    clock::start(cp.SYST);
    #[cfg(not(feature = "net"))]
    let Some(store) =
        cortex_m::singleton!(: Bookings<flash::Nor> = Bookings::new(flash::Nor::take(), 0, flash::PAGES))
    else {
        diag::fail()
    };
    // Networked: the SD card if one answers (before the OLED is set up: the bus is shared).
    #[cfg(feature = "net")]
    let (medium, pages) = sd::Medium::find();
    #[cfg(feature = "net")]
    diag::text(medium.name());
    #[cfg(feature = "net")]
    let Some(store) = cortex_m::singleton!(: Bookings<sd::Medium> = Bookings::new(medium, 0, pages)) else {
        diag::fail()
    };
    #[cfg(feature = "alloc-canary")]
    alloc_canary::run();
    // From here on the UART0 handler fills the receive ring and SysTick counts its wraps.
    // SAFETY: both handlers are written for it (uart.rs, clock.rs); nothing else is enabled.
    unsafe { cortex_m::interrupt::enable() };
    #[cfg(not(feature = "net"))]
    redmark_panel::run(&mut uart, store, clock::now_s);
    #[cfg(feature = "net")]
    {
        let board = redmark_panel::net::Board {
            mac: enet::Enet::mac(),
            now_ms: clock::now_ms,
            now_s: clock::now_s,
            pressed: buttons::pressed,
            idle: enet::idle,
        };
        buttons::start();
        let mut screen = oled::Oled::new();
        redmark_panel::net::run(device, board, store, &mut screen)
    }
}

#[cfg(feature = "alloc-canary")]
mod alloc_canary {
    extern crate alloc;

    /// Allocates: with no global allocator in the image, linking must fail.
    #[inline(never)]
    pub fn run() {
        let v = alloc::vec![1u8; 3];
        core::hint::black_box(v);
    }
}
