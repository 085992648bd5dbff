//! Newline-delimited JSON-RPC over a byte stream: stdio and TCP. Framing is the core's
//! [`Lines`]; every line is answered on the connection's own engine ([`Conn`]), in order.
//! Answers to the lines of one read are gathered and written at once (one write per read, or
//! per [`MAX_BATCH`] bytes), so a pipelining client costs one syscall per batch, a lock-step
//! one a write per answer.
//!
//! Limits, per connection: a line holds at most [`MAX_MESSAGE`] bytes (longer ones get a
//! `-32600` error without id and the connection goes on); a connection that completes no line
//! for `idle` is closed (this also ends slow-drip half lines); a write that cannot finish in
//! `write_timeout` (a client that does not read) closes the connection. Memory per connection
//! is bounded: the line buffer, a read chunk, one answer and one batch.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use redmark_core::limits::MAX_MESSAGE;
use redmark_core::wire::lines::{Line, Lines};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::conns::{accept_loop, WriteTimeout};
use super::peer::{PeerUids, Verdict};
use super::shared::{Hosted, Msg, Shared};

/// Bytes of one read from a stream.
const CHUNK: usize = 8 * 1024;

/// Answers gathered before they are written even though more input of the same read waits.
pub const MAX_BATCH: usize = 64 * 1024;

/// Batches the stdout thread may hold (written or waiting) before the connection waits.
const STDOUT_QUEUE: usize = 2;

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

/// Where a stream's answers go: a batch at a time, left empty for reuse.
pub trait Sink {
    /// Writes all of `batch` (and flushes it), then clears it.
    fn send(&mut self, batch: &mut Vec<u8>) -> impl Future<Output = io::Result<()>> + Send;
}

/// A socket (or any async writer) as a [`Sink`].
pub struct Socket<W>(pub W);

impl<W: AsyncWrite + Unpin + Send> Sink for Socket<W> {
    async fn send(&mut self, batch: &mut Vec<u8>) -> io::Result<()> {
        self.0.write_all(batch).await?;
        self.0.flush().await?;
        batch.clear();
        Ok(())
    }
}

/// Stdout written by a thread of its own (tokio's stdout would hop to the blocking pool for
/// every write): batches go to it over a short queue and come back empty for reuse.
pub struct StdoutSink {
    batches: tokio::sync::mpsc::Sender<Vec<u8>>,
    spare: std::sync::mpsc::Receiver<Vec<u8>>,
}

impl StdoutSink {
    /// Starts the writing thread; it ends when the sink is dropped or stdout fails.
    pub fn start() -> io::Result<StdoutSink> {
        let (batches, mut rx) = tokio::sync::mpsc::channel::<Vec<u8>>(STDOUT_QUEUE);
        let (back, spare) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("redmark-stdout".into())
            .spawn(move || {
                use std::io::Write;
                let out = std::io::stdout();
                while let Some(mut b) = rx.blocking_recv() {
                    let mut out = out.lock();
                    if let Err(e) = out.write_all(&b).and_then(|()| out.flush()) {
                        tracing::warn!("stdout: {e}");
                        return;
                    }
                    b.clear();
                    let _ = back.send(b);
                }
            })?;
        Ok(StdoutSink { batches, spare })
    }
}

impl Sink for StdoutSink {
    async fn send(&mut self, batch: &mut Vec<u8>) -> io::Result<()> {
        let next = self.spare.try_recv().unwrap_or_default();
        let full = std::mem::replace(batch, next);
        self.batches
            .send(full)
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "stdout closed"))
    }
}

/// Serves one byte stream until it ends. Requests on one stream are answered in order.
pub async fn serve_stream<A, R, W>(
    shared: &Arc<Shared<A>>,
    mut reader: R,
    mut sink: W,
    principal: &[u8],
    limits: StreamLimits,
    shutdown: &CancellationToken,
) -> End
where
    A: Hosted,
    R: AsyncRead + Unpin,
    W: Sink,
{
    let mut conn = shared.connection();
    let mut lines: Box<Lines<MAX_MESSAGE>> = Box::new(Lines::new());
    let mut chunk = vec![0u8; CHUNK];
    let mut batch: Vec<u8> = Vec::new();
    let mut deadline = limits.idle.map(|d| Instant::now() + d);
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
            let msg = match line {
                None => continue,
                Some(Line::Message(m)) => Msg::Line(m),
                Some(Line::TooLong) => Msg::TooLong,
            };
            deadline = limits.idle.map(|d| Instant::now() + d);
            // In flight: finish it even if shutdown starts meanwhile.
            let handled = conn.handle(msg, principal).await;
            if !handled.responded {
                continue;
            }
            batch.extend_from_slice(conn.answer(&handled));
            batch.push(b'\n');
            if batch.len() >= MAX_BATCH {
                if let Err(e) = sink.send(&mut batch).await {
                    return End::Io(format!("write: {e}"));
                }
            }
        }
        // The read is used up: what it asked for goes out now.
        if !batch.is_empty() {
            if let Err(e) = sink.send(&mut batch).await {
                return End::Io(format!("write: {e}"));
            }
        }
    }
}

/// Serves stdin/stdout for the local user until EOF or shutdown.
pub async fn serve_stdio<A: Hosted>(shared: Arc<Shared<A>>, shutdown: CancellationToken) {
    let limits = StreamLimits {
        idle: None,
        write_timeout: None,
    };
    let sink = match StdoutSink::start() {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("stdio: cannot start the stdout thread: {e}");
            return;
        }
    };
    let end = serve_stream(
        &shared,
        tokio::io::stdin(),
        sink,
        super::LOCAL_PRINCIPAL,
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
pub async fn serve_tcp<A: Hosted>(
    shared: Arc<Shared<A>>,
    listener: TcpListener,
    max_conns: usize,
    limits: StreamLimits,
    shutdown: CancellationToken,
    tracker: TaskTracker,
) {
    let local = listener.local_addr();
    let mut uids = PeerUids::default();
    accept_loop(
        "tcp",
        &listener,
        max_conns,
        &shutdown,
        |sock, peer, permit| {
            // TCP clients act as the local user: only the server's own user may connect.
            let verdict = local
                .as_ref()
                .map_or(Verdict::Unknown, |l| uids.check(peer, *l));
            if !matches!(verdict, Verdict::Same | Verdict::Unsupported) {
                tracing::warn!("tcp {peer}: refused, not this user's process ({verdict:?})");
                return;
            }
            let (shared, shutdown) = (Arc::clone(&shared), shutdown.clone());
            tracker.spawn(async move {
                let (r, w) = sock.into_split();
                let sink = Socket(WriteTimeout::new(w, limits.write_timeout));
                let end =
                    serve_stream(&shared, r, sink, super::LOCAL_PRINCIPAL, limits, &shutdown).await;
                log_end(peer, &end);
                drop(permit);
            });
        },
    )
    .await;
}

fn log_end(peer: SocketAddr, end: &End) {
    match end {
        End::Eof | End::Shutdown => tracing::debug!("tcp {peer}: {end:?}"),
        End::HalfLine => tracing::info!("tcp {peer}: closed in the middle of a line; dropped it"),
        End::Idle => tracing::info!("tcp {peer}: idle, closed"),
        End::Io(e) => tracing::info!("tcp {peer}: {e}"),
    }
}
