//! What one request and its answer were, for the counters: the method (one of a fixed few, so
//! a client cannot grow the label set), the outcome, the questions asked and answered.
//!
//! Read after the engine answered, from the request's bytes and the answer it wrote. The
//! request is walked shallowly (the core's `shallow_member`: linear, no recursion, nothing
//! validated but the member read); the answer is the engine's own writing, whose response
//! always opens `{"jsonrpc":"2.0","id":ID,` and then `"result"` or `"error"` — an id is a JSON
//! string or an integer, in which `,"` cannot occur unescaped, so the first `,"result":` or
//! `,"error":` is that member.

use redmark_core::limits::MAX_ID;
use redmark_core::wire::json::shallow::shallow_member;
use redmark_core::wire::json::{parse, Kind};

/// The `method` label values; a request is counted under one of them.
pub const METHODS: [&str; 13] = [
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    "subscriptions/listen",
    // Any `notifications/…`.
    "notifications",
    // Any other method name.
    "other",
    // No method could be read (not JSON, too long, no `method` string).
    "unreadable",
];

const NOTIFICATIONS: usize = 10;
const OTHER: usize = 11;
const UNREADABLE: usize = 12;

/// The JSON-RPC error codes the engine answers with (`core/src/engine/error.rs`), each a
/// `code` label value of its own; any other is counted as `other`.
pub const CODES: [i64; 8] = [
    -32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022,
];

/// How a request was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A result that is not `input_required`.
    Result,
    /// An `input_required` result: the tool asked.
    InputRequired,
    /// No response (a notification).
    Notification,
    /// A JSON-RPC error with this code (`None`: unreadable).
    Error(Option<i64>),
}

/// What a user did with one question, as an `inputResponses` entry says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Accept,
    Decline,
    Cancel,
    /// No `action`, or another word.
    Other,
}

impl Action {
    /// Every action, in the order of [`Action::label`]'s indexes.
    pub const ALL: [Action; 4] = [
        Action::Accept,
        Action::Decline,
        Action::Cancel,
        Action::Other,
    ];

    /// The `action` label value.
    pub fn label(self) -> &'static str {
        match self {
            Action::Accept => "accept",
            Action::Decline => "decline",
            Action::Cancel => "cancel",
            Action::Other => "other",
        }
    }
}

/// The index in [`METHODS`] of the method `request` names (`None`: an over-long message).
pub fn method_of(request: Option<&[u8]>) -> usize {
    let Some(m) = request.and_then(|r| shallow_member(r, "method")) else {
        return UNREADABLE;
    };
    if m.kind() != Kind::String {
        return UNREADABLE;
    }
    if let Some(i) = METHODS[..NOTIFICATIONS].iter().position(|n| m.eq_str(n)) {
        return i;
    }
    match m.str_escaped() {
        Some(s) if s.starts_with(b"notifications/") => NOTIFICATIONS,
        _ => OTHER,
    }
}

/// The outcome of an answer (`responded`: whether it holds a response; its last line is it).
pub fn outcome_of(answer: &[u8], responded: bool) -> Outcome {
    if !responded {
        return Outcome::Notification;
    }
    let response = answer.rsplit(|b| *b == b'\n').next().unwrap_or(answer);
    // A subscriptions/listen opened: its acknowledgement is its answer (the result comes when
    // the stream ends).
    if response.starts_with(LISTENING) {
        return Outcome::Result;
    }
    // The member after the id: within the opening, the id and a few bytes.
    let head = &response[..response.len().min(MAX_ID + 64)];
    let result = find(head, RESULT);
    let error = find(head, ERROR);
    match (result, error) {
        (Some(r), e) if e.is_none_or(|e| r < e) => {
            if response[r..].starts_with(b",\"result\":{\"resultType\":\"input_required\"") {
                Outcome::InputRequired
            } else {
                Outcome::Result
            }
        }
        (_, Some(e)) => Outcome::Error(code_at(&response[e + ERROR.len()..])),
        _ => Outcome::Error(None),
    }
}

/// The start of a `subscriptions/listen` stream's acknowledgement, as the core writes it.
const LISTENING: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged""#;
/// The response's result member.
const RESULT: &[u8] = b",\"result\":";
/// The response's error member, up to its code.
const ERROR: &[u8] = b",\"error\":{\"code\":";

/// Questions an `input_required` response asks (the members of its `inputRequests`).
pub fn questions_asked(answer: &[u8]) -> usize {
    let response = answer.rsplit(|b| *b == b'\n').next().unwrap_or(answer);
    parse(response)
        .ok()
        .and_then(|v| v.get("result"))
        .and_then(|r| r.get("inputRequests"))
        .filter(|q| q.kind() == Kind::Object)
        .map_or(0, |q| q.members().count())
}

