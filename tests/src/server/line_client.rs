//! Newline-delimited JSON-RPC to the server over any byte stream (TCP, a child's stdio), every
//! read bounded by [`WAIT`].

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

use serde_json::Value;

use super::WAIT;

/// Newline-delimited JSON-RPC over any byte stream, with bounded reads. A TCP client shuts its
/// socket down when dropped (the reading thread holds a clone of it).
pub struct LineClient<R: Read, W: Write> {
    reader: Receiver<Option<Vec<u8>>>,
    writer: W,
    on_drop: Option<Box<dyn FnOnce() + Send>>,
    _r: std::marker::PhantomData<R>,
}

impl<R: Read, W: Write> Drop for LineClient<R, W> {
    fn drop(&mut self) {
        if let Some(f) = self.on_drop.take() {
            f();
        }
    }
}

impl LineClient<TcpStream, TcpStream> {
    /// Connects to `addr`.
    pub fn tcp(addr: SocketAddr) -> Self {
        let s = TcpStream::connect(addr).expect("connect");
        let r = s.try_clone().expect("clone socket");
        let closer = s.try_clone().expect("clone socket");
        let mut c = LineClient::new(r, s);
        c.on_drop = Some(Box::new(move || {
            let _ = closer.shutdown(std::net::Shutdown::Both);
        }));
        c
    }
}

impl<R: Read + Send + 'static, W: Write> LineClient<R, W> {
    /// Reads lines from `r` on a thread; writes to `w`.
    pub fn new(r: R, w: W) -> Self {
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut br = BufReader::new(r);
            loop {
                let mut line = Vec::new();
                match br.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(None);
                        return;
                    }
                    Ok(_) => {
                        if line.last() == Some(&b'\n') {
                            line.pop();
                        }
                        if tx.send(Some(line)).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        LineClient {
            reader: rx,
            writer: w,
            on_drop: None,
            _r: std::marker::PhantomData,
        }
    }

    /// The writing half (e.g. to `shutdown` a TCP stream while the reader still runs).
    pub fn writer(&mut self) -> &mut W {
        &mut self.writer
    }

    /// Writes raw bytes (no newline added).
    pub fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(bytes)?;
        self.writer.flush()
    }

    /// Writes `msg` as one line.
    pub fn send(&mut self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).expect("serialize");
        line.push(b'\n');
        self.send_raw(&line).expect("write line");
    }

    /// The next line, or `None` at end of stream; panics after [`WAIT`].
    pub fn recv_line(&mut self) -> Option<Vec<u8>> {
        self.reader.recv_timeout(WAIT).expect("no reply in time")
    }

    /// The next line within `wait`: `Ok(Some)` a line, `Ok(None)` end of stream, `Err` nothing
    /// arrived in time.
    pub fn try_recv_line(
        &mut self,
        wait: Duration,
    ) -> Result<Option<Vec<u8>>, mpsc::RecvTimeoutError> {
        self.reader.recv_timeout(wait)
    }

    /// The next line as JSON; panics at end of stream.
    pub fn recv(&mut self) -> Value {
        let line = self.recv_line().expect("stream ended");
        serde_json::from_slice(&line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&line)))
    }

    /// Sends a request and returns the next message.
    pub fn request(&mut self, msg: &Value) -> Value {
        self.send(msg);
        self.recv()
    }
}
