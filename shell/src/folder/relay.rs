//! The relay: a stdio `redmark serve` whose data folder's store another process owns passes
//! its client's lines to the owner's socket and the owner's lines back, byte for byte, whole
//! lines only; when the owner goes, it answers what was in flight with an error and either
//! takes the store over (then serves its stdio itself) or relays to the process that did.

use std::path::Path;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use super::pending::{InFlight, LineSplitter, MAX_IN_FLIGHT};
use super::{reach, replay, socket_path, Opened, Reached, REACH_WAIT};
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
    loop {
        let ended = pass(
            &mut ends,
            &mut conn,
            &mut lines,
            &mut inflight,
            &mut stdin_open,
            skip.take(),
        )
        .await;
        let mut lost = inflight.lost();
        let told = lost.is_empty() || ends.sink.send(&mut lost).await.is_ok();
        // Nobody left to serve: the client closed stdin (and has every answer) or stdout.
        if ended == Ended::ClientGone || !told || !stdin_open {
            return Ok(Opened::Relayed);
        }
        match reach(at, REACH_WAIT).await? {
            Reached::Owner(store) => {
                eprintln!(
                    "redmark: the process serving {} is gone; this one serves it now",
                    at.display()
                );
                ends.source.unread(&lines.take_partial());
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

/// Passes lines between stdio and one connection to the owner until either side ends.
async fn pass(
    ends: &mut StdioEnds,
    conn: &mut UnixStream,
    lines: &mut LineSplitter,
    inflight: &mut InFlight,
    stdin_open: &mut bool,
    skip: Option<String>,
) -> Ended {
    let (mut from_owner, mut to_owner) = conn.split();
    let mut stdin_chunk = vec![0u8; CHUNK];
    let mut owner_chunk = vec![0u8; CHUNK];
    let mut outgoing: Vec<u8> = Vec::new();
    let mut written = 0;
    let mut done = Vec::new();
    let mut answers = Answers {
        skip,
        ..Answers::default()
    };
    let mut batch = Vec::new();
    loop {
        let read_stdin =
            *stdin_open && outgoing.len() < MAX_TO_OWNER && inflight.len() < MAX_IN_FLIGHT;
        tokio::select! {
            r = ends.source.read(&mut stdin_chunk), if read_stdin => match r {
                Ok(0) | Err(_) => {
                    *stdin_open = false;
                    // Sent all: tell the owner; its answers still come back.
                    if written == outgoing.len() && to_owner.shutdown().await.is_err() {
                        return Ended::OwnerGone;
                    }
                }
                Ok(n) => {
                    lines.push(&stdin_chunk[..n], &mut done);
                    for line in done.drain(..) {
                        inflight.sent(&line);
                        outgoing.extend_from_slice(&line);
                    }
                }
            },
            r = to_owner.write(&outgoing[written..]), if written < outgoing.len() => match r {
                Ok(n) if n > 0 => {
                    written += n;
                    if written == outgoing.len() {
                        outgoing.clear();
                        written = 0;
                        if !*stdin_open && to_owner.shutdown().await.is_err() {
                            return Ended::OwnerGone;
                        }
                    }
                }
                _ => return Ended::OwnerGone,
            },
            r = from_owner.read(&mut owner_chunk) => match r {
                Ok(0) | Err(_) if !*stdin_open && inflight.len() == 0 && outgoing.is_empty() => {
                    return Ended::ClientGone
                }
                Ok(0) | Err(_) => return Ended::OwnerGone,
                Ok(n) => {
                    answers.push(&owner_chunk[..n], inflight, &mut batch);
                    if !batch.is_empty() && ends.sink.send(&mut batch).await.is_err() {
                        return Ended::ClientGone;
                    }
                }
            },
        }
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
                    if replay::is_answer_to(line, id) {
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
