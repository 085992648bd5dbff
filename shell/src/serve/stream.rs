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
//! is bounded: the line buffer, a read chunk, one answer, one batch and the lines waiting for
//! their durable writes ([`MAX_WRITING`], [`MAX_WRITING_BYTES`]).
//!
//! A line that asks for a durable write (a booking) does not stop the connection: its write
//! goes to the group committer and the next lines are read and begun meanwhile, so a client
//! pipelining bookings gets them into one transaction. A line that only reads, arriving while
//! writes of this connection are in flight, waits for them first (it must see them).

use std::collections::VecDeque;
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
use super::lanes::Lanes;
use super::peer::{PeerUids, Verdict};
use super::pipes::{PipeIn, PipeOut};
use super::shared::{Begun, Conn, Hosted, Msg, Pending, Shared};
use crate::legacy::stream::StreamLegacy;

/// Bytes of one read from a stream.
const CHUNK: usize = 8 * 1024;

/// Answers gathered before they are written even though more input of the same read waits.
pub const MAX_BATCH: usize = 64 * 1024;

/// Messages of one connection waiting for their durable writes before the connection waits
/// for them (a client pipelining bookings gets them into one group commit).
pub const MAX_WRITING: usize = 256;

/// Bytes of the lines waiting for their writes before the connection waits for them.
pub const MAX_WRITING_BYTES: usize = 64 * 1024;

/// Chunks or batches the stdin and stdout threads may queue before they (or the connection)
/// wait.
const THREAD_QUEUE: usize = 2;

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
        let (batches, mut rx) = tokio::sync::mpsc::channel::<Vec<u8>>(THREAD_QUEUE);
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

/// Stdin read by a thread of its own (tokio's stdin would hop to the blocking pool for every
/// read): chunks come over a short queue and go back for reuse.
pub struct StdinSource {
    chunks: tokio::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    spare: std::sync::mpsc::Sender<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
}

impl StdinSource {
    /// Starts the reading thread; it ends at EOF, on an error, or when the source is dropped
    /// and its next read returns.
    pub fn start() -> io::Result<StdinSource> {
        let (tx, chunks) = tokio::sync::mpsc::channel(THREAD_QUEUE);
        let (spare, back) = std::sync::mpsc::channel::<Vec<u8>>();
        std::thread::Builder::new()
            .name("redmark-stdin".into())
            .spawn(move || {
                use std::io::Read;
                let stdin = std::io::stdin();
                loop {
                    let mut buf = back.try_recv().unwrap_or_default();
                    buf.resize(CHUNK, 0);
                    let got = match stdin.lock().read(&mut buf) {
                        Ok(0) => return,
                        Ok(n) => {
                            buf.truncate(n);
                            Ok(buf)
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => Err(e),
                    };
                    let failed = got.is_err();
                    if tx.blocking_send(got).is_err() || failed {
                        return;
                    }
                }
            })?;
        Ok(StdinSource {
            chunks,
            spare,
            current: Vec::new(),
            at: 0,
        })
    }
}

impl AsyncRead for StdinSource {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        use std::task::Poll;
        let me = self.get_mut();
        if me.at == me.current.len() {
            match me.chunks.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                // The thread ended: end of input.
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(Some(Ok(next))) => {
                    let used = std::mem::replace(&mut me.current, next);
                    let _ = me.spare.send(used);
                    me.at = 0;
                }
            }
        }
        let n = buf.remaining().min(me.current.len() - me.at);
        buf.put_slice(&me.current[me.at..me.at + n]);
        me.at += n;
        Poll::Ready(Ok(()))
    }
}

/// stdin: polled on the task when it is a pipe ([`PipeIn`]), else read by a thread.
enum StdIn {
    Pipe(PipeIn),
    Thread(StdinSource),
}

impl AsyncRead for StdIn {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        match self.get_mut() {
            StdIn::Pipe(p) => std::pin::Pin::new(p).poll_read(cx, buf),
            StdIn::Thread(t) => std::pin::Pin::new(t).poll_read(cx, buf),
        }
    }
}

/// stdout: written on the task when it is a pipe ([`PipeOut`]), else by a thread.
enum StdOut {
    Pipe(PipeOut),
    Thread(StdoutSink),
}

