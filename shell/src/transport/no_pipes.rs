//! Outside Linux stdin and stdout are never polled on the connection's task (that needs
//! `/proc/self/fd`, see the Linux `pipes`): these never exist, and [`super::stdio`] uses
//! tokio's own stdin and stdout.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

use super::stream::Sink;

/// stdin as a polled pipe: never, here.
pub enum PipeIn {}

impl PipeIn {
    /// Always `None` here.
    pub fn stdin() -> Option<Self> {
        None
    }
}

impl AsyncRead for PipeIn {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        _buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match *self {}
    }
}

/// stdout as a polled pipe: never, here.
pub enum PipeOut {}

impl PipeOut {
    /// Always `None` here.
    pub fn stdout() -> Option<Self> {
        None
    }
}

impl Sink for PipeOut {
    async fn send(&mut self, _batch: &mut Vec<u8>) -> io::Result<()> {
        match *self {}
    }
}
