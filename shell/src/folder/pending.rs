//! What a relay keeps of the lines it passes on: whole lines only (a line is forwarded when its
//! `\n` arrives, so an owner that dies mid-line never leaves half of one at the next owner), and
//! the ids of the requests it forwarded that have no answer yet, read by the core's reader as
//! the owner reads them, so that the requests in flight when the owner died are answered with
//! an error instead of never, and no answered one again.

use std::collections::VecDeque;

use redmark_core::limits::MAX_MESSAGE;
use redmark_core::wire::envelope;
use redmark_core::wire::json::shallow::shallow_member;
use redmark_core::wire::json::{parse, Kind, Value as Json};
use serde_json::Value;

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

/// The id an answer carries, as the owner's core reads ids (first key wins, a string decoded,
/// an integer only when written as one): what pairs a forwarded request with its answer.
#[derive(Clone, Debug, PartialEq, Eq)]
enum AnswerId {
    /// `null` or none: the answer to a line whose id the core could not read.
    Null,
    /// An integer id.
    Int(i64),
    /// A string id, decoded.
    Str(String),
    /// Any other id an answer may carry (never a request's: the core refuses it).
    Other(Box<[u8]>),
}

impl AnswerId {
    /// The id `v` (`None`: no id) as the core reads it.
    fn of(v: Option<Json<'_>>) -> AnswerId {
        let Some(v) = v else {
            return AnswerId::Null;
        };
        if let Some(n) = v.as_i64() {
            return AnswerId::Int(n);
        }
        match v.kind() {
            Kind::Null => AnswerId::Null,
            Kind::String => {
                let mut scratch = vec![0; v.raw().len()];
                match v.as_str(&mut scratch) {
                    Some(s) => AnswerId::Str(s.to_owned()),
                    None => AnswerId::Other(v.raw().into()),
                }
            }
            _ => AnswerId::Other(v.raw().into()),
        }
    }

    /// The id as JSON, for an answer the relay writes itself.
    fn to_json(&self) -> Value {
        match self {
            AnswerId::Null => Value::Null,
            AnswerId::Int(n) => Value::from(*n),
            AnswerId::Str(s) => Value::from(s.as_str()),
            AnswerId::Other(raw) => serde_json::from_slice(raw).unwrap_or(Value::Null),
        }
    }
}

