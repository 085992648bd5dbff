//! stdin and stdout read and written on the connection's own task when they are pipes or
//! sockets (how an MCP client starts a server): the descriptor is made non-blocking and
//! polled by tokio, so a message costs no thread hop at all. Anything else (a terminal, a file,
//! stdout shared with stderr) keeps the reader and writer threads of `stream.rs`: making those
//! non-blocking would change them for the other processes that share them. The original flags
//! come back when the server is done.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, ReadBuf};

use super::stream::Sink;

/// A descriptor switched to non-blocking mode, switched back on drop.
struct NonBlocking {
    fd: RawFd,
    flags: libc::c_int,
}

impl AsRawFd for NonBlocking {
    fn as_raw_fd(&self) -> RawFd {
        self.fd
    }
}

impl Drop for NonBlocking {
    fn drop(&mut self) {
        // SAFETY: fcntl on a descriptor of this process, restoring the flags read before.
        unsafe { libc::fcntl(self.fd, libc::F_SETFL, self.flags) };
    }
}

/// `fd` polled by tokio, if it is a pipe or socket not shared with stderr.
fn open(fd: RawFd) -> Option<AsyncFd<NonBlocking>> {
    let stat = |fd| {
        // SAFETY: fstat into a zeroed struct owned here.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st)
    };
    let st = stat(fd)?;
    let kind = st.st_mode & libc::S_IFMT;
    if kind != libc::S_IFIFO && kind != libc::S_IFSOCK {
        return None;
    }
    // stdout and stderr on one pipe (`2>&1`): stderr must stay blocking, so both do.
    if let Some(err) = stat(libc::STDERR_FILENO) {
        if fd != libc::STDIN_FILENO && err.st_dev == st.st_dev && err.st_ino == st.st_ino {
            return None;
        }
    }
    // SAFETY: fcntl on a descriptor of this process.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return None;
    }
    // SAFETY: stdin and stdout stay open, the same descriptions, for the life of the process:
    // nothing in the server closes or replaces them. On failure the guard comes back, drops,
    // and restores the flags.
    unsafe { AsyncFd::register(NonBlocking { fd, flags }) }.ok()
}

/// A `read`/`write` result: the byte count, or the error it set.
fn counted(n: isize) -> io::Result<usize> {
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

/// stdin as a pipe polled on the task.
pub struct PipeIn(AsyncFd<NonBlocking>);

impl PipeIn {
    /// stdin, if it is a pipe or socket.
    pub fn stdin() -> Option<Self> {
        open(libc::STDIN_FILENO).map(PipeIn)
    }
}

impl AsyncRead for PipeIn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        loop {
            let mut guard = ready!(me.0.poll_read_ready(cx))?;
            let dst = buf.initialize_unfilled();
            let asked = dst.len();
            let got = guard.try_io(|fd| {
                // SAFETY: reads at most `dst.len()` bytes into `dst`.
                counted(unsafe { libc::read(fd.as_raw_fd(), dst.as_mut_ptr().cast(), dst.len()) })
            });
            match got {
                Ok(Ok(n)) => {
                    // A short read emptied the pipe: wait for its next readiness instead of
                    // reading again only to be told EAGAIN (what tokio's own sockets do).
                    // Readiness that arrived since the poll is kept (`clear_ready` is
                    // tick-checked), so no wake-up is lost.
                    if n > 0 && n < asked {
                        guard.clear_ready();
                    }
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }
}

/// stdout as a pipe written on the task.
pub struct PipeOut(AsyncFd<NonBlocking>);

impl PipeOut {
    /// stdout, if it is a pipe or socket of its own.
    pub fn stdout() -> Option<Self> {
        open(libc::STDOUT_FILENO).map(PipeOut)
    }
}

impl Sink for PipeOut {
    async fn send(&mut self, batch: &mut Vec<u8>) -> io::Result<()> {
        let mut at = 0;
        while at < batch.len() {
            let mut guard = self.0.writable().await?;
            let rest = &batch[at..];
            let got = guard.try_io(|fd| {
                // SAFETY: writes at most `rest.len()` bytes from `rest`.
                counted(unsafe { libc::write(fd.as_raw_fd(), rest.as_ptr().cast(), rest.len()) })
            });
            match got {
                Ok(Ok(n)) => {
                    // A short write filled the pipe: wait for room rather than be told EAGAIN.
                    if n < rest.len() {
                        guard.clear_ready();
                    }
                    at += n;
                }
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {}
            }
        }
        batch.clear();
        Ok(())
    }
}
