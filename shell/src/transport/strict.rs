//! What a request must be before it is routed: the RFC 9112 Host rules hyper leaves to the
//! server, the Host/Origin guard, and JSON bodies only.
//!
//! RFC 9112 §3.2: a request with more than one `Host` line, or an HTTP/1.1 request with none,
//! is **400**; a request in absolute form (`POST http://host/mcp`) must be accepted, and its
//! target's authority then stands for the host (§3.2.2), so the DNS-rebinding guard looks at
//! that rather than at the `Host` line.
//!
//! Bare-LF line endings are accepted: RFC 9112 §2.2 lets a recipient recognise a single LF
//! as a line terminator, and hyper (httparse) has no setting to refuse them.

use std::borrow::Cow;

use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Version};
use axum::response::{IntoResponse, Response};

/// The headers the Host/Origin guard must see (the target's authority as `Host` for an
/// absolute-form request), or the 400 for a request whose Host is ambiguous or missing.
pub fn host_view(parts: &Parts) -> Result<Cow<'_, HeaderMap>, BadHost> {
    let hosts = parts.headers.get_all(header::HOST).iter().count();
    if hosts > 1 {
        return Err(BadHost("Bad request: more than one Host header\n"));
    }
    let Some(authority) = parts.uri.authority() else {
        if hosts == 0 && parts.version == Version::HTTP_11 {
            return Err(BadHost(
                "Bad request: an HTTP/1.1 request needs a Host header\n",
            ));
        }
        return Ok(Cow::Borrowed(&parts.headers));
    };
    let Ok(host) = HeaderValue::from_str(authority.as_str()) else {
        return Err(BadHost("Bad request: unreadable request target\n"));
    };
    let mut h = parts.headers.clone();
    h.insert(header::HOST, host);
    Ok(Cow::Owned(h))
}

