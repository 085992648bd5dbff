//! The relay: a stdio `redmark serve` whose data folder's store another process owns passes
//! its client's lines to the owner's socket and the owner's lines back, byte for byte, whole
//! lines only; when the owner goes, it answers what was in flight with an error and either
//! takes the store over (then serves its stdio itself) or relays to the process that did.

use std::path::Path;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use super::pending::{InFlight, LineSplitter, MAX_IN_FLIGHT};
use super::{reach, socket_path, Opened, Reached, REACH_WAIT};
use crate::transport::skip_answer::is_answer_to;
use crate::transport::stdio::StdioEnds;
use crate::transport::stream::Sink;

/// Bytes of one read from stdin or the socket.
const CHUNK: usize = 16 * 1024;

/// Bytes of client lines waiting to be written to the owner before stdin is read again.
pub const MAX_TO_OWNER: usize = 256 * 1024;

/// Bytes of an unfinished answer line held back (so a dying owner leaves no half line on
/// stdout); an answer longer than this is passed on as it comes.
pub const MAX_ANSWER_HELD: usize = 1024 * 1024;

/// Relays stdio to the owner of `at`'s store until the client leaves (or this process takes
/// the store over).
pub async fn run(at: &Path) -> Result<Opened, String> {
    let mut ends = StdioEnds::open();
    let sock = socket_path(at);
    let mut conn = match reach(at, REACH_WAIT).await? {
        Reached::Owner(store) => return Ok(Opened::Store(store, Some(ends))),
        Reached::Relay(c) => c,
    };
    eprintln!(
        "redmark: the store in {} is served by another redmark process; passing this one's \
         messages to it through {}",
        at.display(),
        sock.display()
    );
    let mut lines = LineSplitter::default();
    let mut inflight = InFlight::default();
    let mut stdin_open = true;
    let mut skip = None;
    let mut undelivered = Vec::new();
    loop {
        let ended = pass(
            &mut ends,
            &mut conn,
            &mut lines,
            &mut inflight,
            &mut stdin_open,
            skip.take(),
            &mut undelivered,
        )
        .await;
        let mut lost = inflight.lost();
        let told = lost.is_empty() || ends.sink.send(&mut lost).await.is_ok();
        // Nobody left to serve: the client closed stdin (and has every answer, none left to
        // pass on) or stdout.
        if ended == Ended::ClientGone || !told || (!stdin_open && undelivered.is_empty()) {
            return Ok(Opened::Relayed);
        }
        match reach(at, REACH_WAIT).await? {
            Reached::Owner(store) => {
                eprintln!(
                    "redmark: the process serving {} is gone; this one serves it now",
                    at.display()
                );
                // Read back in this order: the session's opening, the lines the old owner
                // never got, the start of the next line.
                ends.source.unread(&lines.take_partial());
                ends.source.unread(&std::mem::take(&mut undelivered));
                if let Some(r) = inflight.hello.replay() {
                    ends.source.unread(&r.lines);
                    ends.skip_answer = Some(r.answer_id);
                }
                return Ok(Opened::Store(store, Some(ends)));
            }
            Reached::Relay(c) => {
                eprintln!(
                    "redmark: the process serving {} is gone; passing messages to the one that \
                     took over",
                    at.display()
                );
                conn = c;
                if let Some(r) = inflight.hello.replay() {
                    if conn.write_all(&r.lines).await.is_ok() {
                        skip = Some(r.answer_id);
                    }
                }
            }
        }
    }
}

/// Why [`pass`] stopped.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    /// The client closed stdin and every answer was passed on, or stdout is closed.
    ClientGone,
    /// The owner's socket closed or failed.
    OwnerGone,
}

