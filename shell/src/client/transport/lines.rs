//! [`Lines`]: newline-delimited JSON over a child's stdin/stdout (`--stdio`) or a TCP
//! connection (`--tcp`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{
    is_response_to, is_server_request, read_line_limited, refuse_server_request, trace_ignored,
    Outgoing, Transport, TransportError, MAX_MESSAGE,
};
use crate::client::shell::shell_command;
use crate::client::trace::trace;

/// What to do with a request the server sends while a response is awaited, given the stream
/// to answer on, the message and its text; an error stops the exchange.
pub type OnRequest<'a> = dyn FnMut(&mut Lines, &Value, &str) -> Result<(), TransportError> + 'a;

/// Newline-delimited JSON-RPC over a byte stream: a child process or a TCP connection.
pub struct Lines {
    writer: Box<dyn Write + Send>,
    lines: Receiver<Result<String, TransportError>>,
    child: Option<Child>,
    timeout: Duration,
}

impl Lines {
    /// Spawns `command` through the platform's shell (`sh -c`, `cmd.exe /C`: client/shell.rs)
    /// and talks over its stdin/stdout; its stderr is passed on line by line, never cutting
    /// into a traced message.
    pub fn spawn(command: &str, timeout: Duration) -> Result<Lines, TransportError> {
        let mut child = shell_command(command, true)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| TransportError::Io(format!("cannot start '{command}': {e}")))?;
        if let Some(err) = child.stderr.take() {
            thread::spawn(move || {
                let mut r = BufReader::new(err);
                let mut line = Vec::new();
                while matches!(r.read_until(b'\n', &mut line), Ok(n) if n > 0) {
                    if line.last() != Some(&b'\n') {
                        line.push(b'\n');
                    }
                    let _ = std::io::stderr().lock().write_all(&line);
                    line.clear();
                }
            });
        }
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| TransportError::Io("no stdin pipe".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| TransportError::Io("no stdout pipe".into()))?;
        Ok(Lines {
            writer: Box::new(stdin),
            lines: reader(stdout),
            child: Some(child),
            timeout,
        })
    }

    /// Connects to `addr` (HOST:PORT).
    pub fn connect(addr: &str, timeout: Duration) -> Result<Lines, TransportError> {
        let io = |e: std::io::Error| TransportError::Io(format!("cannot connect to {addr}: {e}"));
        let stream = TcpStream::connect(addr).map_err(io)?;
        stream.set_nodelay(true).ok();
        let read = stream.try_clone().map_err(io)?;
        Ok(Lines {
            writer: Box::new(stream),
            lines: reader(read),
            child: None,
            timeout,
        })
    }

    /// FOLDER (crate::folder): talks to the process holding a data folder's store over its
    /// socket.
    #[cfg(unix)]
    pub fn over_socket(
        stream: crate::folder::Connection,
        timeout: Duration,
    ) -> Result<Lines, TransportError> {
        let read = stream
            .try_clone()
            .map_err(|e| TransportError::Io(format!("cannot use the data folder's socket: {e}")))?;
        Ok(Lines {
            writer: Box::new(ClosedOnDrop(stream)),
            lines: reader(read),
            child: None,
            timeout,
        })
    }

    /// No connection to a data folder's owner outside Unix.
    #[cfg(not(unix))]
    pub fn over_socket(
        stream: crate::folder::Connection,
        _timeout: Duration,
    ) -> Result<Lines, TransportError> {
        match stream {}
    }
}

/// A Unix socket shut down both ways when dropped (its reading clone would otherwise keep it
/// open, and the server would never see the end).
#[cfg(unix)]
struct ClosedOnDrop(std::os::unix::net::UnixStream);

#[cfg(unix)]
impl Write for ClosedOnDrop {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(unix)]
impl Drop for ClosedOnDrop {
    fn drop(&mut self) {
        let _ = self.0.shutdown(std::net::Shutdown::Both);
    }
}

/// Reads lines (each at most [`MAX_MESSAGE`] bytes) on a thread, so waits can time out.
fn reader(r: impl Read + Send + 'static) -> Receiver<Result<String, TransportError>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut r = BufReader::new(r);
        loop {
            match read_line_limited(&mut r, MAX_MESSAGE) {
                Ok(None) => break,
                Ok(Some(line)) => {
                    if tx.send(Ok(line)).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    break;
                }
            }
        }
    });
    rx
}

impl Transport for Lines {
    /// Server requests are refused: 2026-07-28 servers send none.
    fn exchange(&mut self, req: &Outgoing<'_>) -> Result<Vec<String>, TransportError> {
        self.exchange_handling(req, &mut |_, msg, line| refuse_server_request(msg, line))
    }
}

impl Lines {
    /// Writes one line.
    pub(crate) fn write_line(&mut self, body: &str) -> Result<(), TransportError> {
        let io = |e: std::io::Error| TransportError::Io(format!("cannot send: {e}"));
        self.writer.write_all(body.as_bytes()).map_err(io)?;
        self.writer.write_all(b"\n").map_err(io)?;
        self.writer.flush().map_err(io)
    }

    /// Sends `req` and reads up to its response; a request the server sends meanwhile is
    /// handed to `on_request`.
    pub(crate) fn exchange_handling(
        &mut self,
        req: &Outgoing<'_>,
        on_request: &mut OnRequest<'_>,
    ) -> Result<Vec<String>, TransportError> {
        self.write_line(req.body)?;
        let deadline = Instant::now() + self.timeout;
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(Ok(line)) => line,
                Ok(Err(e)) => return Err(e),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(TransportError::Timeout(self.timeout))
                }
                Err(RecvTimeoutError::Disconnected) => return Err(TransportError::Closed),
            };
            let line = line.trim_end_matches(['\n', '\r']);
            // Firmware consoles and some servers print other lines; only JSON objects count.
            let Ok(msg) = serde_json::from_str::<Value>(line) else {
                if !line.trim().is_empty() {
                    trace_ignored(line, "a line that is not JSON");
                }
                continue;
            };
            if !msg.is_object() {
                trace_ignored(line, "a line that is not a JSON object");
                continue;
            }
            trace("←", line);
            if is_server_request(&msg) {
                on_request(self, &msg, line)?;
                continue;
            }
            let done = is_response_to(&msg, req.id);
            if !done && msg.get("method").is_none() {
                trace_ignored(line, "a response to another request");
                continue;
            }
            got.push(line.to_owned());
            if done {
                return Ok(got);
            }
        }
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        // Closing stdin tells a stdio server to exit; give it a moment, then make sure.
        self.writer = Box::new(std::io::sink());
        if let Some(mut child) = self.child.take() {
            let deadline = Instant::now() + Duration::from_secs(2);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
