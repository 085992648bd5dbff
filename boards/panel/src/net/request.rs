//! One HTTP/1.1 request read from a connection's buffer: the request line and the headers the
//! panel looks at (Host, Origin, Content-Length, Transfer-Encoding, Connection and the MCP
//! ones), without copying; and the Host/Origin guard against DNS rebinding.

/// `Mcp-Param-*` headers kept per request; more get 400.
pub const MAX_PARAMS: usize = 8;

/// A parsed request head, borrowing the connection's buffer.
pub struct Head<'a> {
    pub method: &'a str,
    /// The path without its query.
    pub path: &'a str,
    pub host: Option<&'a str>,
    pub origin: Option<&'a str>,
    pub content_length: Option<usize>,
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
    /// Not HTTP/1.x, not UTF-8, a bad header line or length, too many `Mcp-Param-*`.
    Malformed,
}

/// The end of the head (index after `\r\n\r\n`), if it is all in `buf`.
fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Reads the head at the start of `buf`.
pub fn parse(buf: &[u8]) -> Result<Head<'_>, HeadError> {
    let len = head_end(buf).ok_or(HeadError::Incomplete)?;
    let text = core::str::from_utf8(&buf[..len - 4]).map_err(|_| HeadError::Malformed)?;
    let mut lines = text.split("\r\n");
    let first = lines.next().ok_or(HeadError::Malformed)?;
    let mut parts = first.split(' ');
    let (Some(method), Some(target), Some(proto), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HeadError::Malformed);
    };
    let http10 = match proto {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        _ => return Err(HeadError::Malformed),
    };
    let path = target.split('?').next().unwrap_or(target);
    let mut head = Head {
        method,
        path,
        host: None,
        origin: None,
        content_length: None,
        chunked: false,
        close: http10,
        version: None,
        mcp_method: None,
        mcp_name: None,
        params: [("", ""); MAX_PARAMS],
        param_count: 0,
        len,
    };
    for line in lines {
        let (name, value) = line.split_once(':').ok_or(HeadError::Malformed)?;
        if name.is_empty() || name.contains(' ') {
            return Err(HeadError::Malformed);
        }
        let value = value.trim_matches([' ', '\t']);
        let is = |n: &str| name.eq_ignore_ascii_case(n);
        if is("host") {
            if head.host.replace(value).is_some() {
                return Err(HeadError::Malformed);
            }
        } else if is("origin") {
            head.origin = Some(value);
        } else if is("content-length") {
            let n = value.parse::<usize>().map_err(|_| HeadError::Malformed)?;
            if head.content_length.replace(n).is_some_and(|m| m != n) {
                return Err(HeadError::Malformed);
            }
        } else if is("transfer-encoding") {
            head.chunked = true;
        } else if is("connection") {
            if value.eq_ignore_ascii_case("close") {
                head.close = true;
            } else if value.eq_ignore_ascii_case("keep-alive") {
                head.close = false;
            }
        } else if is("mcp-protocol-version") {
            head.version = Some(value);
        } else if is("mcp-method") {
            head.mcp_method = Some(value);
        } else if is("mcp-name") {
            head.mcp_name = Some(value);
        } else if name.len() > 10 && name[..10].eq_ignore_ascii_case("mcp-param-") {
            let slot = head.params.get_mut(head.param_count).ok_or(HeadError::Malformed)?;
            *slot = (&name[10..], value);
            head.param_count += 1;
        }
    }
    Ok(head)
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
        match parts.next().and_then(|p| p.parse::<u8>().ok()) {
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
