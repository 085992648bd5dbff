//! The owner's side of `redmark backup`: a connection on the data folder's socket whose first
//! line is [`REQUEST`] gets a copy of the store (see `crate::backup`) instead of being served as MCP.

use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::UnixStream;
use tokio_util::sync::CancellationToken;

use crate::host::{Hosted, Shared};
use crate::platform::files::private_file;

/// The first line `redmark backup` sends on the folder's socket (not JSON: no MCP client sends
/// it).
pub const REQUEST: &[u8] = b"redmark backup 1\n";

/// How long the owner waits for the client to take bytes before it gives up the backup.
pub const SEND_STALL: Duration = Duration::from_secs(30);

/// Reads the start of a new connection on the folder's socket: a backup request is
/// answered here (`None`, and so is a connection closed or cut by shutdown before it said
/// anything); anything else comes back with the bytes read, to be served as they were.
pub async fn unless_asked<A: Hosted>(
    mut sock: UnixStream,
    shared: &Arc<Shared<A>>,
    dir: &Path,
    shutdown: &CancellationToken,
) -> Option<(UnixStream, Vec<u8>)> {
    let mut got = Vec::with_capacity(REQUEST.len());
    let mut chunk = [0u8; 64];
    while REQUEST.starts_with(&got) {
        let n = tokio::select! {
            _ = shutdown.cancelled() => return None,
            r = sock.read(&mut chunk) => r.ok()?,
        };
        if n == 0 {
            break;
        }
        got.extend_from_slice(&chunk[..n]);
        if got.starts_with(REQUEST) {
            answer(sock, Arc::clone(shared), dir.to_path_buf()).await;
            return None;
        }
    }
    Some((sock, got))
}

/// Copies the store into an unlinked file of the data folder `dir` and sends it, off the
/// runtime's threads.
async fn answer<A: Hosted>(sock: UnixStream, shared: Arc<Shared<A>>, dir: PathBuf) {
    let Ok(sock) = sock.into_std() else {
        return;
    };
    let sent = tokio::task::spawn_blocking(move || {
        let mut sock = sock;
        sock.set_nonblocking(false)?;
        sock.set_write_timeout(Some(SEND_STALL))?;
        match copy(&shared, &dir) {
            Ok((mut file, said)) => {
                let len = file.metadata()?.len();
                file.rewind()?;
                let newest = said.newest.unwrap_or(0);
                writeln!(sock, "ok {len} {} {newest}", said.bookings)?;
                std::io::copy(&mut file, &mut sock)?;
                tracing::info!(
                    "backup: sent a copy of {} bookings ({len} bytes)",
                    said.bookings
                );
            }
            Err(why) => {
                tracing::warn!("backup: {why}");
                writeln!(sock, "error {}", why.replace('\n', " "))?;
            }
        }
        sock.flush()
    })
    .await;
    match sent {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::info!("backup: the copy was not taken ({e})"),
        Err(e) => tracing::error!("backup: stopped ({e})"),
    }
}

/// The store copied into a new file of `dir`, unlinked at once (its handle, rewound by the
/// caller, reads it).
fn copy<A: Hosted>(
    shared: &Shared<A>,
    dir: &Path,
) -> Result<(std::fs::File, crate::store::Snapshot), String> {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!(".backup-{}-{n}.tmp", std::process::id()));
    let file = private_file()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let _ = std::fs::remove_file(&path);
    let reader = file
        .try_clone()
        .map_err(|e| format!("cannot use {}: {e}", path.display()))?;
    let store = shared
        .admin()
        .ok_or_else(|| "this server has no booking store".to_owned())?;
    let said = store.snapshot(file)?;
    Ok((reader, said))
}
