//! redmark door-panel firmware for QEMU's `microbit` (nRF51822, Cortex-M0): the board-
//! independent panel (`redmark-panel`: engine, booking tools, flash store, boot counter) over
//! this board's UART0, NVMC flash and TIMER0 clock.
#![no_std]
#![no_main]

mod clock;
mod flash;
mod uart;
mod vectors;

use cortex_m_rt::entry;
use redmark_panel::{diag, stack, Bookings};

#[entry]
fn main() -> ! {
    // Masked for good: interrupts only end WFI (see uart.rs); no handler ever runs.
    cortex_m::interrupt::disable();
    let mut uart = uart::Uart::new();
    stack::paint();
    clock::start();
    let Some(store) = cortex_m::singleton!(: Bookings<flash::Nor> = Bookings::new(flash::Nor::take(), flash::BASE, flash::PAGES))
    else {
        diag::fail()
    };
    #[cfg(feature = "alloc-canary")]
    alloc_canary::run();
    redmark_panel::run(&mut uart, store, clock::now_s)
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
