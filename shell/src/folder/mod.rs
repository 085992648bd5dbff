//! Several `redmark` processes on one data folder (an MCP host starts a `redmark serve` per
//! window): the process holding the folder's store serves the others over a local socket.
//!
//! - The process that gets the store's lock (redb's `flock` on `bookings.redb`) is the
//!   **owner**: besides its own transports it listens on [`SOCKET_FILE`] in the store's folder
//!   (a Unix domain socket, mode 0600, and only peers of the owner's own uid are served,
//!   checked with `SO_PEERCRED`/`getpeereid`), and serves each connection there exactly as it
//!   serves stdio: the same framing and engine path, the local principal ([`listen`]).
//! - A stdio `redmark serve` that finds the store in use is a **relay** ([`relay`]): it opens
//!   no store and runs no engine, and passes its stdin's lines to the owner and the owner's
//!   lines to its stdout, byte for byte. It (and `redmark call`) talks only to an owner of its
//!   own user: the store file and the socket's peer must be its user's ([`trust`]), and a
//!   data folder other users may write to is refused at start. So at-most-once, "slot taken" and "only the holder
//!   cancels" are decided once, in the owner's one store.
//! - **Handover**: when the owner exits or is killed, every relay sees its socket close and
//!   tries the lock; the one that gets it opens the store (redb's recovery after a kill, the
//!   usual checks), binds the socket afresh (removing the dead owner's file: only the lock
//!   holder ever binds, so a stale file blocks no one) and serves its own stdio itself; the
//!   others connect to it. A request forwarded but not answered when the owner died is
//!   answered by the relay with a JSON-RPC error ([`pending::OWNER_LOST_CODE`]): it was never
//!   acknowledged, and the client may retry (a retry with the same `requestState` books at
//!   most once; a first-round booking retried finds its slot taken if the first one was made).
//!   A 2025-11-25 client's session is opened again at the next owner ([`replay`]).
//! - `redmark call` without a transport flag runs the floor in its own process when the store
//!   is free, and otherwise talks to the owner through the same socket.
//!
//! Nothing changes on disk: a folder from before keeps its bookings and its keys. The owner's
//! sealing keys come from the folder's key file (or `REDMARK_KEY`), so a `requestState` sealed
//! by one owner opens at the next.
//!
//! Unix only: elsewhere a second process on a folder is refused ("in use"), saying why and
//! what to do instead ([`UNIX_ONLY`]; docs/platforms.md).

#[cfg(unix)]
pub mod backup;
#[cfg(unix)]
pub mod listen;
#[cfg_attr(not(unix), allow(dead_code))]
pub mod pending;
#[cfg(unix)]
pub mod relay;
#[cfg_attr(not(unix), allow(dead_code))]
pub mod replay;
#[cfg(unix)]
pub mod trust;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::host::{Hosted, Shared};
use crate::store::redb::RedbStore;
use crate::transport::stdio::StdioEnds;

/// A connection to the owner (none outside Unix).
#[cfg(unix)]
pub type Connection = std::os::unix::net::UnixStream;
/// A connection to the owner (none outside Unix).
#[cfg(not(unix))]
pub type Connection = std::convert::Infallible;

/// Why a second process on a folder is refused outside Unix.
#[cfg_attr(unix, allow(dead_code))]
pub const UNIX_ONLY: &str = "on this platform one redmark process serves a data folder \
    (several share one through a Unix socket, which this platform lacks); point your MCP hosts \
    at one `redmark serve --http 127.0.0.1:8080` instead, or give each its own --data \
    (docs/platforms.md)";

/// The owner's socket, in the store's folder.
pub const SOCKET_FILE: &str = "redmark.sock";

/// How long a process that finds the store in use keeps trying to reach its owner (or take the
/// lock) before giving up: covers a new owner's start (opening and checking the store) and a
/// `redmark call` that holds the store for a moment.
pub const REACH_WAIT: Duration = Duration::from_secs(30);

/// Pause between two tries to take the lock or connect.
#[cfg_attr(not(unix), allow(dead_code))]
pub const RETRY_PAUSE: Duration = Duration::from_millis(20);

/// The socket of the store folder `at`.
pub fn socket_path(at: &Path) -> PathBuf {
    at.join(SOCKET_FILE)
}

/// Whether a store-open error says another process holds the store.
pub fn is_in_use(e: &str) -> bool {
    e.contains(" is in use ")
}

/// What the process owning a store folder serves its other processes with.
pub struct Owner {
    /// The store's folder (where the socket goes).
    #[cfg_attr(not(unix), allow(dead_code))]
    pub at: PathBuf,
    /// stdin and stdout, when this process relayed before it took the store over.
    pub stdio: Option<StdioEnds>,
}

/// How `serve` gets its store.
pub enum Opened {
    /// This process owns the store; `stdio` is set when it was a relay first (its stdin and
    /// stdout, with the start of a line already read put back).
    Store(RedbStore, Option<StdioEnds>),
    /// This process relayed until its client left: nothing more to do.
    #[cfg_attr(not(unix), allow(dead_code))]
    Relayed,
}

