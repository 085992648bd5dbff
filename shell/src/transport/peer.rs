//! Who is on the other end of a loopback TCP connection: TCP clients act as the local user, so
//! on Linux a connection is served only if the connecting socket belongs to the same user as
//! the server. The owner is asked of the kernel with one exact `sock_diag` netlink lookup of
//! the connecting socket (microseconds, whatever the number of sockets); if netlink is not
//! available, `/proc/net/tcp{,6}` is read instead (slow with thousands of sockets). Elsewhere
//! the check is not available: `serve --tcp` is refused there unless `--tcp-any-local-user`
//! says any local process that can reach the loopback port may be served (docs/platforms.md).

#[cfg(target_os = "linux")]
use std::collections::HashMap;
use std::net::SocketAddr;

/// Maps connecting sockets to their owners' uids, re-reading the kernel's table on a miss (one
/// read covers every connection waiting in the accept backlog).
#[derive(Default)]
pub struct PeerUids {
    #[cfg(target_os = "linux")]
    cache: HashMap<(SocketAddr, SocketAddr), u32>,
    #[cfg(target_os = "linux")]
    diag: Option<diag::Diag>,
    #[cfg(target_os = "linux")]
    no_netlink: bool,
}

/// What the check found.
#[derive(Debug, PartialEq, Eq)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub enum Verdict {
    /// Same user as the server.
    Same,
    /// Another user (uid).
    Other(u32),
    /// The connecting socket is not in the table (already gone), or the table is unreadable.
    Unknown,
    /// No way to tell on this platform.
    #[cfg_attr(target_os = "linux", allow(dead_code))]
    Unsupported,
}

impl PeerUids {
    /// Whether the process connected from `peer` to our `local` address runs as our user.
    #[cfg(target_os = "linux")]
    pub fn check(&mut self, peer: SocketAddr, local: SocketAddr) -> Verdict {
        let Some(me) = own_uid() else {
            return Verdict::Unknown;
        };
        if !self.no_netlink && self.diag.is_none() {
            match diag::Diag::new() {
                Ok(d) => self.diag = Some(d),
                Err(e) => {
                    tracing::warn!(
                        "sock_diag netlink unavailable ({e}); reading /proc/net/tcp instead"
                    );
                    self.no_netlink = true;
                }
            }
        }
        if let Some(d) = &mut self.diag {
            return match d.uid(peer, local) {
                Ok(Some(u)) if u == me => Verdict::Same,
                Ok(Some(u)) => Verdict::Other(u),
                Ok(None) => Verdict::Unknown,
                Err(e) => {
                    tracing::warn!("sock_diag lookup failed: {e}");
                    self.diag = None;
                    Verdict::Unknown
                }
            };
        }
        let uid = match self.cache.remove(&(peer, local)) {
            Some(uid) => Some(uid),
            None => {
                self.reload(local);
                self.cache.remove(&(peer, local))
            }
        };
        match uid {
            Some(u) if u == me => Verdict::Same,
            Some(u) => Verdict::Other(u),
            None => Verdict::Unknown,
        }
    }

    /// Not Linux: unsupported.
    #[cfg(not(target_os = "linux"))]
    pub fn check(&mut self, _peer: SocketAddr, _local: SocketAddr) -> Verdict {
        Verdict::Unsupported
    }

    #[cfg(target_os = "linux")]
    fn reload(&mut self, local: SocketAddr) {
        self.cache.clear();
        let file = if local.is_ipv4() {
            "/proc/net/tcp"
        } else {
            "/proc/net/tcp6"
        };
        let Ok(table) = std::fs::read_to_string(file) else {
            return;
        };
        let want = encode(local);
        for line in table.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (Some(src), Some(dst), Some(uid)) = (f.get(1), f.get(2), f.get(7)) else {
                continue;
            };
            if *dst != want {
                continue;
            }
            if let (Some(peer), Ok(uid)) = (decode(src), uid.parse()) {
                self.cache.insert((peer, local), uid);
            }
        }
    }
}

#[cfg(target_os = "linux")]
mod diag {
    use std::io;
    use std::net::SocketAddr;

    use netlink_packet_core::{NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_REQUEST};
    use netlink_packet_sock_diag::constants::{AF_INET, AF_INET6, IPPROTO_TCP};
    use netlink_packet_sock_diag::inet::{ExtensionFlags, InetRequest, SocketId, StateFlags};
    use netlink_packet_sock_diag::SockDiagMessage;
    use netlink_sys::protocols::NETLINK_SOCK_DIAG;
    use netlink_sys::{Socket, SocketAddr as NlAddr};

    /// A `NETLINK_SOCK_DIAG` socket for exact lookups.
    pub struct Diag {
        sock: Socket,
        buf: Vec<u8>,
    }

