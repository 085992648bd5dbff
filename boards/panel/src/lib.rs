//! The redmark door panel, whatever the board: the core engine and the booking tools over a
//! byte stream (the board's UART), newline-delimited JSON-RPC in and out, bookings and the
//! boot counter in the board's NOR flash. No heap, fixed buffers.
//!
//! A board crate supplies only what its hardware decides: the UART (`embedded-io`), the
//! flash (`embedded-storage` NOR), the clock, the vector table and the memory map; then it
//! calls [`run`]. This crate holds the rest:
//!
//! - Provisioning (`build.rs`): the sealing key from `REDMARK_PANEL_KEY`, the requestState
//!   lifetime from `REDMARK_PANEL_STATE_TTL`.
//! - Bookings: [`Bookings`], `redmark_flash_store::FlashStore` over the board's flash:
//!   acknowledged bookings survive a reset or a power cut.
//! - Boot epoch: a counter in the same flash, incremented (durably) at every boot before
//!   anything is served and bound into every requestState, so state from before a reset
//!   fails as "Invalid requestState" without the host's help.
//! - Principal: [`PRINCIPAL`], one fixed identity: the panel's only client is whatever is
//!   wired to its UART (the room's own display or a gateway), authenticated by being wired.
//! - Nonces: SHA-256(nonce secret ‖ epoch ‖ message counter), first 8 bytes; the secret is
//!   derived from the key. Unique across resets as long as the epoch is.
//! - Time: the host tells a UART panel the time, HMAC-tagged under its own time key
//!   ([`time`]); the clock's rules ([`wall`]) are the networked panel's; without a time
//!   `book_room` is refused.
//! - Lines longer than [`LINE_MAX`] bytes get a -32600 error and the panel goes on serving.
//! - Diagnostics ([`diag`]) go over semihosting, never the UART; [`stack`] measures the
//!   stack's high-water mark.
#![no_std]

pub mod diag;
#[cfg(feature = "net")]
pub mod net;
pub mod stack;
#[cfg(not(feature = "net"))]
pub mod time;
pub mod wall;

#[cfg_attr(not(feature = "net"), allow(dead_code))]
mod provision {
    include!(concat!(env!("OUT_DIR"), "/provision.rs"));
}

use core::panic::PanicInfo;

use cortex_m_rt::{exception, ExceptionFrame};
use diag::Piece::{Hex, Num, Text};
use embedded_storage::nor_flash::MultiwriteNorFlash;
use redmark_core::booking::{BookingApp, Floor, Minute, DEFAULT_FLOOR};
use redmark_core::engine::{Config, Note, ServerInfo};
use redmark_core::seal::{Key, KeyRing};
use redmark_core::serve::Host;
use redmark_core::Engine;
use redmark_flash_store::FlashStore;
use sha2::{Digest, Sha256};

/// The principal every request is served as.
pub const PRINCIPAL: &[u8] = b"panel:uart0";
/// Longest accepted line (one JSON-RPC message), bytes; longer lines get -32600.
pub const LINE_MAX: usize = 2048;
/// Output buffer: the largest answer (`tools/list`) is 2.9 KiB (2 931 bytes with its newline).
pub const OUT_LEN: usize = 3072;

/// The panel's floor: its rooms, on the wall clock of the zone provisioned at build time (UTC
/// without the `zone` feature).
#[cfg(not(feature = "zone"))]
const ZONED: Floor<'static> = DEFAULT_FLOOR;
/// The panel's floor: its rooms, on the wall clock of the zone provisioned at build time
/// (`REDMARK_PANEL_ZONE`).
#[cfg(feature = "zone")]
const ZONED: Floor<'static> = Floor { zone: &provision::ZONE, ..DEFAULT_FLOOR };
/// Minutes after a booking's start by which someone at the door checks it in ("up"), else
/// the panel releases it (the networked image's floor: `meeting-life`).
#[cfg(feature = "meeting-life")]
pub const CHECK_IN_MINUTES: u16 = 10;
/// The panel's floor (with the door's check-in window where the door has buttons).
#[cfg(not(feature = "meeting-life"))]
pub const FLOOR: Floor<'static> = ZONED;
/// The panel's floor (with the door's check-in window where the door has buttons).
#[cfg(feature = "meeting-life")]
pub const FLOOR: Floor<'static> = Floor { check_in_minutes: Some(CHECK_IN_MINUTES), ..ZONED };

/// Minutes a booking is kept after it ends, then forgotten ([`forget_past`]).
pub const KEEP_ENDED_MINUTES: Minute = 24 * 60;

/// Forgets the bookings that ended [`KEEP_ENDED_MINUTES`] before `minute` (a trusted time), a
/// few a call (each a pass over the store and a flash write): the store's room, which active
/// bookings fill, is for the meetings to come. Call it once a minute.
pub(crate) fn forget_past<F: MultiwriteNorFlash>(store: &mut Bookings<F>, minute: Minute) {
    if store.forget_ended(minute.saturating_sub(KEEP_ENDED_MINUTES), 4).is_err() {
        diag::text("store: forgetting past bookings failed");
    }
}

