//! The panel on Ethernet: smoltcp over the board's `phy::Device`, serving MCP as newline JSON
//! on TCP ([`LINE_PORT`], as `redmark serve --tcp`) and as Streamable HTTP `POST /mcp`
//! ([`HTTP_PORT`], as `redmark serve --http`), no heap: every buffer is a static.
//!
//! - Address: [`STATIC_IP`]/[`STATIC_PREFIX`] via [`GATEWAY`] from boot (QEMU's user
//!   networking: 10.0.2.15/24 via 10.0.2.2); a DHCP lease replaces it when a server answers,
//!   and the static one comes back when the lease is lost.
//! - ARP, TCP retransmission and keep-alive are smoltcp's; ICMP echo is answered by the
//!   interface.
//! - [`HTTP_SOCKETS`] + [`LINE_SOCKETS`] connections at once. A connection's next message is
//!   read only once its last answer has left the send buffer, so a client that stops reading
//!   holds up only itself. Deadlines, not idle timers: a connection has [`IDLE_MS`] from its
//!   accept or last answer to begin its next message and [`MESSAGE_MS`] from that message's
//!   first byte to its last; and while every socket of a kind is taken, the connection that
//!   has waited longest (at least [`EVICT_MS`]) is reset so that one listens (`slots`).
//! - One engine and one output buffer serve every connection, one message at a time.
//! - The screen ([`face`]): the door's room, Free / Busy and until when, the next booking, the
//!   address, the clock; the buttons ([`door`]): "book now", "check in" on the booking under
//!   way, and "extend 15 min" and "end now" on a walk-up booking (the core's `extend_booking`
//!   and `end_booking`, feature `meeting-life`); the door room's no-shows released once a
//!   minute by the wall clock ([`door::release`]).
//! - The wall clock: with an SNTP server provisioned (`REDMARK_PANEL_SNTP`), [`sntp`] asks it
//!   for the time and [`wall`] keeps it (never back, bounded steps); `book_room` waits for it
//!   ([`clocked`]).

pub(crate) mod clocked;
pub mod door;
pub mod face;
mod http;
mod line;
mod slots;
pub mod sntp;
pub use crate::wall;

use core::ptr::addr_of_mut;
use core::sync::atomic::{AtomicBool, Ordering};

use embedded_storage::nor_flash::MultiwriteNorFlash;
use redmark_core::serve::Host;
use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet, SocketStorage};
use smoltcp::phy::Device;
use smoltcp::socket::{dhcpv4, tcp, udp};
use smoltcp::time::{Duration, Instant};
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpCidr, Ipv4Address, Ipv4Cidr};

use crate::diag::{self, Piece::Num, Piece::Text};
use crate::{stack, Bookings};

/// The panel's address until (and unless) DHCP gives one.
pub const STATIC_IP: Ipv4Address = Ipv4Address::new(10, 0, 2, 15);
/// Prefix length of [`STATIC_IP`]'s network.
pub const STATIC_PREFIX: u8 = 24;
/// The default route with the static address.
pub const GATEWAY: Ipv4Address = Ipv4Address::new(10, 0, 2, 2);
/// Streamable HTTP (`POST /mcp`).
pub const HTTP_PORT: u16 = 80;
/// Newline-delimited JSON-RPC over TCP.
pub const LINE_PORT: u16 = 7000;
/// HTTP connections served at once (the official conformance suite opens three at once).
pub const HTTP_SOCKETS: usize = 3;
/// TCP line connections served at once.
pub const LINE_SOCKETS: usize = 2;
/// A connection that begins no message this long (ms) after its accept or its last answer is
/// reset (also one that has not read its answer by then).
pub const IDLE_MS: u64 = 10_000;
/// A message must be whole this long (ms) after its first byte (an HTTP request's head and
/// body; a line): else 408 and the connection closes (HTTP), or it is reset (TCP lines).
pub const MESSAGE_MS: u64 = 5_000;
/// While every socket of a kind holds a connection, the one that has waited longest for its
/// next message is reset once it has waited this long (ms), so that a new client finds a
/// listener.
pub const EVICT_MS: u64 = 1_000;
/// The principal of every network request (the building's network is the trust boundary;
/// see docs/panel-network.md).
pub const PRINCIPAL: &[u8] = b"panel:eth0";

/// The TCP sockets, DHCP's and SNTP's.
const SOCKETS: usize = HTTP_SOCKETS + LINE_SOCKETS + 2;
const TCP_SOCKETS: usize = HTTP_SOCKETS + LINE_SOCKETS;
/// Receive buffer per HTTP connection (which holds a whole request: head and body), bytes.
pub const BUF: usize = 2816;
/// Send buffer per connection, bytes: the largest answer and its framing.
pub const TX_BUF: usize = 3328;
/// Room kept in the send buffer for the HTTP head and SSE framing.
const FRAMING: usize = 384;
/// The largest answer: the engine's output buffer (`tools/list`, the largest, is about
/// 2.9 KiB since the tools take days, start times and titles; a larger answer becomes the
/// engine's "response too large" error).
pub const ANSWER_MAX: usize = TX_BUF - FRAMING;
/// Receive window of a line connection (its `Lines` buffer holds the line).
const LINE_RX: usize = 512;

