//! stdio: the local user's one connection, newline-delimited JSON-RPC on stdin and stdout,
//! read and written through tokio's stdin and stdout on every platform.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::stream::{serve_stream, End, Sink, Socket, StreamLimits};
use crate::auth::role::seat;
use crate::host::{Hosted, Shared, LOCAL_PRINCIPAL};
use redmark_core::Via;

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
        StdioEnds {
            source: StdIn(tokio::io::stdin(), Vec::new()),
            sink: StdOut(Socket(tokio::io::stdout())),
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
    let seated = seat(LOCAL_PRINCIPAL, false, Via::Stdio);
    let end = serve_stream(&shared, source, sink, &seated, limits, &shutdown).await;
    match end {
        End::Eof | End::Shutdown => tracing::info!("stdio: {end:?}"),
        other => tracing::warn!("stdio ended: {other:?}"),
    }
}

/// stdin, after bytes read from it before (given back with [`StdIn::unread`], read first).
pub struct StdIn(tokio::io::Stdin, Vec<u8>);

impl StdIn {
    /// Puts `bytes` back in front of what is still to be read.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub fn unread(&mut self, bytes: &[u8]) {
        self.1.splice(0..0, bytes.iter().copied());
    }
}

impl tokio::io::AsyncRead for StdIn {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let StdIn(stdin, back) = &mut *self;
        if !back.is_empty() {
            let n = back.len().min(buf.remaining());
            buf.put_slice(&back[..n]);
            back.drain(..n);
            return std::task::Poll::Ready(Ok(()));
        }
        std::pin::Pin::new(stdin).poll_read(cx, buf)
    }
}

/// stdout.
pub struct StdOut(Socket<tokio::io::Stdout>);

impl Sink for StdOut {
    async fn send(&mut self, batch: &mut Vec<u8>) -> std::io::Result<()> {
        self.0.send(batch).await
    }
}