    fn err(e: impl std::fmt::Display) -> io::Error {
        io::Error::other(e.to_string())
    }

    impl Diag {
        pub fn new() -> io::Result<Diag> {
            let mut sock = Socket::new(NETLINK_SOCK_DIAG)?;
            sock.bind_auto()?;
            sock.connect(&NlAddr::new(0, 0))?;
            Ok(Diag {
                sock,
                buf: vec![0; 8192],
            })
        }

        /// The uid owning the TCP socket bound to `peer` and connected to `local`, or `None`
        /// if there is no such socket (any more).
        pub fn uid(&mut self, peer: SocketAddr, local: SocketAddr) -> io::Result<Option<u32>> {
            let mut hdr = NetlinkHeader::default();
            hdr.flags = NLM_F_REQUEST;
            let mut msg = NetlinkMessage::new(
                hdr,
                SockDiagMessage::InetRequest(InetRequest {
                    family: if peer.is_ipv4() { AF_INET } else { AF_INET6 },
                    protocol: IPPROTO_TCP,
                    extensions: ExtensionFlags::empty(),
                    states: StateFlags::all(),
                    socket_id: SocketId {
                        source_port: peer.port(),
                        destination_port: local.port(),
                        source_address: peer.ip(),
                        destination_address: local.ip(),
                        interface_id: 0,
                        // INET_DIAG_NOCOOKIE: match on the addresses alone.
                        cookie: [0xff; 8],
                    },
                })
                .into(),
            );
            msg.finalize();
            let mut out = vec![0; msg.buffer_len()];
            msg.serialize(&mut out);
            self.sock.send(&out, 0)?;
            let n = self.sock.recv(&mut &mut self.buf[..], 0)?;
            let reply =
                <NetlinkMessage<SockDiagMessage>>::deserialize(&self.buf[..n]).map_err(err)?;
            match reply.payload {
                NetlinkPayload::InnerMessage(SockDiagMessage::InetResponse(r)) => {
                    let id = &r.header.socket_id;
                    let same = id.source_port == peer.port() && id.destination_port == local.port();
                    Ok(same.then_some(r.header.uid))
                }
                // ENOENT and friends: no such socket.
                NetlinkPayload::Error(_) => Ok(None),
                other => Err(err(format_args!("unexpected sock_diag reply {other:?}"))),
            }
        }
    }
}

#[cfg(target_os = "linux")]
fn own_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    // /proc/self is owned by the process's effective uid.
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

#[cfg(target_os = "linux")]
/// `/proc/net/tcp` address format: the IP's 32-bit words in host byte order, hex; the port hex.
fn encode(a: SocketAddr) -> String {
    let ip = match a {
        SocketAddr::V4(v) => format!("{:08X}", u32::from_ne_bytes(v.ip().octets())),
        SocketAddr::V6(v) => v
            .ip()
            .octets()
            .chunks(4)
            .map(|w| format!("{:08X}", u32::from_ne_bytes([w[0], w[1], w[2], w[3]])))
            .collect(),
    };
    format!("{ip}:{:04X}", a.port())
}

#[cfg(target_os = "linux")]
fn decode(s: &str) -> Option<SocketAddr> {
    let (ip, port) = s.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |h: &str| u32::from_str_radix(h, 16).ok().map(u32::to_ne_bytes);
    match ip.len() {
        8 => Some(SocketAddr::from((word(ip)?, port))),
        32 => {
            let mut o = [0u8; 16];
            for i in 0..4 {
                o[i * 4..i * 4 + 4].copy_from_slice(&word(ip.get(i * 8..i * 8 + 8)?)?);
            }
            Some(SocketAddr::from((o, port)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn proc_net_tcp_addresses_round_trip() {
        for a in ["127.0.0.1:7070", "[::1]:8080", "[fe80::1:2]:1"] {
            let a: SocketAddr = a.parse().unwrap();
            assert_eq!(decode(&encode(a)), Some(a));
        }
        if cfg!(target_endian = "little") {
            assert_eq!(encode("127.0.0.1:7070".parse().unwrap()), "0100007F:1B9E");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_connection_of_our_own_is_ours() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let local = l.local_addr().unwrap();
        let c = std::net::TcpStream::connect(local).unwrap();
        let (_s, peer) = l.accept().unwrap();
        assert_eq!(peer, c.local_addr().unwrap());
        let gone: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let mut uids = PeerUids::default();
        assert_eq!(uids.check(peer, local), Verdict::Same);
        assert!(uids.diag.is_some(), "netlink sock_diag is used");
        assert_eq!(uids.check(gone, local), Verdict::Unknown);
        let mut procfs = PeerUids {
            no_netlink: true,
            ..PeerUids::default()
        };
        assert_eq!(procfs.check(peer, local), Verdict::Same);
        assert_eq!(procfs.check(gone, local), Verdict::Unknown);
    }
}
