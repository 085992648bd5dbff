//! The calendar feeds over HTTP (`GET /calendars/…`, [`crate::calendar`]): the feed key in a URL checked, the caller's feed URLs listed, a feed answered as `text/calendar` with its ETag.

use std::sync::Arc;

use axum::http::request::Parts;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use redmark_core::booking::holder;
use redmark_core::Via;
use sha2::{Digest, Sha256};

use crate::auth::role::{seat, unseat};
use crate::auth::tokens::Tokens;
use crate::calendar::{Ask, Calendars, FeedError, Route};

/// The query parameter a feed's key travels in.
const KEY_PARAM: &str = "key";

fn plain(status: StatusCode, text: &'static str) -> Response {
    let ty = [(header::CONTENT_TYPE, "text/plain; charset=utf-8")];
    (status, ty, text).into_response()
}

/// The `key` of the request's query, if it has one.
fn key_of(parts: &Parts) -> Option<&str> {
    let query = parts.uri.query()?;
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix(KEY_PARAM)?.strip_prefix('='))
}

/// The caller a feed key in the URL names (seated as a plain user over HTTP), the 403 when the
/// key is not valid (forged, or revoked: the sealing key rotated, or with `--tokens` the
/// principal's token changed or removed); `None` when the URL has no key.
pub fn keyed(
    parts: &Parts,
    calendars: Option<&dyn Calendars>,
    tokens: Option<&Tokens>,
    oauth: bool,
) -> Option<Result<Arc<[u8]>, Response>> {
    let key = key_of(parts)?;
    let refused = || {
        plain(
            StatusCode::FORBIDDEN,
            "Forbidden: this feed key is not valid (revoked or mistyped); fetch your feed URLs \
             again from /calendars/ with your bearer token\n",
        )
    };
    let Some(calendars) = calendars else {
        return Some(Err(refused()));
    };
    let decode = <base64ct::Base64UrlUnpadded as base64ct::Encoding>::decode_vec;
    let Some(Ok(principal)) = key.split_once('.').map(|(p, _)| decode(p)) else {
        return Some(Err(refused()));
    };
    // With --tokens, a key is bound to the token it was issued for; a principal of an issuer
    // or of a server without tokens has no token to bind to.
    let mut bindings: Vec<&[u8]> = tokens.map_or(Vec::new(), |t| t.hashes_of(&principal).collect());
    if tokens.is_none() || oauth {
        bindings.push(&[]);
    }
    Some(match calendars.key().open(key, bindings) {
        Some(p) => Ok(Arc::from(seat(&p, false, Via::Http))),
        None => Err(refused()),
    })
}

/// Where the feed URLs handed out point: the public origin (`--resource`'s) or, without one,
/// this server as the request's `Host` names it (`http` on loopback, else `https`).
#[derive(Clone, Copy)]
pub struct Base<'a> {
    /// `--resource`'s origin, when the server has one (`scheme://authority`).
    pub public: Option<&'a str>,
    /// Whether the listener is on loopback (then `http`).
    pub loopback: bool,
}

/// The answer to `route` for the caller `seated` (authenticated by its bearer token, whose
/// `bearer` is passed to bind the feed keys it is given, or by a feed key).
pub async fn answer(
    calendars: Option<&dyn Calendars>,
    parts: &Parts,
    route: Route,
    seated: &[u8],
    bearer: Option<&str>,
    tokens: Option<&Tokens>,
    base: Base<'_>,
) -> Response {
    if parts.method != Method::GET && parts.method != Method::HEAD {
        let mut r = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "Method not allowed: GET a calendar feed\n",
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    let Some(calendars) = calendars else {
        return plain(
            StatusCode::NOT_FOUND,
            "Not found: this server has no calendars\n",
        );
    };
    let (access, principal) = unseat(seated);
    if route == Route::Index {
        if key_of(parts).is_some() {
            return plain(
                StatusCode::FORBIDDEN,
                "Forbidden: a feed key does not list feeds; use your bearer token\n",
            );
        }
        // The key is bound to the token the caller used, when it is one of --tokens.
        let binding = match (tokens, bearer) {
            (Some(t), Some(b)) if t.caller(b).is_some() => Sha256::digest(b.as_bytes()).to_vec(),
            _ => Vec::new(),
        };
        let key = calendars.key().issue(principal, &binding);
        return index(calendars, parts, &key, base);
    }
    let ask = Ask {
        route,
        holder: holder(principal),
        operator: access.operator,
        now: jiff::Timestamp::now(),
    };
    let feed = match calendars.read(ask).await {
        Ok(f) => f,
        Err(FeedError::UnknownRoom) => {
            return plain(StatusCode::NOT_FOUND, "Not found: no such room or feed\n")
        }
        Err(FeedError::Store(e)) => {
            tracing::warn!("calendar feed: {e}");
            return plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "The booking store failed\n",
            );
        }
    };
    let etag = etag(&feed.body);
    let fresh = parts
        .headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|v| v.as_bytes() == etag.as_bytes());
    let mut r = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let ty = [(header::CONTENT_TYPE, "text/calendar; charset=utf-8")];
        (StatusCode::OK, ty, feed.body).into_response()
    };
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache"),
    );
    if feed.truncated {
        h.insert(
            header::HeaderName::from_static("redmark-feed-truncated"),
            HeaderValue::from(crate::calendar::feed::MAX_FEED_EVENTS),
        );
    }
    r
}

