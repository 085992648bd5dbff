//! The RFC 9112 Host rules hyper leaves to the server (§3.2): a request with more than one
//! `Host` line, or an HTTP/1.1 request with none, is **400**; a request in absolute form
//! (`POST http://host/mcp`) must be accepted, and its target's authority then stands for the
//! host (§3.2.2), so the DNS-rebinding guard looks at that rather than at the `Host` line.
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

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request;

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
