//! stdio: the local user's one connection, newline-delimited JSON-RPC on stdin and stdout.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::stream::{serve_stream, End, Socket, StreamLimits};
use crate::host::{Hosted, Shared, LOCAL_PRINCIPAL};

/// Serves stdin/stdout for the local user until EOF or shutdown.
pub async fn serve_stdio<A: Hosted>(shared: Arc<Shared<A>>, shutdown: CancellationToken) {
    let limits = StreamLimits {
        idle: None,
        write_timeout: None,
    };
    // tokio reads stdin and writes stdout on its blocking threads: the same on every
    // platform, whatever stdin is (a pipe, a terminal, a file).
    let source = tokio::io::stdin();
    let sink = Socket(tokio::io::stdout());
    let end = serve_stream(&shared, source, sink, LOCAL_PRINCIPAL, limits, &shutdown).await;
    match end {
        End::Eof | End::Shutdown => tracing::info!("stdio: {end:?}"),
        other => tracing::warn!("stdio ended: {other:?}"),
    }
}