impl Sink for StdOut {
    async fn send(&mut self, batch: &mut Vec<u8>) -> io::Result<()> {
        match self {
            StdOut::Pipe(p) => p.send(batch).await,
            StdOut::Thread(t) => t.send(batch).await,
        }
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
    let mut writing = Writing::new();
    let mut lines: Box<Lines<MAX_MESSAGE>> = Box::new(Lines::new());
    let mut chunk = vec![0u8; CHUNK];
    let mut batch: Vec<u8> = Vec::new();
    let mut deadline = limits.idle.map(|d| Instant::now() + d);
    // LEGACY (dual-era, crate::legacy): a connection that sends `initialize` is served as
    // 2025-11-25 by its session; until then every line takes the path below.
    let mut legacy = StreamLegacy::new();
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
            // LEGACY: a pushed question waited too long; its call ends.
            expired = legacy.expired() => {
                for line in expired {
                    batch.extend_from_slice(&line);
                    batch.push(b'\n');
                }
                if let Err(e) = sink.send(&mut batch).await {
                    return End::Io(format!("write: {e}"));
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
            let msg = match line {
                None => continue,
                Some(Line::Message(m)) => Msg::Line(m),
                Some(Line::TooLong) => Msg::TooLong,
            };
            deadline = limits.idle.map(|d| Instant::now() + d);
            // LEGACY: in order, after the bookings this connection is still committing.
            if let Msg::Line(m) = msg {
                if legacy.takes(m) {
                    if let Err(e) = writing.drain(&mut conn, &mut batch, &mut sink).await {
                        return End::Io(format!("write: {e}"));
                    }
                    let run = shared.run_line(Arc::from(principal));
                    for line in legacy.line(m, run).await {
                        batch.extend_from_slice(&line);
                        batch.push(b'\n');
                    }
                    continue;
                }
            }
            // In flight: finish it even if shutdown starts meanwhile.
            let handled = match conn.begin(msg, principal) {
                Begun::Done(h) if writing.is_empty() => h,
                Begun::Done(_) => {
                    // Its reads may have missed this connection's writes still in flight:
                    // answer those first, then run it again.
                    if let Err(e) = writing.drain(&mut conn, &mut batch, &mut sink).await {
                        return End::Io(format!("write: {e}"));
                    }
                    conn.handle(msg, principal).await
                }
                // Only a message asks for a write; anything else is finished here, in order.
                Begun::Writing(p) if !matches!(msg, Msg::Line(_)) => {
                    if let Err(e) = writing.drain(&mut conn, &mut batch, &mut sink).await {
                        return End::Io(format!("write: {e}"));
                    }
                    conn.resume(msg, p).await
                }
                Begun::Writing(p) => {
                    // Its write is decided in the committing transaction, in order: go on
                    // with the next line while it is made (answers still go out in order).
                    if let Msg::Line(m) = msg {
                        writing.push(m, p);
                    }
                    if writing.is_full() {
                        if let Err(e) = writing.drain(&mut conn, &mut batch, &mut sink).await {
                            return End::Io(format!("write: {e}"));
                        }
                    }
                    continue;
                }
            };
            if handled.responded {
                batch.extend_from_slice(conn.answer(&handled));
                batch.push(b'\n');
            }
            if batch.len() >= MAX_BATCH {
                if let Err(e) = sink.send(&mut batch).await {
                    return End::Io(format!("write: {e}"));
                }
            }
        }
        // The read is used up: what it asked for goes out now (the answers ready first).
        if !writing.is_empty() {
            if !batch.is_empty() {
                if let Err(e) = sink.send(&mut batch).await {
                    return End::Io(format!("write: {e}"));
                }
            }
            if let Err(e) = writing.drain(&mut conn, &mut batch, &mut sink).await {
                return End::Io(format!("write: {e}"));
            }
        }
        if !batch.is_empty() {
            if let Err(e) = sink.send(&mut batch).await {
                return End::Io(format!("write: {e}"));
            }
        }
    }
}

/// The messages of one connection waiting for their durable writes, in arrival order, with
/// copies of their lines (buffers reused).
struct Writing<'p> {
    waiting: VecDeque<(Vec<u8>, Pending<'p>)>,
    /// Bytes of the lines waiting.
    bytes: usize,
    spare: Vec<Vec<u8>>,
}

impl<'p> Writing<'p> {
    fn new() -> Self {
        Writing {
            waiting: VecDeque::new(),
            bytes: 0,
            spare: Vec::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    fn is_full(&self) -> bool {
        self.waiting.len() >= MAX_WRITING || self.bytes >= MAX_WRITING_BYTES
    }

    fn push(&mut self, line: &[u8], p: Pending<'p>) {
        let mut copy = self.spare.pop().unwrap_or_default();
        copy.extend_from_slice(line);
        self.bytes += line.len();
        self.waiting.push_back((copy, p));
    }

    /// Finishes every waiting message in order, their answers appended to `batch` (written
    /// out whenever it reaches [`MAX_BATCH`]).
    async fn drain<A: Hosted, W: Sink>(
        &mut self,
        conn: &mut Conn<A>,
        batch: &mut Vec<u8>,
        sink: &mut W,
    ) -> io::Result<()> {
        while let Some((mut line, p)) = self.waiting.pop_front() {
            let h = conn.resume(Msg::Line(&line), p).await;
            if h.responded {
                batch.extend_from_slice(conn.answer(&h));
                batch.push(b'\n');
            }
            self.bytes -= line.len();
            line.clear();
            self.spare.push(line);
            if batch.len() >= MAX_BATCH {
                sink.send(batch).await?;
            }
        }
        Ok(())
    }
}

/// Serves stdin/stdout for the local user until EOF or shutdown.
pub async fn serve_stdio<A: Hosted>(shared: Arc<Shared<A>>, shutdown: CancellationToken) {
    let limits = StreamLimits {
        idle: None,
        write_timeout: None,
    };
    let sink = match PipeOut::stdout() {
        Some(p) => StdOut::Pipe(p),
        None => match StdoutSink::start() {
            Ok(s) => StdOut::Thread(s),
            Err(e) => {
                tracing::error!("stdio: cannot start the stdout thread: {e}");
                return;
            }
        },
    };
    let source = match PipeIn::stdin() {
        Some(p) => StdIn::Pipe(p),
        None => match StdinSource::start() {
            Ok(s) => StdIn::Thread(s),
            Err(e) => {
                tracing::error!("stdio: cannot start the stdin thread: {e}");
                return;
            }
        },
    };
    let end = serve_stream(
        &shared,
        source,
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
    lanes: Arc<Lanes>,
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
            lanes.spawn(sock, Some(&tracker), move |sock| async move {
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
