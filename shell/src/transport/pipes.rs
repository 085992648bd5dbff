//! stdin and stdout read and written on the connection's own task when they are pipes or
//! sockets (how an MCP client starts a server), polled by tokio, so a message costs no thread
//! hop at all (Linux). Nothing another process shares is changed: a pipe is opened again through
//! `/proc/self/fd` as a description of its own and made non-blocking there; a socket keeps its
//! flags and is read and written with `MSG_DONTWAIT`. So no exit, not even `kill -9`, leaves
//! the client (or a shell that shares the descriptors) with non-blocking ones. Anything else
//! (a terminal, a file), a pipe that cannot be opened again, or another platform, is read and
//! written by tokio's own stdin and stdout ([`super::stdio`]).

use std::fs::{File, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, Interest, ReadBuf};

use super::stream::Sink;

/// stdin or stdout as tokio polls it.
enum Polled {
    /// A pipe, opened again: this process's own non-blocking description of it.
    Pipe(File),
    /// A socket (descriptor 0 or 1, never closed), used with `MSG_DONTWAIT`.
    Socket(RawFd),
}

impl AsRawFd for Polled {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Polled::Pipe(f) => f.as_raw_fd(),
            Polled::Socket(fd) => *fd,
        }
    }
}

impl Polled {
    /// `fd` ready to be polled, if it is a pipe that opens again or a socket.
    fn open(fd: RawFd, interest: Interest) -> Option<AsyncFd<Polled>> {
        let path = format!("/proc/self/fd/{fd}");
        let kind = std::fs::metadata(&path).ok()?.file_type();
        let polled = if kind.is_fifo() {
            let mut again = OpenOptions::new();
            again.custom_flags(libc::O_NONBLOCK);
            if interest.is_readable() {
                again.read(true);
            } else {
                again.write(true);
            }
            Polled::Pipe(again.open(&path).ok()?)
        } else if kind.is_socket() {
            Polled::Socket(fd)
        } else {
            return None;
        };
        // SAFETY: a pipe's descriptor is owned by the `File` inside, a socket's is stdin or
        // stdout, which nothing in the server closes or replaces: each stays open on the same
        // description for as long as the `AsyncFd` lives.
        unsafe { AsyncFd::register_with_interest(polled, interest) }.ok()
    }

    /// One non-blocking read into `dst`.
    fn read(&self, dst: &mut [u8]) -> io::Result<usize> {
        match self {
            Polled::Pipe(f) => (&*f).read(dst),
            // SAFETY: receives at most `dst.len()` bytes into `dst`.
            Polled::Socket(fd) => counted(unsafe {
                libc::recv(*fd, dst.as_mut_ptr().cast(), dst.len(), libc::MSG_DONTWAIT)
            }),
        }
    }

    /// One non-blocking write from `src`.
    fn write(&self, src: &[u8]) -> io::Result<usize> {
        match self {
            Polled::Pipe(f) => (&*f).write(src),
            // SAFETY: sends at most `src.len()` bytes from `src`.
            Polled::Socket(fd) => counted(unsafe {
                libc::send(
                    *fd,
                    src.as_ptr().cast(),
                    src.len(),
                    libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
                )
            }),
        }
    }
}

/// A `recv`/`send` result: the byte count, or the error it set.
fn counted(n: isize) -> io::Result<usize> {
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

/// stdin as a pipe polled on the task.
pub struct PipeIn(AsyncFd<Polled>);

impl PipeIn {
    /// stdin, if it is a pipe or socket.
    pub fn stdin() -> Option<Self> {
        Polled::open(libc::STDIN_FILENO, Interest::READABLE).map(PipeIn)
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
            match guard.try_io(|p| p.get_ref().read(dst)) {
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
pub struct PipeOut(AsyncFd<Polled>);

impl PipeOut {
    /// stdout, if it is a pipe or socket.
    pub fn stdout() -> Option<Self> {
        Polled::open(libc::STDOUT_FILENO, Interest::WRITABLE).map(PipeOut)
    }
}

impl Sink for PipeOut {
    async fn send(&mut self, batch: &mut Vec<u8>) -> io::Result<()> {
        let mut at = 0;
        while at < batch.len() {
            let mut guard = self.0.writable().await?;
            let rest = &batch[at..];
            match guard.try_io(|p| p.get_ref().write(rest)) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::FromRawFd as _;

    /// The status flags of `fd`'s open file description.
    fn flags(fd: RawFd) -> libc::c_int {
        // SAFETY: F_GETFL on a descriptor this test owns.
        unsafe { libc::fcntl(fd, libc::F_GETFL) }
    }

    /// A pipe opened again is polled through a description of its own: the original keeps
    /// its blocking mode (what another process holding it would see), and bytes written to the
    /// original are read through the new one.
    #[tokio::test]
    async fn a_pipe_is_polled_through_its_own_description() {
        let mut ends = [0; 2];
        // SAFETY: pipe2 fills `ends` with two new descriptors, owned by the files below.
        assert_eq!(
            unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) },
            0
        );
        let (reader, mut writer) =
            unsafe { (File::from_raw_fd(ends[0]), File::from_raw_fd(ends[1])) };
        let polled = Polled::open(reader.as_raw_fd(), Interest::READABLE).expect("a pipe");
        assert!(matches!(polled.get_ref(), Polled::Pipe(_)));
        assert_eq!(flags(reader.as_raw_fd()) & libc::O_NONBLOCK, 0);
        assert_ne!(flags(polled.as_raw_fd()) & libc::O_NONBLOCK, 0);
        writer.write_all(b"line\n").expect("write");
        let mut input = PipeIn(polled);
        let mut got = [0u8; 16];
        let n = tokio::io::AsyncReadExt::read(&mut input, &mut got)
            .await
            .expect("read");
        assert_eq!(&got[..n], b"line\n");
    }

    /// A socket is not opened again and its flags are not touched, writing or reading.
    #[tokio::test]
    async fn a_socket_keeps_its_flags() {
        let (a, b) = std::os::unix::net::UnixStream::pair().expect("socketpair");
        let before = flags(a.as_raw_fd());
        let polled = Polled::open(a.as_raw_fd(), Interest::WRITABLE).expect("a socket");
        let mut out = PipeOut(polled);
        let mut batch = b"answer\n".to_vec();
        out.send(&mut batch).await.expect("send");
        assert!(batch.is_empty());
        assert_eq!(flags(a.as_raw_fd()), before);
        let mut got = [0u8; 16];
        let n = (&b).read(&mut got).expect("read");
        assert_eq!(&got[..n], b"answer\n");
        // And read: what the peer writes comes through `recv`, flags still untouched.
        let before = flags(b.as_raw_fd());
        let mut input = PipeIn(Polled::open(b.as_raw_fd(), Interest::READABLE).expect("socket"));
        (&a).write_all(b"request\n").expect("write");
        let n = tokio::io::AsyncReadExt::read(&mut input, &mut got)
            .await
            .expect("read");
        assert_eq!(&got[..n], b"request\n");
        assert_eq!(flags(b.as_raw_fd()), before);
    }

    /// A regular file is left to the threads.
    #[tokio::test]
    async fn a_file_is_not_polled() {
        let f = File::open("/proc/self/status").expect("a file");
        assert!(Polled::open(f.as_raw_fd(), Interest::READABLE).is_none());
    }
}
