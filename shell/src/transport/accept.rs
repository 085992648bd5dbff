//! What TCP and HTTP listeners share: the accept loop with its connection cap (HTTP's shares
//! of it are in [`super::share`]), and the write timeout that closes a client which does not
//! read its answers.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;
use tokio_util::sync::CancellationToken;

/// Accepts connections on `listener` until shutdown, at most `max_conns` open at once
/// (further ones are closed on accept, and logged); each accepted one goes to `serve` with the
/// permit it must hold until it closes.
pub async fn accept_loop(
    what: &str,
    listener: &TcpListener,
    max_conns: usize,
    shutdown: &CancellationToken,
    serve: impl FnMut(TcpStream, SocketAddr, OwnedSemaphorePermit),
) {
    let permits = Arc::new(Semaphore::new(max_conns));
    let admit = |_| {
        Arc::clone(&permits)
            .try_acquire_owned()
            .map_err(|_| "connections already open")
    };
    accept_gated(what, listener, max_conns, shutdown, admit, serve).await
}

/// Accepts connections on `listener` until shutdown; `admit` gives each the place it must hold
/// until it closes (for `serve`), or refuses it: closed on accept, the first refusal of a burst
/// logged (with `max_conns`, the `--max-connections` it was under) and the rest counted.
pub async fn accept_gated<G>(
    what: &str,
    listener: &TcpListener,
    max_conns: usize,
    shutdown: &CancellationToken,
    mut admit: impl FnMut(SocketAddr) -> Result<G, &'static str>,
    mut serve: impl FnMut(TcpStream, SocketAddr, G),
) {
    // Refusals since the last accepted connection: the first is logged, the rest counted.
    let mut refused = 0u64;
    loop {
        let (sock, peer) = tokio::select! {
            _ = shutdown.cancelled() => return,
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    // EMFILE and friends: back off instead of spinning.
                    tracing::warn!("{what} accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let held = match admit(peer) {
            Ok(x) => x,
            Err(why) => {
                if refused == 0 {
                    tracing::warn!(
                        "{what} {peer}: refused ({why}; --max-connections {max_conns}); \
                         further refusals are counted until a connection is accepted"
                    );
                }
                refused += 1;
                drop(sock);
                continue;
            }
        };
        if refused > 1 {
            tracing::warn!("{what}: {refused} connections were refused meanwhile");
        }
        refused = 0;
        let _ = sock.set_nodelay(true);
        serve(sock, peer, held);
    }
}

/// An I/O object whose writes (and flushes) fail with `TimedOut` once one has waited `limit`
/// for the peer to take bytes: a client that never reads cannot hold its connection open.
pub struct WriteTimeout<T> {
    inner: T,
    limit: Option<Duration>,
    /// Running while a write waits.
    waiting: Option<Pin<Box<Sleep>>>,
}

impl<T> WriteTimeout<T> {
    /// Wraps `inner` (`None`: writes may wait forever).
    pub fn new(inner: T, limit: Option<Duration>) -> Self {
        WriteTimeout {
            inner,
            limit,
            waiting: None,
        }
    }

    /// `Pending` stays pending until the limit; then `TimedOut`.
    fn check<R>(&mut self, cx: &mut Context<'_>, p: Poll<io::Result<R>>) -> Poll<io::Result<R>> {
        if p.is_ready() {
            self.waiting = None;
            return p;
        }
        let Some(limit) = self.limit else {
            return p;
        };
        let timer = self
            .waiting
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client took no bytes for the write timeout",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WriteTimeout<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        let p = Pin::new(&mut me.inner).poll_write(cx, buf);
        me.check(cx, p)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        let p = Pin::new(&mut me.inner).poll_write_vectored(cx, bufs);
        me.check(cx, p)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        let p = Pin::new(&mut me.inner).poll_flush(cx);
        me.check(cx, p)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WriteTimeout<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// A peer that never reads: the write fails after the limit instead of waiting forever.
    #[tokio::test]
    async fn a_write_nobody_takes_times_out() {
        let (a, _b) = tokio::io::duplex(64);
        let mut w = WriteTimeout::new(a, Some(Duration::from_millis(50)));
        let big = vec![b'x'; 4096];
        let got = tokio::time::timeout(Duration::from_secs(10), w.write_all(&big)).await;
        let err = got.expect("the write hung").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    }

    /// A peer that reads: nothing times out.
    #[tokio::test]
    async fn a_write_that_is_read_goes_through() {
        let (a, mut b) = tokio::io::duplex(64);
        let mut w = WriteTimeout::new(a, Some(Duration::from_millis(200)));
        let reader = tokio::spawn(async move {
            let mut v = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut b, &mut v)
                .await
                .map(|_| v.len())
        });
        w.write_all(&vec![b'x'; 4096]).await.unwrap();
        drop(w);
        assert_eq!(reader.await.unwrap().unwrap(), 4096);
    }
}