/// The feed's ETag: its content but the DTSTAMP lines (the time of the request).
fn etag(body: &str) -> String {
    let mut h = Sha256::new();
    for line in body.split("\r\n").filter(|l| !l.starts_with("DTSTAMP:")) {
        h.update(line.as_bytes());
        h.update(b"\n");
    }
    format!("\"{}\"", hex::encode(&h.finalize()[..12]))
}

/// The caller's feed URLs, each with its key (text: paste one into a calendar app).
fn index(calendars: &dyn Calendars, parts: &Parts, key: &str, base: Base<'_>) -> Response {
    let host = parts
        .headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let base = match base.public {
        Some(origin) => origin.to_owned(),
        None => format!("{}://{host}", if base.loopback { "http" } else { "https" }),
    };
    let mut text = String::from(
        "Your calendar feeds (subscribe to a URL in a calendar app; the key in it stands for \
         you: keep it secret). docs/calendars.md says how to revoke it.\n\n",
    );
    let url = |path: &str| {
        format!(
            "{base}{}{path}?{KEY_PARAM}={key}\n",
            crate::calendar::PREFIX
        )
    };
    text.push_str(&format!("Your bookings: {}", url("mine.ics")));
    for floor in calendars.floors() {
        for room in floor.rooms {
            text.push_str(&format!(
                "{}: {}",
                room.name,
                url(&format!("rooms/{}.ics", room.id))
            ));
            text.push_str(&format!(
                "{} (free/busy): {}",
                room.name,
                url(&format!("rooms/{}/freebusy.ics", room.id))
            ));
        }
    }
    let ty = [(header::CONTENT_TYPE, "text/plain; charset=utf-8")];
    let mut r = (StatusCode::OK, ty, text).into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(uri: &str) -> Parts {
        axum::http::Request::get(uri)
            .body(())
            .unwrap()
            .into_parts()
            .0
    }

    #[test]
    fn the_key_is_read_from_the_query_and_a_malformed_one_is_refused() {
        assert_eq!(key_of(&parts("/calendars/mine.ics?key=a.b")), Some("a.b"));
        assert_eq!(
            key_of(&parts("/calendars/mine.ics?x=1&key=a.b&y")),
            Some("a.b")
        );
        assert_eq!(key_of(&parts("/calendars/mine.ics?keys=a.b")), None);
        assert_eq!(key_of(&parts("/calendars/mine.ics")), None);
        // A key without a principal, or not base64url: 403, never the bearer's path.
        for bad in ["nodot", ".", "%%%.x"] {
            let p = parts(&format!("/calendars/mine.ics?key={bad}"));
            let none: Option<&dyn Calendars> = None;
            let r = keyed(&p, none, None, false).expect("a key was given");
            assert_eq!(r.unwrap_err().status(), StatusCode::FORBIDDEN, "{bad}");
        }
    }

    #[test]
    fn the_etag_ignores_the_time_of_the_request_only() {
        let a = "BEGIN:VEVENT\r\nDTSTAMP:20261207T000000Z\r\nSUMMARY:x\r\n";
        let b = "BEGIN:VEVENT\r\nDTSTAMP:20261208T000000Z\r\nSUMMARY:x\r\n";
        let c = "BEGIN:VEVENT\r\nDTSTAMP:20261207T000000Z\r\nSUMMARY:y\r\n";
        assert_eq!(etag(a), etag(b));
        assert_ne!(etag(a), etag(c));
    }
}
