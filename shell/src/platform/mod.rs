//! What differs between platforms, gathered in one place (one job per file): private files,
//! the store's file lock, positioned reads, the OS's random bytes, shutdown signals, the TLS of
//! HTTPS clients. docs/platforms.md says what each platform has and lacks; where one lacks
//! something, the shell refuses rather than weaken silently (TCP without the peer-user check
//! needs `--tcp-any-local-user`; a second process on a data folder outside Unix is refused,
//! saying why).

pub mod files;
pub mod lock;
pub mod positioned;
pub mod random;
pub mod signals;
pub mod tls;

/// Whether this platform can tell which user a loopback TCP connection comes from (Linux's
/// `sock_diag`, see `transport::peer`).
pub const TCP_PEER_CHECK: bool = cfg!(target_os = "linux");