/// Passes lines between stdio and one connection to the owner until either side ends; sends
/// `undelivered` (whole lines) first, and leaves in it the lines whose `\n` the owner did not
/// get when it went. A line counts as sent to the owner (noted in [`InFlight`]) once its `\n`
/// is written: the owner acts on whole lines only, so a line not written whole never reached
/// it and goes to the next owner instead of being answered as lost.
async fn pass(
    ends: &mut StdioEnds,
    conn: &mut UnixStream,
    lines: &mut LineSplitter,
    inflight: &mut InFlight,
    stdin_open: &mut bool,
    skip: Option<String>,
    undelivered: &mut Vec<u8>,
) -> Ended {
    let (mut from_owner, mut to_owner) = conn.split();
    let mut stdin_chunk = vec![0u8; CHUNK];
    let mut owner_chunk = vec![0u8; CHUNK];
    let mut outgoing = Outgoing::new(std::mem::take(undelivered));
    let mut done = Vec::new();
    let mut answers = Answers {
        skip,
        ..Answers::default()
    };
    let mut batch = Vec::new();
    let ended = loop {
        let read_stdin =
            *stdin_open && outgoing.len() < MAX_TO_OWNER && inflight.len() < MAX_IN_FLIGHT;
        tokio::select! {
            r = ends.source.read(&mut stdin_chunk), if read_stdin => match r {
                Ok(0) | Err(_) => {
                    *stdin_open = false;
                    // Sent all: tell the owner; its answers still come back.
                    if outgoing.is_empty() && to_owner.shutdown().await.is_err() {
                        break Ended::OwnerGone;
                    }
                }
                Ok(n) => {
                    lines.push(&stdin_chunk[..n], &mut done);
                    for line in done.drain(..) {
                        outgoing.push(&line);
                    }
                }
            },
            r = to_owner.write(outgoing.unwritten()), if !outgoing.is_empty() => match r {
                Ok(n) if n > 0 => {
                    outgoing.wrote(n, inflight);
                    if outgoing.is_empty() && !*stdin_open && to_owner.shutdown().await.is_err() {
                        break Ended::OwnerGone;
                    }
                }
                _ => break Ended::OwnerGone,
            },
            r = from_owner.read(&mut owner_chunk) => match r {
                Ok(0) | Err(_) if !*stdin_open && inflight.len() == 0 && outgoing.is_empty() => {
                    break Ended::ClientGone
                }
                Ok(0) | Err(_) => break Ended::OwnerGone,
                Ok(n) => {
                    answers.push(&owner_chunk[..n], inflight, &mut batch);
                    if !batch.is_empty() && ends.sink.send(&mut batch).await.is_err() {
                        break Ended::ClientGone;
                    }
                }
            },
        }
    };
    *undelivered = outgoing.undelivered();
    ended
}

/// Client lines on their way to the owner: whole lines, the first `written` bytes written.
struct Outgoing {
    bytes: Vec<u8>,
    written: usize,
    /// Where the first line not yet written whole starts.
    delivered: usize,
}

impl Outgoing {
    /// Starts with `lines` (whole lines, none of them sent yet).
    fn new(lines: Vec<u8>) -> Self {
        Outgoing {
            bytes: lines,
            written: 0,
            delivered: 0,
        }
    }

    /// Queues one whole line (with its `\n`).
    fn push(&mut self, line: &[u8]) {
        self.bytes.extend_from_slice(line);
    }

    /// Bytes queued and not yet written.
    fn len(&self) -> usize {
        self.bytes.len() - self.written
    }

    /// Nothing left to write.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What to write next.
    fn unwritten(&self) -> &[u8] {
        &self.bytes[self.written..]
    }

    /// Notes `n` more bytes written; each line now written whole is noted in `inflight`.
    fn wrote(&mut self, n: usize, inflight: &mut InFlight) {
        self.written += n;
        while let Some(end) = self.bytes[self.delivered..self.written]
            .iter()
            .position(|b| *b == b'\n')
        {
            let end = self.delivered + end + 1;
            inflight.sent(&self.bytes[self.delivered..end]);
            self.delivered = end;
        }
        if self.written == self.bytes.len() {
            self.bytes.clear();
            self.written = 0;
            self.delivered = 0;
        }
    }

    /// The lines the owner did not get whole (a line it got part of included: it never acted
    /// on it).
    fn undelivered(mut self) -> Vec<u8> {
        self.bytes.drain(..self.delivered);
        self.bytes
    }
}

/// The owner's lines on their way to stdout: whole lines (each noted in [`InFlight`]), the
/// rest held back up to [`MAX_ANSWER_HELD`].
#[derive(Default)]
struct Answers {
    held: Vec<u8>,
    /// The held bytes continue a line already partly passed on (not noted).
    torn: bool,
    /// The id of an answer to drop (to a replayed `initialize`, see [`super::replay`]).
    skip: Option<String>,
}

