//! What handling one message produced: the answer's length and HTTP status, and a [`Note`]
//! for the log.

use crate::seal::SealError;

/// What a message produced. A transport must send `out[..len]` (when `responded`) and log
/// the `note`; dropping a `Handled` unread loses the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "the answer is in `out[..len]` and must be sent; the note should be logged"]
pub struct Handled {
    /// Bytes of `out` holding the answer: one or more messages separated by `\n`, no
    /// trailing newline; the last one is the response. 0 for a notification.
    pub len: usize,
    /// The HTTP status a Streamable HTTP transport should use (202 for a notification).
    pub status: u16,
    /// Whether a response was written.
    pub responded: bool,
    /// Something for the log that the wire does not say.
    pub note: Option<Note>,
    /// The message opened a `subscriptions/listen` stream: `out[..len]` is its
    /// acknowledgement, and the host now keeps the stream (`engine::listen::Listen`; never
    /// without the `resources` feature).
    pub listening: bool,
}

/// A log-worthy event behind an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Note {
    /// A `requestState` was refused; the wire only says "Invalid requestState".
    StateRejected(SealError),
    /// An answer overflowed the output buffer and was replaced by an error.
    ResponseTooLarge,
    /// The output buffer is smaller than [`MIN_OUT`](crate::limits::MIN_OUT); nothing was written.
    OutputTooSmall,
    /// A tool reported a server-side fault.
    Internal(&'static str),
}

impl core::fmt::Display for Note {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Note::StateRejected(e) => write!(f, "requestState rejected: {e}"),
            Note::ResponseTooLarge => f.write_str("response too large for the output buffer"),
            Note::OutputTooSmall => f.write_str("output buffer too small"),
            Note::Internal(why) => write!(f, "server fault: {why}"),
        }
    }
}
