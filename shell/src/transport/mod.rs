//! The transports: stdio, TCP and Streamable HTTP. Each reads bytes, hands whole messages to
//! the engine host ([`crate::host`]) and writes back what it answers; stdio and TCP share one
//! newline framing loop ([`stream`]), TCP and HTTP one accept loop ([`accept`]).

pub mod accept;
pub mod feeds;
pub mod http;
pub mod live;
pub mod live_lines;
pub mod peer;
pub mod share;
pub mod skip_answer;
pub mod stdio;
pub mod stream;
pub mod strict;
pub mod tcp;

use std::net::SocketAddr;

/// A listener with a deep accept backlog (bursts of thousands of connects queue in the kernel
/// instead of being dropped and retried by the clients a second later).
pub fn listen(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let sock = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    sock.set_reuseaddr(true)?;
    sock.bind(addr)?;
    sock.listen(4096)
}
