//! One HTTP/1.1 request head read from a connection's buffer without copying: httparse's
//! tokenizing, then the headers the panel looks at (Host, Origin, Content-Length,
//! Transfer-Encoding, Connection and the MCP ones); and the Host/Origin guard against DNS
//! rebinding. `no_std`, no allocation; tested on the host (`src/tests.rs`) and fuzzed
//! (`core/fuzz`, target `panel_request`).
#![no_std]
#![forbid(unsafe_code)]

/// Header lines read per request (httparse's table: 16 bytes of stack each on a 32-bit
/// target, only while [`parse`] runs); more get [`HeadError::TooManyHeaders`] (431).
pub const MAX_HEADERS: usize = 24;
/// `Mcp-Param-*` headers kept per request; more get [`HeadError::Malformed`] (400).
pub const MAX_PARAMS: usize = 8;

/// A parsed request head, borrowing the connection's buffer.
pub struct Head<'a> {
    pub method: &'a str,
    /// The path without its query.
    pub path: &'a str,
    pub host: Option<&'a str>,
    pub origin: Option<&'a str>,
    pub content_length: Option<usize>,
    /// A `Transfer-Encoding` was sent (the panel reads only `Content-Length` bodies: 411).
    pub chunked: bool,
    /// `Connection: close`, or HTTP/1.0 without `Connection: keep-alive`.
    pub close: bool,
    pub version: Option<&'a str>,
    pub mcp_method: Option<&'a str>,
    pub mcp_name: Option<&'a str>,
    pub params: [(&'a str, &'a str); MAX_PARAMS],
    pub param_count: usize,
    /// Bytes of the head, up to and including the blank line.
    pub len: usize,
}

/// Why a head could not be read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum HeadError {
    /// The blank line has not arrived yet.
    Incomplete,
    /// More than [`MAX_HEADERS`] header lines.
    TooManyHeaders,
    /// Not HTTP/1.x; a bad request line, header name or value; a value the panel reads that is
    /// not UTF-8; a `Content-Length` that is not only digits or overflows; a second
    /// Host, Origin, Content-Length or MCP header; more than [`MAX_PARAMS`] `Mcp-Param-*`.
    Malformed,
}

/// Reads the head at the start of `buf`. Kept out of line so that httparse's header table is
/// off the stack before the engine runs.
#[inline(never)]
pub fn parse(buf: &[u8]) -> Result<Head<'_>, HeadError> {
    let mut table = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut table);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Err(HeadError::Incomplete),
        Err(httparse::Error::TooManyHeaders) => return Err(HeadError::TooManyHeaders),
        Err(_) => return Err(HeadError::Malformed),
    };
    let (Some(method), Some(target), Some(minor)) = (req.method, req.path, req.version) else {
        return Err(HeadError::Malformed);
    };
    let mut head = Head {
        method,
        path: target.split('?').next().unwrap_or(target),
        host: None,
        origin: None,
        content_length: None,
        chunked: false,
        close: minor == 0,
        version: None,
        mcp_method: None,
        mcp_name: None,
        params: [("", ""); MAX_PARAMS],
        param_count: 0,
        len,
    };
    for h in req.headers.iter() {
        read_header(&mut head, h.name, h.value)?;
    }
    Ok(head)
}