/// The booking store over a board's flash `F`: its records read in place, no booking in
/// RAM. It holds `redmark_flash_store::MAX_BOOKINGS` (active, plus cancelled ones until room
/// is needed) where the board's region is sized for them (the micro:bit's), fewer on a
/// smaller one (`FlashStore::capacity`); beyond that many active ones `book_room` reports the
/// store full.
pub type Bookings<F> = FlashStore<F>;

const INFO: ServerInfo = ServerInfo {
    name: "redmark-panel",
    version: env!("CARGO_PKG_VERSION"),
    instructions: Some("Door panel of one floor: book_room, cancel_booking, list_rooms."),
};

/// The panel's clock and nonce source.
pub(crate) struct PanelHost {
    nonce_secret: [u8; 32],
    epoch: u32,
    counter: u64,
    now_s: fn() -> u64,
}

impl Host for PanelHost {
    fn now(&mut self) -> u64 {
        wall::now((self.now_s)())
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
        diag::text(note_text(note));
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

/// On the UART, `book_room` waits for the host's time.
#[cfg(not(feature = "net"))]
type PanelApp<F> = time::Timed<BookingApp<'static, &'static mut Bookings<F>>>;
/// Networked, `book_room` waits for the wall clock (SNTP).
#[cfg(feature = "net")]
type PanelApp<F> = net::clocked::Clocked<BookingApp<'static, &'static mut Bookings<F>>>;
pub(crate) type Panel<F> = Engine<PanelApp<F>>;

/// Loads the store and counts this boot, then builds the engine. Not inlined: its frame
/// (the key schedule, the engine as built) is gone while serving.
#[inline(never)]
pub(crate) fn setup<F: MultiwriteNorFlash>(
    store: &'static mut Bookings<F>,
    now_s: fn() -> u64,
) -> (Panel<F>, PanelHost) {
    let Ok(epoch) = store.load().and_then(|()| store.boot()) else {
        diag::text("the booking store in flash failed");
        diag::fail()
    };
    let Ok(key) = Key::new(1, &provision::KEY) else { diag::fail() };
    let nonce_secret: [u8; 32] =
        Sha256::new().chain_update(b"redmark-panel nonce v1").chain_update(provision::KEY).finalize().into();
    let config = Config { state_ttl_s: provision::STATE_TTL_S, epoch, ..Config::default() };
    let app = BookingApp::new(FLOOR, store, INFO);
    #[cfg(feature = "net")]
    let app = net::clocked::Clocked(app, false);
    #[cfg(not(feature = "net"))]
    let app = time::Timed(app);
    (Engine::new(app, KeyRing::new(key), config), PanelHost { nonce_secret, epoch, counter: 0, now_s })
}

/// Serves the panel on `uart` for ever (the host's time methods too: [`time`]), its bookings in `store` (a static the board made
/// with [`FlashStore::new`]; loaded here), its clock `now_s` (seconds since boot). Call with
/// the stack painted ([`stack::paint`]).
#[cfg(not(feature = "net"))]
pub fn run<U: embedded_io::Read + embedded_io::Write, F: MultiwriteNorFlash>(
    uart: &mut U,
    store: &'static mut Bookings<F>,
    now_s: fn() -> u64,
) -> ! {
    let (mut engine, mut host) = setup(store, now_s);
    let Some(lines) = cortex_m::singleton!(: redmark_core::wire::lines::Lines<LINE_MAX> = redmark_core::wire::lines::Lines::new())
    else {
        diag::fail()
    };
    let Some(out) = cortex_m::singleton!(: [u8; OUT_LEN] = [0; OUT_LEN]) else { diag::fail() };
    stack::boot_done();
    announce(&host);

    time::serve(uart, &mut engine, lines, out, &mut host)
}

/// The boot line on semihosting: `up: epoch N, ...` (the tests wait for it).
pub(crate) fn announce(host: &PanelHost) {
    let key = if provision::KEY_IS_DEV { "DEVELOPMENT" } else { "provisioned" };
    diag::line(&[
        Text("up: epoch "),
        Num(host.epoch.into()),
        Text(", state ttl "),
        Num(provision::STATE_TTL_S.into()),
        Text(" s, "),
        Text(key),
        Text(" key, stack room "),
        Num(stack::room() as u64),
        Text(" bytes"),
    ]);
}

/// Reports a panic and ends the emulation. Where it happened is printed only with
/// `--features panic-location`: reading the location keeps every panic site's `Location` and
/// file name in the image (about 4 KiB of flash); without it LTO drops them all.
#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    #[cfg(feature = "panic-location")]
    if let Some(at) = info.location() {
        diag::panic_at(at);
        diag::fail()
    }
    let _ = info;
    diag::text("panic");
    diag::fail()
}

#[exception]
unsafe fn HardFault(ef: &ExceptionFrame) -> ! {
    diag::line(&[Text("hard fault at pc "), Hex(ef.pc())]);
    diag::fail()
}
