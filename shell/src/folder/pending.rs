//! What a relay keeps of the lines it passes on: whole lines only (a line is forwarded when its
//! `\n` arrives, so an owner that dies mid-line never leaves half of one at the next owner), and
//! the ids of the requests it forwarded that have no answer yet, so that the requests in flight
//! when the owner died are answered with an error instead of never.

use std::collections::VecDeque;

use redmark_core::limits::MAX_MESSAGE;
use serde_json::{Map, Value};

use super::replay::Hello;

/// The JSON-RPC error code of a request whose serving process stopped before answering it.
pub const OWNER_LOST_CODE: i64 = -32603;

/// The message of that error.
pub const OWNER_LOST_MESSAGE: &str = "the redmark process serving this data folder stopped \
    before answering, so this request was not acknowledged; it may or may not have taken \
    effect: call again (a retry with the same requestState books at most once)";

/// Requests forwarded and not yet answered before the relay stops reading its client: a
/// client pipelining more than this waits for answers first.
pub const MAX_IN_FLIGHT: usize = 4096;

/// Splits a byte stream into whole lines of at most [`MAX_MESSAGE`] bytes (the server's own
/// limit), each with its `\n`. A longer line is dropped as it arrives and stands as one line
/// the server will answer exactly as it answers any over-long line (its `-32600` without id):
/// [`MAX_MESSAGE`] + 1 bytes of `x`.
#[derive(Default)]
pub struct LineSplitter {
    partial: Vec<u8>,
    dropping: bool,
}

impl LineSplitter {
    /// Takes `input`, appending each line it completes (with its `\n`) to `out`.
    pub fn push(&mut self, mut input: &[u8], out: &mut Vec<Vec<u8>>) {
        while !input.is_empty() {
            let (run, done) = match input.iter().position(|b| *b == b'\n') {
                Some(i) => (&input[..=i], true),
                None => (input, false),
            };
            input = &input[run.len()..];
            if !self.dropping {
                if self.partial.len() + run.len() - usize::from(done) > MAX_MESSAGE {
                    self.dropping = true;
                    self.partial.clear();
                } else {
                    self.partial.extend_from_slice(run);
                }
            }
            if done {
                if std::mem::take(&mut self.dropping) {
                    let mut long = vec![b'x'; MAX_MESSAGE + 1];
                    long.push(b'\n');
                    out.push(long);
                } else {
                    out.push(std::mem::take(&mut self.partial));
                }
            }
        }
    }

    /// The start of a line not yet complete, for the reader of the server this relay becomes
    /// (handover). Midway through an over-long line that is [`MAX_MESSAGE`] + 1 bytes of `x`,
    /// so the server's framing drops the line's rest and refuses it as too long, as here.
    pub fn take_partial(&mut self) -> Vec<u8> {
        if std::mem::take(&mut self.dropping) {
            return vec![b'x'; MAX_MESSAGE + 1];
        }
        std::mem::take(&mut self.partial)
    }
}

/// The ids of forwarded requests not answered yet, oldest first (JSON text of each id;
/// `null` for a line the server will answer without an id).
#[derive(Default)]
pub struct InFlight {
    ids: VecDeque<String>,
    /// The client's 2025-11-25 session opening, if it sent one.
    pub hello: Hello,
}

impl InFlight {
    /// Notes a line going to the owner.
    pub fn sent(&mut self, line: &[u8]) {
        match serde_json::from_slice::<Map<String, Value>>(line) {
            Ok(m) => {
                self.hello.note(line, &m);
                // A request (method and id) gets an answer; a notification or a response the
                // client sends (to a 2025-11-25 question) gets none.
                if let (Some(_), Some(id)) = (m.get("method"), m.get("id")) {
                    self.ids.push_back(id.to_string());
                }
            }
            // Blank lines are skipped by the server, anything else unreadable is answered
            // with an error without id.
            Err(_) if line.iter().all(u8::is_ascii_whitespace) => {}
            Err(_) => self.ids.push_back("null".to_owned()),
        }
    }

    /// Notes a line coming back from the owner.
    pub fn answered(&mut self, line: &[u8]) {
        let Ok(m) = serde_json::from_slice::<Map<String, Value>>(line) else {
            return;
        };
        if m.contains_key("method") || !(m.contains_key("result") || m.contains_key("error")) {
            return;
        }
        let id = m
            .get("id")
            .map_or_else(|| "null".to_owned(), Value::to_string);
        if let Some(i) = self.ids.iter().position(|x| *x == id) {
            self.ids.remove(i);
        }
    }

    /// How many requests wait for an answer.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The error answers of every request in flight (each a line with its `\n`); forgets them.
    pub fn lost(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        for id in self.ids.drain(..) {
            // The id is JSON text the client sent (parsed and written again by serde_json).
            let id: Value = serde_json::from_str(&id).unwrap_or(Value::Null);
            let answer = serde_json::json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": OWNER_LOST_CODE, "message": OWNER_LOST_MESSAGE},
            });
            out.extend_from_slice(answer.to_string().as_bytes());
            out.push(b'\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &mut LineSplitter, input: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        s.push(input, &mut out);
        out
    }

    #[test]
    fn lines_are_passed_whole_and_the_rest_kept() {
        let mut s = LineSplitter::default();
        assert!(lines(&mut s, b"{\"a\"").is_empty());
        assert_eq!(lines(&mut s, b":1}\n{\"b\"").concat(), b"{\"a\":1}\n");
        assert_eq!(s.take_partial(), b"{\"b\"");
        assert_eq!(
            lines(&mut s, b"x\r\ny\n"),
            vec![b"x\r\n".to_vec(), b"y\n".to_vec()]
        );
    }

    #[test]
    fn an_over_long_line_stands_as_one_the_server_refuses_as_too_long() {
        let mut s = LineSplitter::default();
        let long = vec![b'{'; MAX_MESSAGE + 10];
        assert!(lines(&mut s, &long).is_empty());
        assert!(s.partial.is_empty(), "memory stays bounded");
        let got = lines(&mut s, b"}\nok\n");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].len(), MAX_MESSAGE + 2);
        assert_eq!(got[1], b"ok\n");
        // Exactly the limit still fits.
        let mut fits = vec![b'a'; MAX_MESSAGE];
        fits.push(b'\n');
        assert_eq!(lines(&mut s, &fits), vec![fits.clone()]);
    }

    #[test]
    fn requests_wait_until_answered_and_are_answered_with_an_error_when_lost() {
        let mut f = InFlight::default();
        f.sent(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#);
        f.sent(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        f.sent(br#"{"jsonrpc":"2.0","id":"a b","method":"tools/list"}"#);
        f.sent(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
        f.sent(b"not json");
        f.sent(b"  ");
        assert_eq!(f.len(), 3);
        f.answered(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        f.answered(br#"{"jsonrpc":"2.0","id":9,"method":"elicitation/create"}"#);
        assert_eq!(f.len(), 2);
        let lost = String::from_utf8(f.lost()).unwrap();
        let answers: Vec<Value> = lost
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(answers.len(), 2);
        assert_eq!(answers[0]["id"], "a b");
        assert_eq!(answers[1]["id"], Value::Null);
        assert_eq!(answers[0]["error"]["code"], OWNER_LOST_CODE);
        assert_eq!(f.len(), 0);
    }

    #[test]
    fn an_error_without_id_answers_the_unreadable_line() {
        let mut f = InFlight::default();
        f.sent(b"{oops");
        f.answered(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#);
        assert_eq!(f.len(), 0);
    }
}