/// What the board supplies besides its device.
pub struct Board {
    /// The Ethernet address.
    pub mac: [u8; 6],
    /// Milliseconds since boot.
    pub now_ms: fn() -> u64,
    /// Seconds since boot.
    pub now_s: fn() -> u64,
    /// The buttons pressed since the last call ([`door`]'s bits; 0 on a board without any).
    pub pressed: fn() -> u8,
    /// Sleeps until the device may have a frame or the clock ticked (returns at once when a
    /// frame is waiting).
    pub idle: fn(),
}

// Every buffer of the network side is a static of its own, each zero at reset, so they all
// go to .bss (one static holding them all with any non-zero byte would go to .data, which
// costs as much flash as RAM). Taken once by [`run`] (TAKEN).
static mut STORAGE: [SocketStorage<'static>; SOCKETS] = [SocketStorage::EMPTY; SOCKETS];
static mut HTTP_RX: [[u8; BUF]; HTTP_SOCKETS] = [[0; BUF]; HTTP_SOCKETS];
static mut LINE_RXS: [[u8; LINE_RX]; LINE_SOCKETS] = [[0; LINE_RX]; LINE_SOCKETS];
static mut TX: [[u8; TX_BUF]; TCP_SOCKETS] = [[0; TX_BUF]; TCP_SOCKETS];
static mut HTTP: [http::Conn; HTTP_SOCKETS] = [const { http::Conn::new() }; HTTP_SOCKETS];
static mut LINES: [line::Conn; LINE_SOCKETS] = [const { line::Conn::new() }; LINE_SOCKETS];
static mut OUT: [u8; ANSWER_MAX] = [0; ANSWER_MAX];
static mut SCRATCH: [u8; http::REQUEST_MAX] = [0; http::REQUEST_MAX];
static mut SNTP_META: [[udp::PacketMetadata; 1]; 2] = [[udp::PacketMetadata::EMPTY; 1]; 2];
static mut SNTP_BUF: [[u8; sntp::PACKET]; 2] = [[0; sntp::PACKET]; 2];
static TAKEN: AtomicBool = AtomicBool::new(false);

/// What one pass over a connection did.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pass {
    /// Nothing to do until the network brings something.
    Idle,
    /// Read or wrote: poll the interface again before sleeping.
    Busy,
}