impl Answers {
    /// Takes `input`; appends what may go out to `out`.
    fn push(&mut self, input: &[u8], inflight: &mut InFlight, out: &mut Vec<u8>) {
        self.held.extend_from_slice(input);
        let Some(last) = self.held.iter().rposition(|b| *b == b'\n') else {
            if self.held.len() > MAX_ANSWER_HELD {
                out.append(&mut self.held);
                self.torn = true;
            }
            return;
        };
        let rest = self.held.split_off(last + 1);
        for (i, line) in self.held.split_inclusive(|b| *b == b'\n').enumerate() {
            let tail_of_torn = i == 0 && self.torn;
            if !tail_of_torn {
                if let Some(id) = &self.skip {
                    if is_answer_to(line, id) {
                        self.skip = None;
                        continue;
                    }
                }
                inflight.answered(line);
            }
            out.extend_from_slice(line);
        }
        self.torn = false;
        self.held = rest;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_go_out_as_whole_lines_and_settle_their_requests() {
        let mut f = InFlight::default();
        f.sent(br#"{"id":1,"method":"a"}"#);
        f.sent(br#"{"id":2,"method":"a"}"#);
        let mut a = Answers::default();
        let mut out = Vec::new();
        a.push(br#"{"id":1,"result":{}}"#, &mut f, &mut out);
        assert!(out.is_empty(), "half a line is held back");
        a.push(b"\n{\"id\":2,", &mut f, &mut out);
        assert_eq!(out, b"{\"id\":1,\"result\":{}}\n");
        assert_eq!(f.len(), 1);
        out.clear();
        a.push(b"\"result\":{}}\n", &mut f, &mut out);
        assert_eq!(out, b"{\"id\":2,\"result\":{}}\n");
        assert_eq!(f.len(), 0);
    }

    #[test]
    fn a_line_counts_as_sent_once_written_whole_and_the_rest_goes_to_the_next_owner() {
        let mut f = InFlight::default();
        let mut o = Outgoing::new(b"{\"id\":1,\"method\":\"a\"}\n".to_vec());
        o.push(b"{\"id\":2,\"method\":\"a\"}\n");
        o.push(b"{\"id\":3,\"method\":\"a\"}\n");
        o.wrote(5, &mut f);
        assert_eq!(f.len(), 0, "half a line is not in flight");
        o.wrote(30, &mut f);
        assert_eq!(f.len(), 1);
        assert_eq!(o.len(), 3 * 22 - 35, "the write goes on mid-line");
        let rest = o.undelivered();
        assert_eq!(
            rest, b"{\"id\":2,\"method\":\"a\"}\n{\"id\":3,\"method\":\"a\"}\n",
            "the partly written line and the next, whole"
        );
        let mut o = Outgoing::new(rest);
        let all = o.len();
        o.wrote(all, &mut f);
        assert!(o.is_empty());
        assert_eq!(f.len(), 3);
        assert!(o.undelivered().is_empty());
    }

    #[test]
    fn the_answer_to_a_replayed_initialize_is_dropped() {
        let mut f = InFlight::default();
        f.sent(br#"{"id":3,"method":"tools/list"}"#);
        let mut a = Answers {
            skip: Some("0".into()),
            ..Answers::default()
        };
        let mut out = Vec::new();
        a.push(
            b"{\"id\":0,\"result\":{}}\n{\"id\":3,\"result\":{}}\n{\"id\":0,\"result\":{}}\n",
            &mut f,
            &mut out,
        );
        assert_eq!(out, b"{\"id\":3,\"result\":{}}\n{\"id\":0,\"result\":{}}\n");
        assert_eq!(f.len(), 0);
    }

    #[test]
    fn a_huge_answer_is_passed_on_without_holding_it_all() {
        let mut f = InFlight::default();
        let mut a = Answers::default();
        let mut out = Vec::new();
        a.push(&vec![b'a'; MAX_ANSWER_HELD + 1], &mut f, &mut out);
        assert_eq!(out.len(), MAX_ANSWER_HELD + 1);
        out.clear();
        a.push(b"a\n", &mut f, &mut out);
        assert_eq!(out, b"a\n");
    }
}
