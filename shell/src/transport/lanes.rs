//! Where TCP and HTTP connections run: on a few single-threaded runtimes, one per core.
//!
//! Each connection lives on one of a few single-threaded runtimes, one per core, handed out in
//! turn ([`Lanes::Cores`]); a handling that waits for its store (a group commit, a PostgreSQL
//! read) waits on its lane without blocking it. A request
//! then wakes only the thread that serves its connection: one context switch per lock-step
//! request, where the work-stealing runtime also woke a second worker to look for work (two).
//! Connections spread over the lanes keep every core busy, and no lock or queue is shared
//! between them (a booking still goes to the one group committer).
//!
//! Measured (bench/compare.sh --quick --rounds=3 --baseline against the work-stealing runtime
//! alone): lock-step `tools/list` from 8 clients is about a fifth faster this way, over TCP and
//! over HTTP; docs/benchmarks.md.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;

use tokio::net::TcpStream;
use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Where new connections are served.
pub enum Lanes {
    /// On the runtime that accepted them.
    Here,
    /// On single-threaded runtimes of their own, in turn.
    Cores(Cores),
}

/// Single-threaded runtimes, each on its own thread, until dropped.
pub struct Cores {
    handles: Vec<Handle>,
    next: AtomicUsize,
    stop: CancellationToken,
    threads: Vec<JoinHandle<()>>,
}

/// The lanes for a server: one per core (at most [`MAX_LANES`]). A lane that cannot start is
/// logged and the server keeps the runtime it has.
pub fn for_server() -> Lanes {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_LANES));
    match Cores::start(n) {
        Ok(c) => Lanes::Cores(c),
        Err(e) => {
            tracing::warn!(
                "cannot start the connection threads ({e}); serving on the main runtime"
            );
            Lanes::Here
        }
    }
}

/// Connection threads at most, whatever the core count.
pub const MAX_LANES: usize = 64;

impl Cores {
    /// Starts `n` runtimes (at least one).
    pub fn start(n: usize) -> std::io::Result<Cores> {
        let stop = CancellationToken::new();
        let mut cores = Cores {
            handles: Vec::new(),
            next: AtomicUsize::new(0),
            stop: stop.clone(),
            threads: Vec::new(),
        };
        for k in 0..n.max(1) {
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            let stop = stop.clone();
            let thread = std::thread::Builder::new()
                .name(format!("redmark-conn-{k}"))
                .spawn(move || {
                    let rt = match tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                    {
                        Ok(rt) => rt,
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = tx.send(Ok(rt.handle().clone()));
                    rt.block_on(stop.cancelled());
                    // Dropping the runtime drops what still runs on it: the server has
                    // waited for its connections (or given up on them) by now.
                })?;
            cores.threads.push(thread);
            let handle = rx.recv().map_err(|_| {
                std::io::Error::other("a connection thread ended before its runtime started")
            })??;
            cores.handles.push(handle);
        }
        Ok(cores)
    }

    /// The next lane's runtime.
    fn next(&self) -> &Handle {
        let k = self.next.fetch_add(1, Ordering::Relaxed) % self.handles.len();
        &self.handles[k]
    }
}

impl Drop for Cores {
    fn drop(&mut self) {
        self.stop.cancel();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Lanes {
    /// Serves `sock` with `serve` on the next lane (tracked by `tracker` when given, so
    /// shutdown waits for it). The socket moves to the lane's own event loop.
    pub fn spawn<F, Fut>(&self, sock: TcpStream, tracker: Option<&TaskTracker>, serve: F)
    where
        F: FnOnce(TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let cores = match self {
            Lanes::Here => {
                let fut = serve(sock);
                match tracker {
                    Some(t) => drop(t.spawn(fut)),
                    None => drop(tokio::spawn(fut)),
                }
                return;
            }
            Lanes::Cores(c) => c,
        };
        // Registered with the accepting runtime's reactor until here; re-registered with the
        // lane's inside the lane.
        let sock = match sock.into_std() {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("cannot move a connection to its thread: {e}");
                return;
            }
        };
        let fut = async move {
            match TcpStream::from_std(sock) {
                Ok(s) => serve(s).await,
                Err(e) => tracing::warn!("cannot move a connection to its thread: {e}"),
            }
        };
        let lane = cores.next();
        match tracker {
            Some(t) => drop(lane.spawn(t.track_future(fut))),
            None => drop(lane.spawn(fut)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Connections handed to the lanes are served on the lanes' threads, in turn, and the
    /// tracker sees them finish.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn connections_run_on_the_lane_threads_in_turn() {
        let lanes = Lanes::Cores(Cores::start(2).unwrap());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let tracker = TaskTracker::new();
        let mut names = Vec::new();
        for _ in 0..4 {
            let mut client = TcpStream::connect(addr).await.unwrap();
            let (sock, _) = listener.accept().await.unwrap();
            lanes.spawn(sock, Some(&tracker), |mut s| async move {
                let name = std::thread::current().name().unwrap_or("").to_owned();
                let _ = s.write_all(name.as_bytes()).await;
            });
            let mut got = String::new();
            client.read_to_string(&mut got).await.unwrap();
            names.push(got);
        }
        tracker.close();
        tracker.wait().await;
        assert_eq!(
            names,
            [
                "redmark-conn-0",
                "redmark-conn-1",
                "redmark-conn-0",
                "redmark-conn-1"
            ]
        );
        drop(lanes);
    }

    /// Every server's connections get lanes of their own.
    #[test]
    fn a_server_gets_lanes() {
        assert!(matches!(for_server(), Lanes::Cores(_)));
    }
}