/// Serves the panel on `device` for ever, its bookings in `store` (as [`crate::run`]).
/// Draws the face on `screen` ([`face::NoScreen`] for a board without one).
pub fn run<D: Device, F: MultiwriteNorFlash, S: face::Screen>(
    device: &mut D,
    board: Board,
    store: &'static mut Bookings<F>,
    screen: &mut S,
) -> ! {
    let (mut engine, mut host) = crate::setup(store, board.now_s);
    if TAKEN.swap(true, Ordering::Relaxed) {
        diag::fail()
    }
    // SAFETY: taken once (TAKEN above); nothing else names these statics.
    let (storage, http_rx, line_rx, tx, http_conns, lines, out, scratch, sntp_meta, sntp_buf) = unsafe {
        (
            &mut *addr_of_mut!(STORAGE),
            &mut *addr_of_mut!(HTTP_RX),
            &mut *addr_of_mut!(LINE_RXS),
            &mut *addr_of_mut!(TX),
            &mut *addr_of_mut!(HTTP),
            &mut *addr_of_mut!(LINES),
            &mut *addr_of_mut!(OUT),
            &mut *addr_of_mut!(SCRATCH),
            &mut *addr_of_mut!(SNTP_META),
            &mut *addr_of_mut!(SNTP_BUF),
        )
    };

    let now = || Instant::from_millis((board.now_ms)() as i64);
    let mut config = Config::new(HardwareAddress::Ethernet(EthernetAddress(board.mac)));
    config.random_seed = u64::from_le_bytes(host.entropy());
    let mut iface = Interface::new(config, device, now());
    set_static(&mut iface);

    let mut sockets = SocketSet::new(&mut storage[..]);
    let mut handles = [None::<SocketHandle>; TCP_SOCKETS];
    let rxs = http_rx.iter_mut().map(|r| &mut r[..]).chain(line_rx.iter_mut().map(|r| &mut r[..]));
    for (i, (r, t)) in rxs.zip(tx.iter_mut()).enumerate() {
        let mut s = tcp::Socket::new(tcp::SocketBuffer::new(r), tcp::SocketBuffer::new(&mut t[..]));
        // Answer at once: the panel writes a whole answer per message, nothing to coalesce.
        s.set_ack_delay(None);
        s.set_nagle_enabled(false);
        s.set_keep_alive(Some(Duration::from_secs(30)));
        handles[i] = Some(sockets.add(s));
    }
    let dhcp = sockets.add(dhcpv4::Socket::new());
    let [meta_rx, meta_tx] = sntp_meta;
    let [buf_rx, buf_tx] = sntp_buf;
    let udp = sockets.add(udp::Socket::new(
        udp::PacketBuffer::new(&mut meta_rx[..], &mut buf_rx[..]),
        udp::PacketBuffer::new(&mut meta_tx[..], &mut buf_tx[..]),
    ));
    let mut sntp = crate::provision::SNTP.map(sntp::Sntp::new);
    let mut shown = face::Face::default();
    crate::stack::boot_done();
    crate::announce(&host);
    diag::line(&[
        Text("net: "),
        Num(u64::from(STATIC_IP.octets()[0])),
        Text("."),
        Num(u64::from(STATIC_IP.octets()[1])),
        Text("."),
        Num(u64::from(STATIC_IP.octets()[2])),
        Text("."),
        Num(u64::from(STATIC_IP.octets()[3])),
        Text(" (static; DHCP replaces it), http port "),
        Num(HTTP_PORT.into()),
        Text(", tcp port "),
        Num(LINE_PORT.into()),
    ]);

    let mut leased = false;
    // The wall minute release last ran at (once a minute: bookings are on a minute grid).
    let mut released_at = None;
    loop {
        let _ = iface.poll(now(), device, &mut sockets);
        dhcp_event(&mut iface, sockets.get_mut::<dhcpv4::Socket>(dhcp), &mut leased);
        let ms = (board.now_ms)();
        if let Some(sntp) = sntp.as_mut() {
            sntp.poll(sockets.get_mut::<udp::Socket>(udp), &mut host, ms, (board.now_s)());
        }
        let wall = wall::is_set().then(|| wall::now((board.now_s)()));
        door::press((board.pressed)(), &mut engine, &mut host, wall, &mut out[..]);
        // Release with a trusted time only (SNTP's, never back, bounded steps: panel.md).
        if let Some(m) = wall.and_then(redmark_core::booking::minute_of).filter(|&m| released_at != Some(m)) {
            door::release(&mut engine, m);
            crate::forget_past(engine.app_mut().0.store_mut(), m);
            released_at = Some(m);
        }
        let ip = iface.ipv4_addr().unwrap_or(STATIC_IP);
        let store = engine.app_mut().0.store_mut();
        let writes = store.writes();
        shown.look(screen, store, writes, crate::FLOOR, ms, wall, ip.octets());
        let mut pass = Pass::Idle;
        for (i, h) in handles.iter().enumerate() {
            let Some(h) = *h else { continue };
            let s = sockets.get_mut::<tcp::Socket>(h);
            let p = if i < HTTP_SOCKETS {
                let lent = http::Lent { out: &mut out[..], scratch: &mut *scratch };
                http::serve(s, &mut http_conns[i], &mut engine, &mut host, lent, ms, ip)
            } else {
                line::serve(s, &mut lines[i - HTTP_SOCKETS], &mut engine, &mut host, &mut out[..], ms)
            };
            if p == Pass::Busy {
                pass = Pass::Busy;
            }
        }
        let (http_handles, line_handles) = handles.split_at(HTTP_SOCKETS);
        for p in [
            slots::keep_one_listening(
                &mut sockets,
                http_handles.iter().flatten().copied().zip(http_conns.iter().map(|c| c.wait)),
                ms,
            ),
            slots::keep_one_listening(
                &mut sockets,
                line_handles.iter().flatten().copied().zip(lines.iter().map(|c| c.wait)),
                ms,
            ),
        ] {
            if p == Pass::Busy {
                pass = Pass::Busy;
            }
        }
        if pass == Pass::Busy {
            stack::report_growth();
            continue;
        }
        let _ = iface.poll(now(), device, &mut sockets);
        (board.idle)();
    }
}

/// The static address and route.
fn set_static(iface: &mut Interface) {
    set_address(iface, Ipv4Cidr::new(STATIC_IP, STATIC_PREFIX), Some(GATEWAY));
}

fn set_address(iface: &mut Interface, cidr: Ipv4Cidr, router: Option<Ipv4Address>) {
    iface.update_ip_addrs(|addrs| {
        addrs.clear();
        let _ = addrs.push(IpCidr::Ipv4(cidr));
    });
    iface.routes_mut().remove_default_ipv4_route();
    if let Some(gw) = router {
        let _ = iface.routes_mut().add_default_ipv4_route(gw);
    }
}

/// Takes a DHCP lease, or goes back to the static address when one is lost.
fn dhcp_event(iface: &mut Interface, dhcp: &mut dhcpv4::Socket, leased: &mut bool) {
    match dhcp.poll() {
        None => {}
        Some(dhcpv4::Event::Configured(c)) => {
            set_address(iface, c.address, c.router);
            *leased = true;
            let o = c.address.address().octets();
            diag::line(&[
                Text("net: DHCP lease "),
                Num(o[0].into()),
                Text("."),
                Num(o[1].into()),
                Text("."),
                Num(o[2].into()),
                Text("."),
                Num(o[3].into()),
            ]);
        }
        Some(dhcpv4::Event::Deconfigured) => {
            set_static(iface);
            if core::mem::take(leased) {
                diag::text("net: DHCP lease lost, static address");
            }
        }
    }
}
