//! Newline-delimited JSON-RPC over a byte stream, the loop stdio and TCP share. Framing is the core's
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
use std::sync::Arc;
use std::time::Duration;

use redmark_core::limits::MAX_MESSAGE;
use redmark_core::wire::lines::{Line, Lines};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::host::{Begun, Conn, Hosted, Msg, Pending, Shared};
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
