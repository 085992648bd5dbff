//! Where `redmark call` talks to, behind one small trait: send one request, get back every
//! message up to and including its response. The MRTR loop is written once, above this.
//!
//! - [`in_process::InProcess`]: a redmark engine on the default floor inside this process (on
//!   the data folder of `redmark serve`, or in memory with `--scratch`).
//! - [`lines::Lines`]: newline-delimited JSON over a child's stdin/stdout (`--stdio`) or a TCP
//!   connection (`--tcp`).
//! - [`http::Http`]: Streamable HTTP (`--url`), with the 2026-07-28 headers, answering with
//!   JSON or SSE.

pub mod http;
pub mod in_process;
pub mod lines;

use std::io::BufRead;
use std::time::Duration;

use serde_json::Value;

use crate::client::trace::tracing;

/// The protocol revision this client speaks.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The longest message (line, SSE line or event, JSON body) the client reads: 16 MiB. A
/// longer one fails the call with a protocol error ("line too long") instead of growing memory
/// without bound.
pub const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// Reads one line (with its `\n`, if any) of at most `max` bytes before the `\n`: `Ok(None)`
/// at end of stream, a [`TransportError::Protocol`] "line too long" past `max`.
pub(crate) fn read_line_limited(
    r: &mut impl BufRead,
    max: usize,
) -> Result<Option<String>, TransportError> {
    let io = |e: std::io::Error| TransportError::Io(format!("cannot read: {e}"));
    let mut line = Vec::new();
    loop {
        let buf = r.fill_buf().map_err(io)?;
        if buf.is_empty() {
            break;
        }
        let (take, end) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if line.len() + take - usize::from(end) > max {
            return Err(too_long(max));
        }
        line.extend_from_slice(&buf[..take]);
        r.consume(take);
        if end {
            break;
        }
    }
    if line.is_empty() {
        return Ok(None);
    }
    String::from_utf8(line)
        .map(Some)
        .map_err(|_| TransportError::Io("cannot read: a line is not UTF-8".into()))
}

/// The error for a message over `max` bytes.
pub(crate) fn too_long(max: usize) -> TransportError {
    TransportError::Protocol(format!("line too long: a message over {max} bytes"))
}

/// One request on its way out.
pub struct Outgoing<'a> {
    /// Its JSON-RPC id.
    pub id: u64,
    /// Its method (for the `Mcp-Method` header).
    pub method: &'a str,
    /// The tool, prompt or resource it names (for the `Mcp-Name` header).
    pub name: Option<&'a str>,
    /// The whole message, one line of JSON.
    pub body: &'a str,
}

/// Why a message could not be exchanged.
#[derive(Debug)]
pub enum TransportError {
    /// Could not start, connect, read or write.
    Io(String),
    /// No response within the timeout.
    Timeout(Duration),
    /// The peer closed before answering.
    Closed,
    /// Something arrived that is not what the transport allows (status, content type).
    Protocol(String),
    /// The server sent a JSON-RPC request: 2026-07-28 servers never do (questions go through
    /// `input_required`), and unanswered it would wait forever.
    ServerRequest(String),
    /// The caller's handler of a request the server sent stopped the exchange (its reason is
    /// kept by the caller).
    Aborted,
}

/// Whether a received message is a request the server sends (it has both `method` and `id`).
pub fn is_server_request(msg: &Value) -> bool {
    msg.get("method").is_some() && msg.get("id").is_some()
}

/// Refuses a server-initiated request (see [`is_server_request`]).
pub fn refuse_server_request(msg: &Value, line: &str) -> Result<(), TransportError> {
    if is_server_request(msg) {
        let m = msg.get("method").and_then(Value::as_str).unwrap_or("?");
        return Err(TransportError::ServerRequest(format!(
            "the server sent a JSON-RPC request ({m}); 2026-07-28 servers must not (is it an older protocol?): {line}"
        )));
    }
    Ok(())
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Io(e) => f.write_str(e),
            TransportError::Timeout(d) => write!(f, "no response within {} s", d.as_secs_f32()),
            TransportError::Closed => {
                f.write_str("the server closed the connection before answering")
            }
            TransportError::Protocol(e) | TransportError::ServerRequest(e) => f.write_str(e),
            TransportError::Aborted => f.write_str("stopped"),
        }
    }
}

/// Sends one request and returns the raw messages received up to and including its response
/// (notifications first, the response last), tracing each as it arrives.
pub trait Transport {
    /// Exchanges one request for its response.
    fn exchange(&mut self, req: &Outgoing<'_>) -> Result<Vec<String>, TransportError>;
}

/// Whether a received message is the response to request `id`: it carries that id, or it is an
/// error without an id (absent or `null`: the server could not read the request).
pub fn is_response_to(msg: &Value, id: u64) -> bool {
    let answer = msg.get("result").is_some() || msg.get("error").is_some();
    answer
        && match msg.get("id") {
            Some(Value::Null) | None => msg.get("error").is_some(),
            Some(v) => v.as_u64() == Some(id),
        }
}

/// Notes under `--trace` a message that is not part of the exchange.
pub(crate) fn trace_ignored(line: &str, why: &str) {
    if tracing() {
        eprintln!("   (ignored {why}: {line})");
    }
}

#[cfg(test)]
mod tests {
    use std::io::BufReader;

    use super::*;

    #[test]
    fn lines_are_read_with_a_limit() {
        let mut r = std::io::Cursor::new(&b"ab\ncdefgh\nij"[..]);
        let got = read_line_limited(&mut r, 2).unwrap();
        assert_eq!(got.as_deref(), Some("ab\n"));
        let e = read_line_limited(&mut r, 2).unwrap_err();
        assert!(e.to_string().starts_with("line too long"), "{e}");
        // Split across reads, too.
        let mut r = BufReader::with_capacity(2, &b"abcde\n"[..]);
        assert!(read_line_limited(&mut r, 4).is_err());
        let mut r = BufReader::with_capacity(2, &b"abcd\nxy"[..]);
        assert_eq!(
            read_line_limited(&mut r, 4).unwrap().as_deref(),
            Some("abcd\n")
        );
        assert_eq!(read_line_limited(&mut r, 4).unwrap().as_deref(), Some("xy"));
        assert_eq!(read_line_limited(&mut r, 4).unwrap(), None);
    }

    #[test]
    fn responses_are_matched_by_id() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        assert!(is_response_to(&v(r#"{"id":3,"result":{}}"#), 3));
        assert!(!is_response_to(&v(r#"{"id":4,"result":{}}"#), 3));
        assert!(!is_response_to(&v(r#"{"id":4,"error":{}}"#), 3));
        assert!(is_response_to(&v(r#"{"error":{}}"#), 3));
        assert!(is_response_to(&v(r#"{"id":null,"error":{}}"#), 3));
        assert!(!is_response_to(&v(r#"{"id":null,"result":{}}"#), 3));
    }
}
