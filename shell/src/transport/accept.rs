//! What TCP and HTTP listeners share: the accept loop with its connection cap, the bound on
//! connections no request has authenticated yet (per source address and in all, so idle
//! unauthenticated connections cannot take every place), and the write timeout that closes a
//! client which does not read its answers.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
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
    mut serve: impl FnMut(TcpStream, SocketAddr, OwnedSemaphorePermit),
) {
    accept_gated(
        what,
        listener,
        max_conns,
        shutdown,
        |_| Ok(()),
        |sock, peer, permit, ()| serve(sock, peer, permit),
    )
    .await
}

/// [`accept_loop`] with a second gate: `admit` may refuse a connection (closed on accept, the
/// refusals of a burst logged once) or hand `serve` what the connection must hold.
pub async fn accept_gated<G>(
    what: &str,
    listener: &TcpListener,
    max_conns: usize,
    shutdown: &CancellationToken,
    mut admit: impl FnMut(SocketAddr) -> Result<G, &'static str>,
    mut serve: impl FnMut(TcpStream, SocketAddr, OwnedSemaphorePermit, G),
) {
    let permits = Arc::new(Semaphore::new(max_conns));
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
        let admitted = match Arc::clone(&permits).try_acquire_owned() {
            Err(_) => Err("connections already open"),
            Ok(permit) => admit(peer).map(|held| (permit, held)),
        };
        let (permit, held) = match admitted {
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
        serve(sock, peer, permit, held);
    }
}

/// Connections one source address may hold before any request on them authenticated (HTTP
/// with `--tokens`).
pub const MAX_UNAUTHENTICATED_PER_SOURCE: usize = 32;
/// Percent of `--max-connections` that unauthenticated connections may hold together; the
/// rest stays for connections that authenticated.
pub const UNAUTHENTICATED_SHARE_PERCENT: usize = 75;

/// The unauthenticated connections of one listener, in all and per source address.
pub struct Unauthenticated {
    limit: usize,
    by_source: Mutex<HashMap<IpAddr, usize>>,
}

impl Unauthenticated {
    /// The bounds for a listener of `max_conns` connections.
    pub fn new(max_conns: usize) -> Arc<Self> {
        Arc::new(Unauthenticated {
            limit: (max_conns * UNAUTHENTICATED_SHARE_PERCENT / 100).max(1),
            by_source: Mutex::new(HashMap::new()),
        })
    }

    /// Admits a new connection from `peer` as unauthenticated, or says why not.
    pub fn admit(self: &Arc<Self>, peer: SocketAddr) -> Result<Arc<Unverified>, &'static str> {
        let mut m = self
            .by_source
            .lock()
            .map_err(|_| "unauthenticated table poisoned")?;
        let all: usize = m.values().sum();
        if all >= self.limit {
            return Err("too many unauthenticated connections");
        }
        let n = m.entry(peer.ip()).or_insert(0);
        if *n >= MAX_UNAUTHENTICATED_PER_SOURCE {
            return Err("too many unauthenticated connections from this address");
        }
        *n += 1;
        Ok(Arc::new(Unverified(Mutex::new(Some(Slot {
            table: Arc::clone(self),
            ip: peer.ip(),
        })))))
    }

    #[cfg(test)]
    fn held(&self) -> usize {
        self.by_source.lock().unwrap().values().sum()
    }
}

/// A connection's place among the unauthenticated until a request on it authenticates.
pub struct Unverified(Mutex<Option<Slot>>);

impl Unverified {
    /// A request on this connection authenticated: it no longer counts as unauthenticated.
    pub fn authenticated(&self) {
        if let Ok(mut s) = self.0.lock() {
            s.take();
        }
    }
}

/// One counted unauthenticated connection; uncounted when dropped.
struct Slot {
    table: Arc<Unauthenticated>,
    ip: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut m) = self.table.by_source.lock() {
            if let Some(n) = m.get_mut(&self.ip) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    m.remove(&self.ip);
                }
            }
        }
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

    /// Unauthenticated connections are bounded per source and in all; authenticating or
    /// closing gives the place back.
    #[test]
    fn unauthenticated_connections_are_bounded() {
        let t = Unauthenticated::new(100);
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let held: Vec<_> = (0..MAX_UNAUTHENTICATED_PER_SOURCE)
            .map(|_| t.admit(a).unwrap())
            .collect();
        assert!(t.admit(a).is_err(), "per source");
        held[0].authenticated();
        let again = t.admit(a).unwrap();
        drop(held);
        assert_eq!(t.held(), 1);
        drop(again);
        assert_eq!(t.held(), 0);
        let mut many = Vec::new();
        for i in 0..=255u8 {
            let peer = SocketAddr::from(([127, 0, 1, i], 1));
            match t.admit(peer) {
                Ok(u) => many.push(u),
                Err(_) => break,
            }
        }
        assert_eq!(
            many.len(),
            100 * UNAUTHENTICATED_SHARE_PERCENT / 100,
            "in all"
        );
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
