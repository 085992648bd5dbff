//! Newline-delimited JSON-RPC over a byte stream: stdio and TCP. Framing is the core's
//! [`Lines`]; every line goes to the shared engine; answers go back one line each.
//!
//! Limits, per connection: a line holds at most [`MAX_MESSAGE`] bytes (longer ones get a
//! `-32600` error without id and the connection goes on); a connection that completes no line
//! for `idle` is closed (this also ends slow-drip half lines); a write that cannot finish in
//! `write_timeout` (a client that does not read) closes the connection. Memory per connection
//! is bounded: the line buffer, a read chunk and one answer.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use redmark_core::limits::MAX_MESSAGE;
use redmark_core::wire::lines::{Line, Lines};
use redmark_core::App;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::{timeout, Instant};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::peer::{PeerUids, Verdict};
use super::shared::{Input, Shared};
use crate::legacy::stream::StreamLegacy;

/// Timeouts of one stream connection (`None`: never).
#[derive(Clone, Copy)]
pub struct StreamLimits {
    pub idle: Option<Duration>,
    pub write_timeout: Option<Duration>,
}

/// How a connection ended.
#[derive(Debug, PartialEq, Eq)]
pub enum End {
    /// The peer closed its side.
    Eof,
    /// The peer closed in the middle of a line (the half line was dropped).
    HalfLine,
    /// No complete line within the idle limit.
    Idle,
    /// The server is shutting down.
    Shutdown,
    /// A read or write failed or timed out.
    Io(String),
}

/// Serves one byte stream until it ends. Requests on one stream are answered in order.
pub async fn serve_stream<A, R, W>(
    shared: &Arc<Shared<A>>,
    mut reader: R,
    mut writer: W,
    principal: Arc<[u8]>,
    limits: StreamLimits,
    shutdown: &CancellationToken,
) -> End
where
    A: App + Send + 'static,
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut lines: Box<Lines<MAX_MESSAGE>> = Box::new(Lines::new());
    let mut chunk = vec![0u8; 8 * 1024];
    let mut deadline = limits.idle.map(|d| Instant::now() + d);
    // LEGACY (dual-era, crate::legacy): every line goes through the connection's session.
    let mut legacy = StreamLegacy::new();
    let run = |line: Vec<u8>| {
        let (shared, principal) = (Arc::clone(shared), Arc::clone(&principal));
        async move {
            let out = shared.handle(Input::Line(line), principal).await;
            out.handled.responded.then_some(out.bytes)
        }
    };
    loop {
        let read = async {
            match deadline {
                Some(at) => tokio::time::timeout_at(at, reader.read(&mut chunk))
                    .await
                    .ok(),
                None => Some(reader.read(&mut chunk).await),
            }
        };
        let n = tokio::select! {
            biased;
            _ = shutdown.cancelled() => return End::Shutdown,
            // LEGACY (dual-era, crate::legacy): a pushed question waited too long.
            expired = legacy.expired() => {
                if let Err(e) = write_lines(&mut writer, expired, limits.write_timeout).await {
                    return e;
                }
                continue;
            }
            r = read => match r {
                None => return End::Idle,
                Some(Ok(0)) => return if lines.has_partial() { End::HalfLine } else { End::Eof },
                Some(Ok(n)) => n,
                Some(Err(e)) => return End::Io(e.to_string()),
            },
        };
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            let (used, line) = lines.push(rest);
            rest = &rest[used..];
            let out = match line {
                None => continue,
                // LEGACY (dual-era, crate::legacy).
                Some(Line::Message(m)) => legacy.line(m, run).await,
                Some(Line::TooLong) => {
                    let out = shared.handle(Input::TooLong, Arc::clone(&principal)).await;
                    if out.handled.responded {
                        vec![out.bytes]
                    } else {
                        Vec::new()
                    }
                }
            };
            deadline = limits.idle.map(|d| Instant::now() + d);
            // In flight: finish it even if shutdown starts meanwhile.
            if let Err(e) = write_lines(&mut writer, out, limits.write_timeout).await {
                return e;
            }
        }
    }
}

/// Writes each of `lines` with a newline, within `write_timeout`.
async fn write_lines<W: AsyncWrite + Unpin>(
    writer: &mut W,
    lines: Vec<Vec<u8>>,
    write_timeout: Option<Duration>,
) -> Result<(), End> {
    for mut bytes in lines {
        bytes.push(b'\n');
        let write = async {
            writer.write_all(&bytes).await?;
            writer.flush().await
        };
        let res = match write_timeout {
            Some(t) => timeout(t, write)
                .await
                .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into())),
            None => write.await,
        };
        if let Err(e) = res {
            return Err(End::Io(format!("write: {e}")));
        }
    }
    Ok(())
}

/// Serves stdin/stdout for the local user until EOF or shutdown.
pub async fn serve_stdio<A: App + Send + 'static>(
    shared: Arc<Shared<A>>,
    shutdown: CancellationToken,
) {
    let limits = StreamLimits {
        idle: None,
        write_timeout: None,
    };
    let principal: Arc<[u8]> = Arc::from(super::LOCAL_PRINCIPAL);
    let end = serve_stream(
        &shared,
        tokio::io::stdin(),
        tokio::io::stdout(),
        principal,
        limits,
        &shutdown,
    )
    .await;
    match end {
        End::Eof | End::Shutdown => tracing::info!("stdio: {end:?}"),
        other => tracing::warn!("stdio ended: {other:?}"),
    }
}

/// Accepts TCP connections until shutdown; each is served by its own task, at most
/// `max_conns` at once (further ones are closed on accept, and logged).
pub async fn serve_tcp<A: App + Send + 'static>(
    shared: Arc<Shared<A>>,
    listener: TcpListener,
    max_conns: usize,
    limits: StreamLimits,
    shutdown: CancellationToken,
    tracker: TaskTracker,
) {
    let permits = Arc::new(Semaphore::new(max_conns));
    let principal: Arc<[u8]> = Arc::from(super::LOCAL_PRINCIPAL);
    let local = listener.local_addr();
    let mut uids = PeerUids::default();
    loop {
        let (sock, peer) = tokio::select! {
            _ = shutdown.cancelled() => return,
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    // EMFILE and friends: back off instead of spinning.
                    tracing::warn!("tcp accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            tracing::warn!("tcp {peer}: refused, {max_conns} connections already open");
            drop(sock);
            continue;
        };
        // TCP clients act as the local user: only the server's own user may connect.
        let verdict = local
            .as_ref()
            .map_or(Verdict::Unknown, |l| uids.check(peer, *l));
        if !matches!(verdict, Verdict::Same | Verdict::Unsupported) {
            tracing::warn!("tcp {peer}: refused, not this user's process ({verdict:?})");
            drop(sock);
            continue;
        }
        let _ = sock.set_nodelay(true);
        let (shared, principal, shutdown) = (
            Arc::clone(&shared),
            Arc::clone(&principal),
            shutdown.clone(),
        );
        tracker.spawn(async move {
            let (r, w) = sock.into_split();
            let end = serve_stream(&shared, r, w, principal, limits, &shutdown).await;
            log_end(peer, &end);
            drop(permit);
        });
    }
}

fn log_end(peer: SocketAddr, end: &End) {
    match end {
        End::Eof | End::Shutdown => tracing::debug!("tcp {peer}: {end:?}"),
        End::HalfLine => tracing::info!("tcp {peer}: closed in the middle of a line; dropped it"),
        End::Idle => tracing::info!("tcp {peer}: idle, closed"),
        End::Io(e) => tracing::info!("tcp {peer}: {e}"),
    }
}
