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

use super::live_lines::LineStreams;
use crate::host::{Begun, Conn, Hosted, InFlight, Msg, Shared};
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
    let mut legacy = StreamLegacy::new(shared.serves_resources());
    // Open subscriptions/listen streams (live_lines.rs): a connection that has one is not idle.
    let mut streams = LineStreams::new(shared.live());
    loop {
        let until = deadline.filter(|_| streams.is_empty());
        let read = async {
            match until {
                Some(at) => tokio::time::timeout_at(at, reader.read(&mut chunk))
                    .await
                    .ok(),
                None => Some(reader.read(&mut chunk).await),
            }
        };
        let n = tokio::select! {
            biased;
            _ = shutdown.cancelled() => {
                for line in streams.close_all(&conn) {
                    batch.extend_from_slice(&line);
                    batch.push(b'\n');
                }
                let _ = sink.send(&mut batch).await;
                return End::Shutdown;
            }
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
            // A change to a room-day an open stream follows: its updates, between answers.
            change = streams.next() => {
                for line in streams.updates(&change, &conn) {
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
                    if let Err(e) = writing
                        .drain(&mut conn, principal, &mut batch, &mut sink, &mut streams)
                        .await
                    {
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
            // In flight: finish it even if shutdown starts meanwhile. While an earlier message
            // waits to read until the writes before it are made, later ones are not started
            // (their writes must not overtake its own).
            let line = match msg {
                Msg::Line(m) => Some(m),
                _ => None,
            };
            if let Some(m) = line {
                streams.cancelled(m);
            }
            if writing.blocked() {
                writing.push(Queued::Later(line.map(<[u8]>::to_vec)));
            } else {
                let fenced = !writing.is_empty();
                let begun = conn.begin(line, principal, fenced);
                if let (Begun::Done(h), Some(m)) = (&begun, line) {
                    if h.listening {
                        if let Some(ended) = streams.opened(m, &conn) {
                            batch.extend_from_slice(&ended);
                            batch.push(b'\n');
                        }
                    }
                }
                match begun {
                    Begun::Done(h) if !fenced => {
                        if h.responded {
                            batch.extend_from_slice(conn.answer(&h));
                            batch.push(b'\n');
                        }
                    }
                    // Answered already, but after the answers still to come.
                    Begun::Done(h) => writing.push(Queued::Answered(
                        h.responded.then(|| conn.answer(&h).to_vec()),
                    )),
                    Begun::Waiting(p) => writing.push(Queued::Waiting(p)),
                }
            }
            if writing.is_full() {
                if let Err(e) = writing
                    .drain(&mut conn, principal, &mut batch, &mut sink, &mut streams)
                    .await
                {
                    return End::Io(format!("write: {e}"));
                }
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
            if let Err(e) = writing
                .drain(&mut conn, principal, &mut batch, &mut sink, &mut streams)
                .await
            {
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

/// One message of a connection in its queue, in arrival order.
enum Queued {
    /// Waiting for its store.
    Waiting(InFlight),
    /// Answered (with these bytes, if it has an answer) behind messages still waiting.
    Answered(Option<Vec<u8>>),
    /// Not started: it comes after a message that waits to read (`None`: an over-long line).
    Later(Option<Vec<u8>>),
}

/// The messages of one connection that are not answered yet, in arrival order.
struct Writing {
    waiting: VecDeque<Queued>,
    /// Bytes of the lines and answers held.
    bytes: usize,
}

impl Writing {
    fn new() -> Self {
        Writing {
            waiting: VecDeque::new(),
            bytes: 0,
        }
    }

    fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    fn is_full(&self) -> bool {
        self.waiting.len() >= MAX_WRITING || self.bytes >= MAX_WRITING_BYTES
    }

    /// Whether later messages must wait to start: one queued waits to read, or is not started.
    fn blocked(&self) -> bool {
        self.waiting.iter().any(|q| match q {
            Queued::Waiting(p) => p.held(),
            Queued::Later(_) => true,
            Queued::Answered(_) => false,
        })
    }

    fn push(&mut self, q: Queued) {
        self.bytes += Self::size(&q);
        self.waiting.push_back(q);
    }

    fn size(q: &Queued) -> usize {
        match q {
            Queued::Waiting(p) => p.len,
            Queued::Answered(a) | Queued::Later(a) => a.as_ref().map_or(0, Vec::len),
        }
    }

    /// Finishes every queued message in order, their answers appended to `batch` (written out
    /// whenever it reaches [`MAX_BATCH`]).
    async fn drain<A: Hosted, W: Sink>(
        &mut self,
        conn: &mut Conn<A>,
        principal: &[u8],
        batch: &mut Vec<u8>,
        sink: &mut W,
        streams: &mut LineStreams,
    ) -> io::Result<()> {
        while let Some(q) = self.waiting.pop_front() {
            self.bytes -= Self::size(&q);
            let answer = match q {
                Queued::Waiting(p) => {
                    let h = conn.resume(p).await;
                    h.responded.then(|| conn.answer(&h))
                }
                Queued::Answered(a) => {
                    if let Some(a) = a {
                        batch.extend_from_slice(&a);
                        batch.push(b'\n');
                    }
                    None
                }
                Queued::Later(line) => {
                    // Everything before it is answered: nothing to wait for.
                    let h = match conn.begin(line.as_deref(), principal, false) {
                        Begun::Done(h) => h,
                        Begun::Waiting(p) => conn.resume(p).await,
                    };
                    if let (true, Some(m)) = (h.listening, &line) {
                        if let Some(ended) = streams.opened(m, conn) {
                            batch.extend_from_slice(&ended);
                            batch.push(b'\n');
                        }
                    }
                    h.responded.then(|| conn.answer(&h))
                }
            };
            if let Some(a) = answer {
                batch.extend_from_slice(a);
                batch.push(b'\n');
            }
            if batch.len() >= MAX_BATCH {
                sink.send(batch).await?;
            }
        }
        Ok(())
    }
}
