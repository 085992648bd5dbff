//! SNTP (RFC 4330) client over one smoltcp UDP socket: asks the provisioned server every
//! [`RETRY_MS`] until it answers, then every [`SYNC_EVERY_MS`]; [`super::wall`] decides what an
//! answer does to the clock.
//!
//! A request carries 8 fresh random bytes as its transmit timestamp and only an answer from
//! the server's address and port that echoes them as its originate timestamp, once, is taken
//! (an off-path attacker must guess them; a replayed answer finds no request waiting). The
//! answer's transmit time is taken as now: the round trip (milliseconds) is ignored, slots
//! are hours.

use smoltcp::socket::udp;
use smoltcp::wire::{IpAddress, IpEndpoint, Ipv4Address};

use super::wall;
use crate::PanelHost;
use redmark_core::serve::Host;

/// Between requests while the panel has no time, ms.
pub const RETRY_MS: u64 = 2_000;
/// Between requests once the clock is set, ms (RFC 4330's floor is 15 s).
pub const SYNC_EVERY_MS: u64 = 16_000;
/// The UDP port the panel asks from.
pub const LOCAL_PORT: u16 = 50_123;
/// An SNTP message without extensions, bytes.
pub const PACKET: usize = 48;
/// Seconds from the NTP epoch (1900) to the unix one (1970).
const NTP_TO_UNIX: u64 = 2_208_988_800;

/// The client's state: the server, when to ask next, the request waiting for its answer.
pub struct Sntp {
    server: IpEndpoint,
    next_ms: u64,
    waiting: Option<[u8; 8]>,
}

impl Sntp {
    /// A client of `server` (address, port), asking at once.
    pub fn new(server: ([u8; 4], u16)) -> Sntp {
        let [a, b, c, d] = server.0;
        let server = IpEndpoint::new(IpAddress::Ipv4(Ipv4Address::new(a, b, c, d)), server.1);
        Sntp { server, next_ms: 0, waiting: None }
    }

    /// One pass: takes an answer if one came, asks again when due.
    pub(crate) fn poll(&mut self, s: &mut udp::Socket<'_>, host: &mut PanelHost, now_ms: u64, boot_s: u64) {
        if !s.is_open() {
            let _ = s.bind(LOCAL_PORT);
        }
        let mut packet = [0u8; PACKET];
        while let Ok((n, meta)) = s.recv_slice(&mut packet) {
            if meta.endpoint != self.server || n < PACKET {
                continue;
            }
            if let Some(t) = self.waiting.and_then(|nonce| answer(&packet, &nonce)) {
                self.waiting = None;
                let _ = wall::told(t, boot_s);
            }
        }
        if now_ms >= self.next_ms {
            let nonce = host.entropy();
            let mut request = [0u8; PACKET];
            // LI 0, version 4, mode 3 (client).
            request[0] = 0x23;
            request[40..48].copy_from_slice(&nonce);
            if s.send_slice(&request, self.server).is_ok() {
                self.waiting = Some(nonce);
            }
            self.next_ms = now_ms + if wall::is_set() { SYNC_EVERY_MS } else { RETRY_MS };
        }
    }
}

/// The unix time a server's answer to the request `nonce` gives, if it is one: mode 4
/// (server), version 3 or 4, not "unsynchronized" (LI 3, stratum 0 or above 15), the nonce
/// echoed, a transmit time.
fn answer(p: &[u8; PACKET], nonce: &[u8; 8]) -> Option<u64> {
    let (li, version, mode, stratum) = (p[0] >> 6, (p[0] >> 3) & 7, p[0] & 7, p[1]);
    if li == 3 || !(3..=4).contains(&version) || mode != 4 || !(1..=15).contains(&stratum) {
        return None;
    }
    if p[24..32] != nonce[..] {
        return None;
    }
    let secs = u64::from(u32::from_be_bytes([p[40], p[41], p[42], p[43]]));
    // Era 0 ends in 2036: a time with the top bit clear is era 1's.
    let secs = if secs >= 1 << 31 { secs } else { secs + (1 << 32) };
    secs.checked_sub(NTP_TO_UNIX)
}
