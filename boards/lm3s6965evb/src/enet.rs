//! The LM3S6965's Ethernet controller (MAC + PHY, QEMU's `stellaris_enet`) as a
//! `smoltcp::phy::Device`: one frame at a time through the controller's FIFOs.
//!
//! Registers (datasheet "Ethernet Controller", base 0x4004_8000): MACRIS/MACIACK (+0x00,
//! read: raw interrupt status; write: clear), MACIM (+0x04), MACRCTL (+0x08), MACTCTL (+0x0C),
//! MACDATA (+0x10), MACIA0/1 (+0x14/+0x18, the station address), MACTHR (+0x1C), MACNP (+0x34,
//! frames waiting), MACTR (+0x38, transmit request).
//!
//! - Receive: MACDATA pops 32-bit words of the frame at the FIFO's head. Its first two bytes
//!   are a length L (the 2 length bytes + the frame + its 4-byte FCS), then the frame, then
//!   the FCS, in ceil(L / 4) words.
//! - Transmit: the first word written to MACDATA holds the payload length (the frame less its
//!   14-byte header) in its low half and the frame's first two bytes in its high half; the
//!   rest of the frame follows a word at a time; MACTR = 1 sends it. The controller pads to
//!   60 bytes (PADEN) and appends the FCS (CRC).
//! - Sleep: the receive interrupt (IRQ 42) is the wake-up source of [`idle`]: unmasked in the
//!   NVIC only around WFI, with PRIMASK set, so its handler never runs. SysTick (every 10 ms in
//!   the networked image, clock.rs) wakes it too: smoltcp's timers need it. Under QEMU it also
//!   paces the answers: what the panel sends through user networking reaches the host socket
//!   when QEMU's main loop next runs, which an idle guest's next timer deadline decides (with
//!   the 1.34 s period an answer took 1.3 s; with 10 ms a round trip takes about 10 ms, and
//!   an idle QEMU still uses next to no host CPU). A real controller sends at once.

use core::ptr::{read_volatile, write_volatile};

use cortex_m::peripheral::NVIC;
use smoltcp::phy::{Device, DeviceCapabilities, Medium, RxToken, TxToken};
use smoltcp::time::Instant;

use crate::clock;

const BASE: usize = 0x4004_8000;
const RIS: usize = 0x00;
const IACK: usize = 0x00;
const IM: usize = 0x04;
const RCTL: usize = 0x08;
const TCTL: usize = 0x0C;
const DATA: usize = 0x10;
const IA0: usize = 0x14;
const IA1: usize = 0x18;
const THR: usize = 0x1C;
const NP: usize = 0x34;
const TR: usize = 0x38;

const INT_RX: u32 = 0x01;
const INT_ALL: u32 = 0x7F;
const RCTL_RXEN: u32 = 0x01;
const RCTL_BADCRC: u32 = 0x08;
const RCTL_RSTFIFO: u32 = 0x10;
const TCTL_TXEN: u32 = 0x01;
const TCTL_PADEN: u32 = 0x02;
const TCTL_CRC: u32 = 0x04;
const TCTL_DUPLEX: u32 = 0x08;
const TR_NEWTX: u32 = 0x01;
/// MACTHR's reset value: no early transmit, a frame goes when MACTR says so.
const THR_OFF: u32 = 0x3F;

/// Longest frame without its FCS (1500-byte payload + 14-byte header).
pub const MTU: usize = 1514;
/// Ethernet header bytes, which MACDATA's length prefix does not count.
const HEADER: usize = 14;

/// Ethernet's interrupt number (IRQ 42 on the LM3S6965).
#[derive(Clone, Copy)]
struct EnetIrq;

// SAFETY: 42 is the Ethernet controller's position in the LM3S6965 vector table.
unsafe impl cortex_m::interrupt::InterruptNumber for EnetIrq {
    fn number(self) -> u16 {
        42
    }
}

fn read(off: usize) -> u32 {
    // SAFETY: an aligned, always-mapped controller register; this driver is its only user.
    unsafe { read_volatile((BASE + off) as *const u32) }
}

fn write(off: usize, v: u32) {
    // SAFETY: as for `read`.
    unsafe { write_volatile((BASE + off) as *mut u32, v) }
}

/// The controller, with one receive and one transmit frame buffer.
pub struct Enet {
    rx: [u8; MTU],
    tx: [u8; MTU],
}