/// A line as the owner's framing hands it to its engine: without its `\n` and a trailing `\r`.
fn framed(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The id of the owner's answer to client line `line` (with its `\n`), or `None` if the owner
/// answers it with nothing. Read with the core's own envelope reader, so exactly as the owner
/// reads it: a blank line and a notification get nothing; any other line one answer, with the
/// id the core read (the first `id` key; `null` when it could not read one, as for `1.0`). A
/// client's response to a 2025-11-25 question (`legacy`) is taken by the owner's session.
fn expected_answer(line: &[u8], legacy: bool) -> Option<AnswerId> {
    let msg = framed(line);
    if msg.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    match envelope::read(msg) {
        Ok(env) => env.id.map(|id| AnswerId::of(Some(id))),
        Err(_) if legacy && is_response(msg) => None,
        Err((_, id)) => Some(AnswerId::of(id)),
    }
}

/// Whether `msg` is a JSON-RPC response (an object with `result` or `error` and no `method`).
fn is_response(msg: &[u8]) -> bool {
    let Ok(doc) = parse(msg) else {
        return false;
    };
    let [method, result, error] = doc.pick(["method", "result", "error"]);
    doc.kind() == Kind::Object && method.is_none() && (result.is_some() || error.is_some())
}

/// The id of owner line `line` (with its `\n`) if it is an answer (not a request or a
/// notification the owner sends). A line too deep for the core's reader (the owner's own
/// output, never seen) is read by its top-level members.
fn answer_id(line: &[u8]) -> Option<AnswerId> {
    let msg = framed(line);
    match parse(msg) {
        Ok(doc) if doc.kind() == Kind::Object => {
            let [id, method, result, error] = doc.pick(["id", "method", "result", "error"]);
            let answer = method.is_none() && (result.is_some() || error.is_some());
            answer.then(|| AnswerId::of(id))
        }
        Ok(_) => None,
        Err(_) => shallow_member(msg, "method")
            .is_none()
            .then(|| AnswerId::of(shallow_member(msg, "id"))),
    }
}

/// The forwarded requests not answered yet, oldest first, by the id of the answer each waits
/// for.
#[derive(Default)]
pub struct InFlight {
    ids: VecDeque<AnswerId>,
    /// The client's 2025-11-25 session opening, if it sent one.
    pub hello: Hello,
}

impl InFlight {
    /// Notes a line going to the owner.
    pub fn sent(&mut self, line: &[u8]) {
        self.hello.note(line);
        if let Some(id) = expected_answer(line, self.hello.opened()) {
            self.ids.push_back(id);
        }
    }

    /// Notes a line coming back from the owner. An answer settles the oldest request waiting
    /// for its id; one that matches none settles the oldest request when the client opened no
    /// 2025-11-25 session (the owner answers such a stream in order), so nothing waits for
    /// ever.
    pub fn answered(&mut self, line: &[u8]) {
        let Some(id) = answer_id(line) else {
            return;
        };
        match self.ids.iter().position(|x| *x == id) {
            Some(i) => {
                self.ids.remove(i);
            }
            None if !self.hello.opened() => {
                self.ids.pop_front();
            }
            None => {}
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
            let answer = serde_json::json!({
                "jsonrpc": "2.0",
                "id": id.to_json(),
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
        // Without a 2025-11-25 session the core answers a response too ("needs a method").
        f.sent(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
        f.sent(b"not json\r\n");
        f.sent(b"  \r\n");
        assert_eq!(f.len(), 4);
        f.answered(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        f.answered(br#"{"jsonrpc":"2.0","id":9,"method":"elicitation/create"}"#);
        f.answered(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#);
        assert_eq!(f.len(), 3);
        let lost = String::from_utf8(f.lost()).unwrap();
        let answers: Vec<Value> = lost
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(answers.len(), 3);
        assert_eq!(answers[0]["id"], "a b");
        assert_eq!(answers[1]["id"], 7);
        assert_eq!(answers[2]["id"], Value::Null);
        assert_eq!(answers[0]["error"]["code"], OWNER_LOST_CODE);
        assert_eq!(f.len(), 0);
    }

    /// Ids the core reads differently from a general JSON reader pair with the owner's answers
    /// (they once stayed in flight for ever, and were answered again at a handover).
    #[test]
    fn ids_are_read_as_the_owner_reads_them() {
        let three = || {
            let mut f = InFlight::default();
            f.sent(b"{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"ping\"}\n");
            f.sent(b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"id\":\"b\",\"method\":\"ping\"}\n");
            f.sent(b"{\"jsonrpc\":\"2.0\",\"id\":\"c\\u0064\",\"method\":\"ping\"}\n");
            f
        };
        let lost: Vec<Value> = String::from_utf8(three().lost())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let ids: Vec<&Value> = lost.iter().map(|v| &v["id"]).collect();
        assert_eq!(ids, [&Value::Null, &Value::from("a"), &Value::from("cd")]);
        let mut f = three();
        f.answered(b"{\"jsonrpc\":\"2.0\",\"id\":\"cd\",\"result\":{}}\n");
        f.answered(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600}}\n");
        f.answered(b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":-32601}}\n");
        assert_eq!(f.len(), 0);
        for _ in 0..2 * MAX_IN_FLIGHT {
            f.sent(b"{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"ping\"}\n");
            f.answered(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600}}\n");
        }
        assert_eq!(f.len(), 0, "nothing left behind");
    }

    #[test]
    fn an_answer_matching_nothing_settles_the_oldest_only_without_a_legacy_session() {
        let mut f = InFlight::default();
        f.sent(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        f.sent(br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
        f.answered(br#"{"jsonrpc":"2.0","id":"other","result":{}}"#);
        assert_eq!(f.ids, [AnswerId::Int(2)], "answers come in order");
        let mut f = InFlight::default();
        f.sent(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
        f.sent(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#);
        // A 2025-11-25 client's answer to the owner's question gets no answer of its own.
        f.sent(br#"{"jsonrpc":"2.0","id":"rm-0","result":{"action":"accept"}}"#);
        f.answered(br#"{"jsonrpc":"2.0","id":"other","result":{}}"#);
        assert_eq!(f.ids, [AnswerId::Int(0), AnswerId::Int(1)]);
    }

    #[test]
    fn an_error_without_id_answers_the_unreadable_line() {
        let mut f = InFlight::default();
        f.sent(b"{oops");
        f.answered(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#);
        assert_eq!(f.len(), 0);
    }
}