/// The actions of the answers a `tools/call` retry carries (`params.inputResponses`), each
/// passed to `each`.
pub fn answers(request: &[u8], mut each: impl FnMut(Action)) {
    let Some(responses) = shallow_member(request, "params").and_then(|p| p.get("inputResponses"))
    else {
        return;
    };
    if responses.kind() != Kind::Object {
        return;
    }
    for (_, r) in responses.members() {
        let action = match r.get("action") {
            Some(a) if a.eq_str("accept") => Action::Accept,
            Some(a) if a.eq_str("decline") => Action::Decline,
            Some(a) if a.eq_str("cancel") => Action::Cancel,
            _ => Action::Other,
        };
        each(action);
    }
}

/// The index of the `code` label of `code` (the last one, `other`, for codes not in [`CODES`]).
pub fn code_index(code: Option<i64>) -> usize {
    code.and_then(|c| CODES.iter().position(|k| *k == c))
        .unwrap_or(CODES.len())
}

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The integer at the start of `s` (an error's code as the engine writes it).
fn code_at(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 || n > 9 {
        return None;
    }
    let v: i64 = std::str::from_utf8(&digits[..n]).ok()?.parse().ok()?;
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_a_fixed_few() {
        let m = |s: &str| METHODS[method_of(Some(s.as_bytes()))];
        assert_eq!(
            m(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#),
            "tools/call"
        );
        assert_eq!(
            m(r#"{"params":{"x":[1,{"method":"tools/list"}]},"method":"tools/list"}"#),
            "tools/list"
        );
        assert_eq!(
            m(r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#),
            "notifications"
        );
        assert_eq!(
            m(r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"}"#),
            "subscriptions/listen"
        );
        assert_eq!(m(r#"{"jsonrpc":"2.0","id":1,"method":"x/y"}"#), "other");
        assert_eq!(m(r#"{"jsonrpc":"2.0","id":1,"method":7}"#), "unreadable");
        assert_eq!(m("not json"), "unreadable");
        assert_eq!(m(r#"[{"method":"tools/list"}]"#), "unreadable");
        assert_eq!(METHODS[method_of(None)], "unreadable");
    }

    #[test]
    fn outcomes_are_read_from_the_member_after_the_id() {
        let o = |s: &str| outcome_of(s.as_bytes(), true);
        assert_eq!(
            o(r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[]}}"#),
            Outcome::Result
        );
        assert_eq!(
            o(
                r#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required","inputRequests":{}}}"#
            ),
            Outcome::InputRequired
        );
        assert_eq!(
            o(r#"{"jsonrpc":"2.0","id":12,"error":{"code":-32602,"message":"Unknown tool"}}"#),
            Outcome::Error(Some(-32602))
        );
        assert_eq!(
            o(r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#),
            Outcome::Error(Some(-32700))
        );
        // An id that spells a member is escaped, so it is not one.
        assert_eq!(
            o(
                r#"{"jsonrpc":"2.0","id":"a,\"error\":{\"code\":-1","result":{"resultType":"complete"}}"#
            ),
            Outcome::Result
        );
        assert_eq!(
            o(r#"{"jsonrpc":"2.0","id":"a,\"result\":{","error":{"code":-32603,"message":"x"}}"#),
            Outcome::Error(Some(-32603))
        );
        // Notifications before the response: the last line is the response.
        assert_eq!(
            o("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"complete\"}}"),
            Outcome::Result
        );
        assert_eq!(outcome_of(b"", false), Outcome::Notification);
        // A subscriptions/listen's acknowledgement: the stream opened.
        assert_eq!(
            o(
                r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}"#
            ),
            Outcome::Result
        );
        assert_eq!(o("garbage"), Outcome::Error(None));
        assert_eq!(code_index(Some(-32602)), 3);
        assert_eq!(code_index(Some(-1)), CODES.len());
        assert_eq!(code_index(None), CODES.len());
    }

    #[test]
    fn questions_and_answers_are_counted_one_each() {
        let asked = r#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required","inputRequests":{"room":{"method":"elicitation/create"},"confirm":{}},"requestState":"s"}}"#;
        assert_eq!(questions_asked(asked.as_bytes()), 2);
        assert_eq!(questions_asked(b"{}"), 0);
        let retry = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"book_room","inputResponses":{"a":{"action":"accept","content":{}},"b":{"action":"decline"},"c":{"action":"cancel"},"d":{"action":"maybe"},"e":{}},"requestState":"s"}}"#;
        let mut got = Vec::new();
        answers(retry.as_bytes(), |a| got.push(a));
        assert_eq!(
            got,
            [
                Action::Accept,
                Action::Decline,
                Action::Cancel,
                Action::Other,
                Action::Other
            ]
        );
        let mut none = 0;
        answers(
            br#"{"method":"tools/call","params":{"inputResponses":7}}"#,
            |_| none += 1,
        );
        answers(b"not json", |_| none += 1);
        assert_eq!(none, 0);
    }
}