/// Opens the store of folder `at` (with `--repair` if `repair`); if another process holds
/// it and `relay` is `Ok`, relays this process's stdio to it (see the module doc); `Err(why)`
/// says why this process cannot relay (then "in use" is the error, with that reason).
pub async fn open_or_relay(
    at: &Path,
    repair: bool,
    relay: Result<(), &str>,
) -> Result<Opened, String> {
    let dir = at.to_path_buf();
    let first = tokio::task::spawn_blocking(move || crate::data::open_store(&dir, repair))
        .await
        .map_err(|e| format!("opening the store stopped: {e}"))?;
    match first {
        Ok(store) => Ok(Opened::Store(store, None)),
        Err(e) if is_in_use(&e) => match relay {
            #[cfg(unix)]
            Ok(()) => relay::run(at).await,
            #[cfg(not(unix))]
            Ok(()) => Err(format!("{e}; {UNIX_ONLY}")),
            Err(why) => Err(format!("{e}; {why}")),
        },
        Err(e) => Err(e),
    }
}

/// Serves the folder's other processes from the owner `owner` of the store `shared` runs on,
/// until shutdown (nothing outside Unix).
pub async fn serve_owner<A: Hosted>(
    shared: std::sync::Arc<Shared<A>>,
    owner: Owner,
    max_conns: usize,
    shutdown: CancellationToken,
    tracker: TaskTracker,
) {
    #[cfg(unix)]
    listen::serve_if_bound(shared, owner.at, max_conns, shutdown, tracker).await;
    #[cfg(not(unix))]
    let _ = (shared, owner, max_conns, shutdown, tracker);
}

/// What a process found on a store folder.
pub enum Reached<S> {
    /// It took the lock: the store, opened.
    Owner(RedbStore),
    /// Another process owns the store and listens: a connection to it.
    Relay(S),
}

/// Takes the store of folder `at` (with `open`) or connects to its owner (with `connect`, the
/// connection accepted only if `trusted` says so), trying again every [`RETRY_PAUSE`] until
/// `wait` has passed; then the last "in use" error, with the reason nothing answered.
#[cfg_attr(not(unix), allow(dead_code))]
fn reach_with<S>(
    at: &Path,
    wait: Duration,
    mut open: impl FnMut() -> Result<RedbStore, String>,
    mut connect: impl FnMut(&Path) -> std::io::Result<S>,
    mut trusted: impl FnMut(&S) -> Result<(), String>,
    mut pause: impl FnMut(),
) -> Result<Reached<S>, String> {
    let sock = socket_path(at);
    let deadline = Instant::now() + wait;
    loop {
        let in_use = match open() {
            Ok(store) => return Ok(Reached::Owner(store)),
            Err(e) if is_in_use(&e) => e,
            Err(e) => return Err(e),
        };
        let why = match connect(&sock) {
            Ok(s) => {
                trusted(&s)?;
                return Ok(Reached::Relay(s));
            }
            Err(e) => e,
        };
        if Instant::now() >= deadline {
            return Err(format!(
                "{in_use}; its holder does not answer on {} ({why}) after {} s: it is a \
                 `redmark call` still asking, or a redmark from before several processes could \
                 share a folder",
                sock.display(),
                wait.as_secs()
            ));
        }
        pause();
    }
}

/// [`reach_with`] for `redmark call`: blocking, the store opened as `redmark serve` opens it,
/// an owner trusted only if it is this process's user ([`trust`]).
#[cfg(unix)]
pub fn reach_blocking(at: &Path, wait: Duration) -> Result<Reached<Connection>, String> {
    reach_as(at, wait, trust::my_uid())
}

/// [`reach_blocking`] trusting an owner of user `me` only.
#[cfg(unix)]
fn reach_as(at: &Path, wait: Duration, me: u32) -> Result<Reached<Connection>, String> {
    reach_with(
        at,
        wait,
        || crate::data::open_store(at, false),
        |p: &Path| std::os::unix::net::UnixStream::connect(p),
        |s: &Connection| trust::check_owner(at, s, me),
        || std::thread::sleep(RETRY_PAUSE),
    )
}

/// Outside Unix: the store, or "in use" saying why there is no owner to reach.
#[cfg(not(unix))]
pub fn reach_blocking(at: &Path, _wait: Duration) -> Result<Reached<Connection>, String> {
    match crate::data::open_store(at, false) {
        Ok(store) => Ok(Reached::Owner(store)),
        Err(e) if is_in_use(&e) => Err(format!("{e}; {UNIX_ONLY}")),
        Err(e) => Err(e),
    }
}

/// [`reach_with`] for `redmark serve`, off the runtime's workers (opening checks the store).
#[cfg(unix)]
pub async fn reach(at: &Path, wait: Duration) -> Result<Reached<tokio::net::UnixStream>, String> {
    let at = at.to_path_buf();
    let reached = tokio::task::spawn_blocking(move || reach_blocking(&at, wait))
        .await
        .map_err(|e| format!("opening the store stopped: {e}"))??;
    Ok(match reached {
        Reached::Owner(s) => Reached::Owner(s),
        Reached::Relay(s) => {
            s.set_nonblocking(true)
                .map_err(|e| format!("cannot use the owner's socket: {e}"))?;
            Reached::Relay(
                tokio::net::UnixStream::from_std(s)
                    .map_err(|e| format!("cannot use the owner's socket: {e}"))?,
            )
        }
    })
}

#[cfg(all(test, unix))]
mod tests;