/// Takes one header line into `head`; headers the panel does not read are skipped unread.
fn read_header<'a>(head: &mut Head<'a>, name: &'a str, value: &'a [u8]) -> Result<(), HeadError> {
    let is = |n: &str| name.eq_ignore_ascii_case(n);
    let text = || core::str::from_utf8(value).map_err(|_| HeadError::Malformed);
    if is("host") {
        once(&mut head.host, text()?)
    } else if is("origin") {
        once(&mut head.origin, text()?)
    } else if is("content-length") {
        let n = content_length(value)?;
        match head.content_length.replace(n) {
            Some(_) => Err(HeadError::Malformed),
            None => Ok(()),
        }
    } else if is("transfer-encoding") {
        head.chunked = true;
        Ok(())
    } else if is("connection") {
        for option in text()?.split(',').map(|o| o.trim_matches([' ', '\t'])) {
            if option.eq_ignore_ascii_case("close") {
                head.close = true;
            } else if option.eq_ignore_ascii_case("keep-alive") {
                head.close = false;
            }
        }
        Ok(())
    } else if is("mcp-protocol-version") {
        once(&mut head.version, text()?)
    } else if is("mcp-method") {
        once(&mut head.mcp_method, text()?)
    } else if is("mcp-name") {
        once(&mut head.mcp_name, text()?)
    } else if name.len() > 10 && name.as_bytes()[..10].eq_ignore_ascii_case(b"mcp-param-") {
        let slot = head.params.get_mut(head.param_count).ok_or(HeadError::Malformed)?;
        // The name is all ASCII (an HTTP token), so byte 10 is a character boundary.
        *slot = (name.get(10..).ok_or(HeadError::Malformed)?, text()?);
        head.param_count += 1;
        Ok(())
    } else {
        Ok(())
    }
}

/// Sets a header that may appear once; a second one is malformed.
fn once<'a>(slot: &mut Option<&'a str>, value: &'a str) -> Result<(), HeadError> {
    match slot.replace(value) {
        Some(_) => Err(HeadError::Malformed),
        None => Ok(()),
    }
}

/// A `Content-Length` value (RFC 9110 §8.6: `1*DIGIT`, the surrounding whitespace already
/// gone): no sign, no inner space, no list, no overflow.
pub fn content_length(value: &[u8]) -> Result<usize, HeadError> {
    if value.is_empty() {
        return Err(HeadError::Malformed);
    }
    value.iter().try_fold(0usize, |n, &b| {
        let digit = b.checked_sub(b'0').filter(|d| *d <= 9).ok_or(HeadError::Malformed)?;
        n.checked_mul(10).and_then(|n| n.checked_add(digit.into())).ok_or(HeadError::Malformed)
    })
}

/// The host part of `host[:port]` / `[v6]:port`, as written (compared case-insensitively).
fn host_of(authority: &str) -> &str {
    let a = authority.trim();
    let is_port = |p: &str| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit());
    if a.starts_with('[') {
        return match a.find(']') {
            Some(i) if a[i + 1..].is_empty() || a[i + 1..].strip_prefix(':').is_some_and(is_port) => &a[..=i],
            _ => a,
        };
    }
    match a.rsplit_once(':') {
        Some((h, p)) if is_port(p) => h,
        _ => a,
    }
}

/// Whether `host` names the panel: a loopback name (a tunnel or port forward to it) or its
/// own IPv4 address as dotted decimal.
fn is_panel(host: &str, ip: [u8; 4]) -> bool {
    ["localhost", "127.0.0.1", "[::1]"].iter().any(|l| host.eq_ignore_ascii_case(l)) || is_ip(host, ip)
}

fn is_ip(host: &str, ip: [u8; 4]) -> bool {
    let mut parts = host.split('.');
    for octet in ip {
        // Digits only: `str::parse` would also take a sign (`+10`).
        let digits = parts.next().filter(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()));
        match digits.and_then(|p| p.parse::<u8>().ok()) {
            Some(o) if o == octet => {}
            _ => return false,
        }
    }
    parts.next().is_none()
}

/// The DNS-rebinding guard: `Host` must name the panel (its address or a loopback name, any
/// port), and so must `Origin` if sent. A page from another site, reaching the panel through
/// a name that resolves to it, sends that name as `Host` and its own site as `Origin`.
pub fn guard(head: &Head<'_>, ip: [u8; 4]) -> Result<(), &'static str> {
    let host = head.host.ok_or("no Host")?;
    if !is_panel(host_of(host), ip) {
        return Err("Host does not name the panel");
    }
    if let Some(o) = head.origin {
        let rest = o
            .strip_prefix("http://")
            .or_else(|| o.strip_prefix("https://"))
            .ok_or("Origin is not http(s)")?;
        let authority = rest.split('/').next().unwrap_or("");
        if !is_panel(host_of(authority), ip) {
            return Err("Origin does not name the panel");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
