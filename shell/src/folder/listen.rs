//! The owner's side: the data folder's socket, bound afresh by the process holding the store
//! (a dead owner's file is removed first: only the lock holder binds, so it cannot be a live
//! one's), mode 0600, each connection of the owner's own user served exactly as stdio is.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::io::AsyncReadExt;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::socket_path;
use crate::host::{Hosted, Shared, LOCAL_PRINCIPAL};
use crate::metrics::Transport;
use crate::transport::stream::{serve_stream, End, Socket, StreamLimits};

/// The socket of a store folder, bound; removed again when dropped (while the store is still
/// held, so never another owner's).
pub struct FolderSocket {
    listener: UnixListener,
    path: PathBuf,
}

impl FolderSocket {
    /// Binds the socket of store folder `at`. Call only while holding the store.
    pub fn bind(at: &Path) -> io::Result<FolderSocket> {
        use std::os::unix::fs::PermissionsExt;
        let path = socket_path(at);
        match std::fs::remove_file(&path) {
            Ok(()) => tracing::info!("removed a stale {}", path.display()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let listener = UnixListener::bind(&path)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        Ok(FolderSocket { listener, path })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FolderSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether the process at the other end of `s` runs as this process's user.
pub fn same_user(s: &UnixStream) -> io::Result<bool> {
    Ok(s.peer_cred()?.uid() == super::trust::my_uid())
}

/// Serves the folder's other processes on `socket` until shutdown, at most `max_conns` at
/// once; each connection is the local user's, like stdio (no idle limit, no write timeout:
/// a relay's client may think for hours, and its process reads whenever its client does).
pub async fn serve_folder<A: Hosted>(
    shared: Arc<Shared<A>>,
    socket: FolderSocket,
    max_conns: usize,
    shutdown: CancellationToken,
    tracker: TaskTracker,
) {
    let permits = Arc::new(Semaphore::new(max_conns));
    loop {
        let sock = tokio::select! {
            _ = shutdown.cancelled() => break,
            r = socket.listener.accept() => match r {
                Ok((s, _)) => s,
                Err(e) => {
                    tracing::warn!("{} accept: {e}", socket.path.display());
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        match same_user(&sock) {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!("{}: refused another user's process", socket.path.display());
                continue;
            }
            Err(e) => {
                tracing::warn!(
                    "{}: refused, cannot tell its user ({e})",
                    socket.path.display()
                );
                continue;
            }
        }
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            tracing::warn!(
                "{}: refused (--max-connections {max_conns} already open)",
                socket.path.display()
            );
            continue;
        };
        let (shared, shutdown) = (Arc::clone(&shared), shutdown.clone());
        let dir = socket
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        tracker.spawn(async move {
            // OPS (crate::ops): `redmark backup` asks here with a first line of its own.
            let asked = super::backup::unless_asked(sock, &shared, &dir, &shutdown);
            let Some((sock, read)) = asked.await else {
                drop(permit);
                return;
            };
            let _open = crate::metrics::metrics().connection(Transport::Folder);
            let limits = StreamLimits {
                idle: None,
                write_timeout: None,
            };
            let (r, w) = sock.into_split();
            let r = std::io::Cursor::new(read).chain(r);
            let end = serve_stream(&shared, r, Socket(w), LOCAL_PRINCIPAL, limits, &shutdown).await;
            match end {
                End::Eof | End::Shutdown => tracing::debug!("folder socket: {end:?}"),
                other => tracing::info!("folder socket: {other:?}"),
            }
            drop(permit);
        });
    }
    drop(socket);
}

/// Binds the socket of store folder `at` and serves it ([`serve_folder`]); a socket that cannot
/// be bound is logged and the server goes on without it (other processes then find the store
/// in use, as before).
pub async fn serve_if_bound<A: Hosted>(
    shared: Arc<Shared<A>>,
    at: PathBuf,
    max_conns: usize,
    shutdown: CancellationToken,
    tracker: TaskTracker,
) {
    let socket = match FolderSocket::bind(&at) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(
                "cannot listen on {} ({e}); other redmark processes on this data folder will \
                 find it in use",
                socket_path(&at).display()
            );
            return;
        }
    };
    // Said whatever REDMARK_LOG is, like the data folder line: who serves the folder.
    eprintln!(
        "redmark: other redmark processes on this data folder reach this one through {}",
        socket.path().display()
    );
    serve_folder(shared, socket, max_conns, shutdown, tracker).await;
}
