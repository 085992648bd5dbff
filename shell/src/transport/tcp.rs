//! TCP: newline-delimited JSON-RPC on loopback, a task per connection, each client the local
//! user (only processes of the server's own user are served, see [`super::peer`]).

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::accept::{accept_loop, WriteTimeout};
use super::peer::{PeerUids, Verdict};
use super::stream::{serve_stream, End, Socket, StreamLimits};
use crate::auth::role::seat;
use crate::host::{Hosted, Shared, LOCAL_PRINCIPAL};
use crate::metrics::{metrics, Transport};
use redmark_core::Via;

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
                let _open = metrics().connection(Transport::Tcp);
                let (r, w) = sock.into_split();
                let sink = Socket(WriteTimeout::new(w, limits.write_timeout));
                let seated = seat(LOCAL_PRINCIPAL, false, Via::Tcp);
                let end = serve_stream(&shared, r, sink, &seated, limits, &shutdown).await;
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