/// Why a request's host is ambiguous or missing: answered **400** with this text.
#[derive(Debug)]
pub struct BadHost(&'static str);

impl IntoResponse for BadHost {
    fn into_response(self) -> Response {
        (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            self.0,
        )
            .into_response()
    }
}

/// `host[:port]` / `[v6][:port]` as its host, lower-cased, and its port (`None`: none, or
/// empty). Anything else after a `]` than a port keeps the whole text as the host (`[::1]evil`
/// is not `[::1]`, so it is never taken for local).
fn split_authority(authority: &str) -> (String, Option<&str>) {
    let a = authority.trim();
    let is_port = |p: &&str| p.chars().all(|c| c.is_ascii_digit());
    let (host, port) = match a.strip_prefix('[').map(|rest| rest.split_once(']')) {
        Some(Some((h, ""))) => (format!("[{h}]"), None),
        Some(Some((h, tail))) => match tail.strip_prefix(':').filter(is_port) {
            Some(p) => (format!("[{h}]"), Some(p)),
            None => (a.to_string(), None),
        },
        Some(None) => (a.to_string(), None),
        None => match a.rsplit_once(':').filter(|(_, p)| is_port(p)) {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (a.to_string(), None),
        },
    };
    (host.to_ascii_lowercase(), port.filter(|p| !p.is_empty()))
}

fn is_local(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

/// The DNS-rebinding and cross-origin guard (see [`super::http`]'s docs); `public`: the site's
/// public origin, which a browser names behind a TLS proxy that names this server in `Host`.
pub fn check_origin(
    h: &HeaderMap,
    loopback: bool,
    public: Option<&str>,
) -> Result<(), &'static str> {
    let host = h
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(split_authority);
    if loopback {
        match &host {
            Some((name, _)) if is_local(name) => {}
            Some(_) => return Err("Host is not a loopback name"),
            None => return Err("no Host"),
        }
    }
    let Some(origin) = h.get(header::ORIGIN) else {
        return Ok(());
    };
    let o = origin.to_str().map_err(|_| "unreadable Origin")?;
    if public.is_some_and(|p| p.eq_ignore_ascii_case(o)) {
        return Ok(());
    }
    let (default, rest) = match (o.strip_prefix("http://"), o.strip_prefix("https://")) {
        (Some(rest), _) => (80, rest),
        (_, Some(rest)) => (443, rest),
        _ => return Err("Origin is not http(s)"),
    };
    let (name, port) = split_authority(rest.split('/').next().unwrap_or(""));
    let Some((host_name, host_port)) = &host else {
        return Err("Origin without Host");
    };
    // A port left out is the scheme's default in the Origin; in the Host, whichever default
    // the client used (TLS may end in front of this server).
    let number = |p: Option<&str>| p.map(str::parse::<u16>);
    let same_port = match (number(*host_port), number(port)) {
        (None, None) => true,
        (Some(Ok(p)), None) | (None, Some(Ok(p))) => p == default,
        (Some(Ok(a)), Some(Ok(b))) => a == b,
        _ => false,
    };
    if name != *host_name || !same_port {
        return Err("Origin is not the Host (another site or port)");
    }
    Ok(())
}

/// Whether a request says its body is JSON (`application/json`, parameters aside).
pub fn is_json(h: &HeaderMap) -> bool {
    h.get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request;

    fn hm(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    fn guard(pairs: &[(&'static str, &'static str)], loopback: bool) -> bool {
        check_origin(&hm(pairs), loopback, None).is_ok()
    }

    #[test]
    fn origin_guard() {
        assert!(guard(&[("host", "127.0.0.1:8080")], true));
        assert!(!guard(&[("host", "evil.example:8080")], true));
        // Text after an IPv6 literal that is not a port: not that literal.
        for host in ["[::1]evil", "[::1]evil:80", "[::1]:80x", "[::1"] {
            assert!(!guard(&[("host", host)], true), "{host}");
        }
        assert!(!guard(
            &[("host", "[::1]"), ("origin", "http://[::1]evil.example")],
            true
        ));
        assert_eq!(split_authority("[::1]"), ("[::1]".into(), None));
        assert_eq!(
            split_authority("[::1]:8080"),
            ("[::1]".into(), Some("8080"))
        );
        assert_eq!(split_authority("LocalHost:"), ("localhost".into(), None));
        for origin in [
            "http://evil.example",
            "null",
            "file://",
            "http://127.0.0.1.evil",
        ] {
            let h = [("host", "127.0.0.1:8080"), ("origin", origin)];
            assert!(!guard(&h, true), "{origin}");
        }
        assert!(!guard(&[], true));
        assert!(guard(
            &[("host", "a.example:1"), ("origin", "https://a.example:1")],
            false
        ));
        assert!(!guard(
            &[("host", "a.example"), ("origin", "https://b.example")],
            false
        ));
    }

    /// Behind a TLS proxy that sends `Host: localhost`, the site's public origin is accepted
    /// too, and only it.
    #[test]
    fn the_public_origin_is_the_sites() {
        let public = Some("https://rooms.example.org");
        let with = |origin: &'static str| hm(&[("host", "localhost"), ("origin", origin)]);
        assert!(check_origin(&with("https://rooms.example.org"), true, public).is_ok());
        assert!(check_origin(&with("https://rooms.example.org"), true, None).is_err());
        for other in ["https://evil.example", "http://rooms.example.org", "null"] {
            assert!(check_origin(&with(other), true, public).is_err(), "{other}");
        }
        let elsewhere = hm(&[
            ("host", "evil.example"),
            ("origin", "https://rooms.example.org"),
        ]);
        assert!(
            check_origin(&elsewhere, true, public).is_err(),
            "Host still guarded"
        );
    }

    /// An Origin, when sent, is the Host itself: another local port is another site (a page
    /// there could otherwise drive this server with "simple" requests).
    #[test]
    fn an_origin_must_be_the_host() {
        let same = [
            ("127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("localhost:8080", "http://LOCALHOST:8080"),
            ("[::1]:8080", "http://[::1]:8080"),
            ("localhost", "http://localhost"),
            ("localhost:80", "http://localhost"),
            ("localhost", "http://localhost:80"),
            ("a.example", "https://a.example"),
            ("a.example:443", "https://a.example"),
        ];
        for (host, origin) in same {
            let loopback = !host.starts_with('a');
            assert!(
                guard(&[("host", host), ("origin", origin)], loopback),
                "{host} {origin}"
            );
        }
        let other = [
            ("localhost:1", "http://localhost:3000"),
            ("[::1]:80", "https://127.0.0.1"),
            ("127.0.0.1:8080", "http://localhost:8080"),
            ("localhost:8080", "http://localhost"),
            ("localhost", "https://localhost:8443"),
            ("localhost:8080", "http://localhost:99999"),
        ];
        for (host, origin) in other {
            assert!(
                !guard(&[("host", host), ("origin", origin)], true),
                "{host} {origin}"
            );
        }
    }

    #[test]
    fn json_bodies_only() {
        for t in [
            "application/json",
            "Application/JSON; charset=utf-8",
            " application/json ",
        ] {
            assert!(is_json(&hm(&[("content-type", t)])), "{t}");
        }
        for t in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
            "application/jsonx",
            "",
        ] {
            assert!(!is_json(&hm(&[("content-type", t)])), "{t}");
        }
        assert!(!is_json(&hm(&[])));
    }

    fn parts(uri: &str, hosts: &[&'static str]) -> Parts {
        let mut b = Request::builder().method("POST").uri(uri);
        for h in hosts {
            b = b.header("host", *h);
        }
        b.body(()).unwrap().into_parts().0
    }

    #[test]
    fn one_host_or_the_target_authority() {
        let two = parts("/mcp", &["127.0.0.1:1", "127.0.0.1:1"]);
        assert_eq!(host_view(&two).unwrap_err().into_response().status(), 400);
        let none = parts("/mcp", &[]);
        assert_eq!(host_view(&none).unwrap_err().into_response().status(), 400);
        let one = parts("/mcp", &["localhost:1"]);
        assert!(matches!(host_view(&one), Ok(Cow::Borrowed(_))));
        let absolute = parts("http://evil.example/mcp", &["127.0.0.1:1"]);
        let view = host_view(&absolute).unwrap();
        assert_eq!(view.get(header::HOST).unwrap(), "evil.example");
    }
}