impl Enet {
    /// Resets the FIFOs and turns receive and transmit on (clock gating and the PHY's LEDs are
    /// left as QEMU has them; a real board enables RCGC2.EMAC0/EPHY0 first: see
    /// docs/panel-network.md). Call once, with interrupts masked.
    pub fn new() -> Enet {
        write(RCTL, 0);
        write(TCTL, 0);
        write(RCTL, RCTL_RSTFIFO);
        write(THR, THR_OFF);
        write(IM, INT_RX);
        write(IACK, INT_ALL);
        write(TCTL, TCTL_TXEN | TCTL_PADEN | TCTL_CRC | TCTL_DUPLEX);
        write(RCTL, RCTL_RXEN | RCTL_BADCRC);
        Enet { rx: [0; MTU], tx: [0; MTU] }
    }

    /// The station address (MACIA0/1: the first four bytes, then two).
    pub fn mac() -> [u8; 6] {
        let [a, b, c, d] = read(IA0).to_le_bytes();
        let [e, f, _, _] = read(IA1).to_le_bytes();
        [a, b, c, d, e, f]
    }

    /// Pops the frame at the FIFO's head into `rx`; its length, or None if it does not fit
    /// (dropped whole).
    fn pop(&mut self) -> Option<usize> {
        let first = read(DATA);
        let total = (first & 0xFFFF) as usize;
        let frame = total.saturating_sub(6);
        let words = total.div_ceil(4);
        let fits = frame <= MTU && total >= 6;
        let mut at = 0;
        let mut put = |b: u8, rx: &mut [u8; MTU]| {
            if fits && at < frame {
                rx[at] = b;
            }
            at += 1;
        };
        let [_, _, b2, b3] = first.to_le_bytes();
        put(b2, &mut self.rx);
        put(b3, &mut self.rx);
        for _ in 1..words {
            for b in read(DATA).to_le_bytes() {
                put(b, &mut self.rx);
            }
        }
        fits.then_some(frame)
    }
}

/// Sleeps until a frame arrives or the clock ticks; returns at once when one is waiting.
pub fn idle() {
    cortex_m::interrupt::disable();
    clock::poll();
    // Lower the interrupt line, then look: a frame arriving after the look raises it again
    // and ends WFI.
    write(IACK, INT_RX);
    NVIC::unpend(EnetIrq);
    if read(NP) == 0 {
        // SAFETY: PRIMASK is set: the interrupt can end WFI but its handler cannot run; it is
        // masked again before PRIMASK clears.
        unsafe { NVIC::unmask(EnetIrq) };
        cortex_m::asm::wfi();
        NVIC::mask(EnetIrq);
        NVIC::unpend(EnetIrq);
    }
    // SAFETY: the firmware's only enabled handler is SysTick's (clock.rs).
    unsafe { cortex_m::interrupt::enable() };
}

/// A received frame.
pub struct Rx<'a>(&'a [u8]);

/// Room for one frame to send.
pub struct Tx<'a>(&'a mut [u8; MTU]);

impl RxToken for Rx<'_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(self.0)
    }
}

impl TxToken for Tx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let len = len.min(MTU);
        let r = f(&mut self.0[..len]);
        send(&self.0[..len]);
        r
    }
}

/// Writes `frame` into the transmit FIFO and sends it.
fn send(frame: &[u8]) {
    if frame.len() < HEADER {
        return;
    }
    // A frame still going out (real hardware) holds the FIFO until MACTR clears.
    while read(TR) & TR_NEWTX != 0 {}
    let payload = (frame.len() - HEADER) as u32;
    write(DATA, payload | u32::from(frame[0]) << 16 | u32::from(frame[1]) << 24);
    for chunk in frame[2..].chunks(4) {
        let mut w = [0u8; 4];
        w[..chunk.len()].copy_from_slice(chunk);
        write(DATA, u32::from_le_bytes(w));
    }
    write(TR, TR_NEWTX);
}

impl Device for Enet {
    type RxToken<'a> = Rx<'a>;
    type TxToken<'a> = Tx<'a>;

    fn receive(&mut self, _now: Instant) -> Option<(Rx<'_>, Tx<'_>)> {
        while read(NP) > 0 {
            if let Some(n) = self.pop() {
                return Some((Rx(&self.rx[..n]), Tx(&mut self.tx)));
            }
        }
        let _ = read(RIS);
        None
    }

    fn transmit(&mut self, _now: Instant) -> Option<Tx<'_>> {
        Some(Tx(&mut self.tx))
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ethernet;
        caps.max_transmission_unit = MTU;
        caps.max_burst_size = Some(1);
        caps
    }
}
