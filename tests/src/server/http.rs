//! Raw HTTP/1.1 to the server: one exchange per connection, the response read off the wire
//! (chunked bodies joined), and POSTs to `/mcp` with the MCP headers.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use serde_json::Value;

use super::{VERSION, WAIT};

/// An HTTP response as read off the wire.
#[derive(Debug)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// Headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The first header named `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (panics if it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

/// One raw HTTP/1.1 exchange (`Connection: close`). `headers` are sent as given, after a
/// `Host: 127.0.0.1:PORT` unless they contain their own `Host`.
pub fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> HttpResponse {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(WAIT)).expect("timeout");
    let mut req = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    s.write_all(req.as_bytes()).expect("write head");
    // A server may answer (413) before reading a large body; ignore a reset while sending it.
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    parse_response(&raw)
}

fn parse_response(raw: &[u8]) -> HttpResponse {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("no HTTP head in response");
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    HttpResponse {
        status,
        headers,
        body,
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(i) = b.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&b[..i]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&b[i + 2..i + 2 + size]);
        b = &b[i + 2 + size + 2..];
    }
    out
}

/// POSTs `body` to `/mcp` with exactly these MCP headers (`None`: absent), plus `extra`.
pub fn post_mcp_headers(
    addr: SocketAddr,
    body: &[u8],
    version: Option<&str>,
    method: Option<&str>,
    name: Option<&str>,
    extra: &[(&str, &str)],
) -> HttpResponse {
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    if let Some(v) = version {
        h.push(("MCP-Protocol-Version", v));
    }
    if let Some(m) = method {
        h.push(("Mcp-Method", m));
    }
    if let Some(n) = name {
        h.push(("Mcp-Name", n));
    }
    h.extend_from_slice(extra);
    http(addr, "POST", "/mcp", &h, body)
}

/// POSTs one JSON-RPC message to `/mcp` with the MCP headers derived from it (version,
/// method, and name for `tools/call`), plus `extra` headers.
pub fn post_mcp(addr: SocketAddr, msg: &Value, extra: &[(&str, &str)]) -> HttpResponse {
    let version = msg["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        .as_str()
        .unwrap_or(VERSION);
    let method = msg["method"].as_str().unwrap_or("");
    let name = msg["params"]["name"]
        .as_str()
        .or_else(|| msg["params"]["uri"].as_str());
    post_mcp_headers(
        addr,
        &serde_json::to_vec(msg).expect("serialize"),
        Some(version),
        Some(method),
        name,
        extra,
    )
}
