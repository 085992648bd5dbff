//! redmark door-panel firmware for QEMU's `lm3s6965evb` (Cortex-M3): the core engine and the
//! booking tools over UART0, newline-delimited JSON-RPC in and out. No heap, fixed buffers.
//!
//! - UART0 carries only JSON-RPC: diagnostics go over semihosting (QEMU's stderr).
//! - Clock: SysTick seconds since boot; the boot epoch (see [`diag::boot_epoch`]) is bound
//!   into every requestState, so state from before a reset fails as "Invalid requestState".
//! - Sealing key: `REDMARK_PANEL_KEY` at build time (see `build.rs`).
//! - Principal: [`PRINCIPAL`], one fixed identity: the panel's only client is whatever is
//!   wired to its UART (the room's own display or a gateway), authenticated by being wired.
//! - Nonces: SHA-256(nonce secret ‖ epoch ‖ message counter), first 8 bytes; the secret is
//!   derived from the key. Unique across resets as long as the epoch is.
//! - Lines longer than [`LINE_MAX`] bytes get a -32600 error and the panel goes on serving.
//! - Idle waits sleep in WFI with interrupts masked; UART receive and SysTick wake it.
#![no_std]
#![no_main]

mod clock;
mod diag;
mod stack;
mod uart;
mod vectors;

mod provision {
    include!(concat!(env!("OUT_DIR"), "/provision.rs"));
}

use core::panic::PanicInfo;

use cortex_m_rt::{entry, exception, ExceptionFrame};
use redmark_core::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
use redmark_core::engine::{Config, Note, ServerInfo};
use redmark_core::seal::{Key, KeyRing};
use redmark_core::serve::{serve, Host};
use redmark_core::wire::lines::Lines;
use redmark_core::Engine;
use sha2::{Digest, Sha256};

/// The principal every request is served as.
pub const PRINCIPAL: &[u8] = b"panel:uart0";
/// Longest accepted line (one JSON-RPC message), bytes; longer lines get -32600.
pub const LINE_MAX: usize = 2048;
/// Output buffer: the largest answer (`tools/list`) is about 1.9 KiB.
pub const OUT_LEN: usize = 3072;
/// Bookings the RAM store holds; beyond that `book_room` reports the store full.
pub const BOOKINGS: usize = 32;

const INFO: ServerInfo = ServerInfo {
    name: "redmark-panel",
    version: env!("CARGO_PKG_VERSION"),
    instructions: Some("Door panel of one floor: book_room, cancel_booking, list_rooms."),
};

type Panel = Engine<BookingApp<'static, MemStore<BOOKINGS>>>;

/// The panel's clock and nonce source.
struct PanelHost {
    nonce_secret: [u8; 32],
    epoch: u32,
    counter: u64,
}

impl Host for PanelHost {
    fn now(&mut self) -> u64 {
        clock::now_s()
    }

    fn entropy(&mut self) -> [u8; 8] {
        self.counter += 1;
        let mut h = Sha256::new();
        h.update(self.nonce_secret);
        h.update(self.epoch.to_le_bytes());
        h.update(self.counter.to_le_bytes());
        let d = h.finalize();
        let mut n = [0; 8];
        n.copy_from_slice(&d[..8]);
        n
    }

    fn note(&mut self, note: Note) {
        diag::line(format_args!("{}", note_text(note)));
    }
}

/// A note as text, without `Debug` formatting (which costs kilobytes of flash).
fn note_text(note: Note) -> &'static str {
    use redmark_core::seal::SealError as E;
    match note {
        Note::StateRejected(e) => match e {
            E::Expired => "requestState rejected: expired",
            E::BadTag => "requestState rejected: bad tag (tampered, or another principal, epoch or request)",
            E::UnknownKey => "requestState rejected: unknown key",
            _ => "requestState rejected: malformed",
        },
        Note::ResponseTooLarge => "response too large for the output buffer",
        Note::OutputTooSmall => "output buffer too small",
        Note::Internal(why) => why,
        _ => "note",
    }
}

/// What `serve` borrows for the firmware's life, all in statics (counted as static RAM).
struct Parts {
    engine: &'static mut Panel,
    lines: &'static mut Lines<LINE_MAX>,
    out: &'static mut [u8; OUT_LEN],
    host: PanelHost,
}

/// Builds the engine and buffers into their statics. Not inlined: the engine is assembled
/// on this frame before it moves to its static, and that frame must be gone (its stack
/// reused) while `serve` runs.
#[inline(never)]
fn setup(epoch: u32) -> Parts {
    let Ok(key) = Key::new(1, &provision::KEY) else { diag::fail() };
    let nonce_secret: [u8; 32] =
        Sha256::new().chain_update(b"redmark-panel nonce v1").chain_update(provision::KEY).finalize().into();
    let config = Config { state_ttl_s: provision::STATE_TTL_S, epoch, ..Config::default() };
    let app = BookingApp::new(DEFAULT_FLOOR, MemStore::new(), INFO);
    let Some(engine) = cortex_m::singleton!(: Panel = Engine::new(app, KeyRing::new(key), config)) else {
        diag::fail()
    };
    let Some(lines) = cortex_m::singleton!(: Lines<LINE_MAX> = Lines::new()) else { diag::fail() };
    let Some(out) = cortex_m::singleton!(: [u8; OUT_LEN] = [0; OUT_LEN]) else { diag::fail() };
    Parts { engine, lines, out, host: PanelHost { nonce_secret, epoch, counter: 0 } }
}

#[entry]
fn main() -> ! {
    // Masked for good: interrupts only end WFI (see uart.rs); no handler ever runs.
    cortex_m::interrupt::disable();
    let mut uart = uart::Uart::new();
    stack::paint();
    let Some(cp) = cortex_m::Peripherals::take() else { diag::fail() };
    clock::start(cp.SYST);
    let epoch = diag::boot_epoch();
    let Parts { engine, lines, out, mut host } = setup(epoch);
    stack::boot_done();

    let key = if provision::KEY_IS_DEV { "DEVELOPMENT" } else { "provisioned" };
    diag::line(format_args!(
        "up: epoch {epoch}, state ttl {} s, {key} key, stack room {} bytes",
        provision::STATE_TTL_S,
        stack::room()
    ));
    #[cfg(feature = "alloc-canary")]
    alloc_canary::run();

    let _ = serve(engine, &mut uart, lines, out, PRINCIPAL, &mut host);
    // The UART never ends; reaching here is a fault.
    diag::fail()
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

#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    match info.location() {
        Some(at) => diag::line(format_args!("panic at {}:{}", at.file(), at.line())),
        None => diag::line(format_args!("panic")),
    }
    diag::fail()
}

#[exception]
unsafe fn HardFault(ef: &ExceptionFrame) -> ! {
    diag::line(format_args!("hard fault at pc {:#010x}", ef.pc()));
    diag::fail()
}
