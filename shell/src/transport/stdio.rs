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

/// Serves stdin/stdout for the local user until EOF or shutdown.
pub async fn serve_stdio<A: Hosted>(shared: Arc<Shared<A>>, shutdown: CancellationToken) {
    let limits = StreamLimits {
        idle: None,
        write_timeout: None,
    };
    let source = match PipeIn::stdin() {
        Some(p) => StdIn::Pipe(p),
        None => StdIn::Tokio(tokio::io::stdin()),
    };
    let sink = match PipeOut::stdout() {
        Some(p) => StdOut::Pipe(p),
        None => StdOut::Tokio(Socket(tokio::io::stdout())),
    };
    let end = serve_stream(&shared, source, sink, LOCAL_PRINCIPAL, limits, &shutdown).await;
    match end {
        End::Eof | End::Shutdown => tracing::info!("stdio: {end:?}"),
        other => tracing::warn!("stdio ended: {other:?}"),
    }
}

/// stdin: a polled pipe, or tokio's.
enum StdIn {
    Pipe(PipeIn),
    Tokio(tokio::io::Stdin),
}

impl tokio::io::AsyncRead for StdIn {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.get_mut() {
            StdIn::Pipe(p) => std::pin::Pin::new(p).poll_read(cx, buf),
            StdIn::Tokio(t) => std::pin::Pin::new(t).poll_read(cx, buf),
        }
    }
}

/// stdout: a polled pipe, or tokio's.
enum StdOut {
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
