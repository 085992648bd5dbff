//! stdio: the local user's one connection, newline-delimited JSON-RPC on stdin and stdout.
//!
//! An MCP client starts the server with pipes: those are polled on the connection's own task
//! ([`super::pipes`]), so a lock-step request wakes one thread, not three (tokio's stdin and
//! stdout hand every read and write to a blocking thread: 4× the p50 latency of one lock-step
//! client, docs/benchmarks.md). Anything else (a terminal, a file) goes through tokio's stdin
//! and stdout.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::pipes::{PipeIn, PipeOut};
use super::stream::{serve_stream, End, Sink, Socket, StreamLimits};
use crate::host::{Hosted, Shared, LOCAL_PRINCIPAL};

/// stdin and stdout, opened once: a relay (crate::folder) reads and writes them first and hands
/// them, with the start of a line it had read, to the server it becomes.
pub struct StdioEnds {
    /// stdin.
    pub source: StdIn,
    /// stdout.
    pub sink: StdOut,
    /// FOLDER (crate::folder::replay, `skip_answer.rs`): the id of an answer not to write (to
    /// an `initialize` a relay replayed when it took the store over).
    pub skip_answer: Option<String>,
}

impl StdioEnds {
    /// This process's stdin and stdout.
    pub fn open() -> Self {
        let source = match PipeIn::stdin() {
            Some(p) => StdIn::Pipe(p, Vec::new()),
            None => StdIn::Tokio(tokio::io::stdin(), Vec::new()),
        };
        let sink = match PipeOut::stdout() {
            Some(p) => StdOut::Pipe(p),
            None => StdOut::Tokio(Socket(tokio::io::stdout())),
        };
        StdioEnds {
            source,
            sink,
            skip_answer: None,
        }
    }
}

/// Serves stdin/stdout ([`StdioEnds::open`], or a relay's) for the local user until EOF or
/// shutdown.
pub async fn serve_stdio_on<A: Hosted>(
    shared: Arc<Shared<A>>,
    ends: StdioEnds,
    shutdown: CancellationToken,
) {
    let limits = StreamLimits {
        idle: None,
        write_timeout: None,
    };
    let StdioEnds {
        source,
        sink,
        skip_answer,
    } = ends;
    let sink = super::skip_answer::SkipAnswer::new(sink, skip_answer);
    let end = serve_stream(&shared, source, sink, LOCAL_PRINCIPAL, limits, &shutdown).await;
    match end {
        End::Eof | End::Shutdown => tracing::info!("stdio: {end:?}"),
        other => tracing::warn!("stdio ended: {other:?}"),
    }
}

/// stdin: a polled pipe, or tokio's; each after bytes read from it before (given back with
/// [`StdIn::unread`], read first).
pub enum StdIn {
    Pipe(PipeIn, Vec<u8>),
    Tokio(tokio::io::Stdin, Vec<u8>),
}

impl StdIn {
    /// Puts `bytes` back in front of what is still to be read.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub fn unread(&mut self, bytes: &[u8]) {
        let (StdIn::Pipe(_, back) | StdIn::Tokio(_, back)) = self;
        back.splice(0..0, bytes.iter().copied());
    }
}

impl tokio::io::AsyncRead for StdIn {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let (StdIn::Pipe(_, back) | StdIn::Tokio(_, back)) = &mut *self;
        if !back.is_empty() {
            let n = back.len().min(buf.remaining());
            buf.put_slice(&back[..n]);
            back.drain(..n);
            return std::task::Poll::Ready(Ok(()));
        }
        match self.get_mut() {
            StdIn::Pipe(p, _) => std::pin::Pin::new(p).poll_read(cx, buf),
            StdIn::Tokio(t, _) => std::pin::Pin::new(t).poll_read(cx, buf),
        }
    }
}

/// stdout: a polled pipe, or tokio's.
pub enum StdOut {
    Pipe(PipeOut),
    Tokio(Socket<tokio::io::Stdout>),
}

impl Sink for StdOut {
    async fn send(&mut self, batch: &mut Vec<u8>) -> std::io::Result<()> {
        match self {
            StdOut::Pipe(p) => p.send(batch).await,
            StdOut::Tokio(t) => t.send(batch).await,
        }
    }
}
