//! What the resource server says over HTTP: its protected-resource metadata (RFC 9728), the
//! 401 `WWW-Authenticate: Bearer resource_metadata="…"` challenge, and 403 `insufficient_scope`
//! naming the scope a tool needs (RFC 6750 §3).

use std::borrow::Cow;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

/// The well-known path of protected-resource metadata (RFC 9728 §3).
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// Whether `name` is a booking tool that changes bookings (one not declared `read_only`): it
/// needs the write scope. Every other tool (`list_rooms`, the conformance fixtures) needs only
/// a valid token for this resource.
pub fn is_write_tool(name: &str) -> bool {
    redmark_core::booking::TOOLS
        .iter()
        .any(|t| t.info.name == name && !t.info.read_only)
}

/// The protected-resource metadata document.
pub fn resource_document(resource: &str, issuer: &str, scopes: &[String]) -> Vec<u8> {
    let doc = json!({
        "resource": resource,
        "authorization_servers": [issuer],
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": "redmark",
    });
    doc.to_string().into_bytes()
}

/// Serves the metadata document.
pub fn metadata_response(doc: &[u8]) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "max-age=300"),
        ],
        doc.to_vec(),
    )
        .into_response()
}

/// A quoted-string parameter value: `"` and `\` escaped (RFC 9110 §5.6.4).
fn quoted(v: &str) -> String {
    let mut s = String::with_capacity(v.len() + 2);
    s.push('"');
    for c in v.chars() {
        if c == '"' || c == '\\' {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('"');
    s
}

fn challenge(status: StatusCode, params: &[(&str, &str)], text: &'static str) -> Response {
    let value = params
        .iter()
        .map(|(k, v)| format!("{k}={}", quoted(v)))
        .collect::<Vec<_>>()
        .join(", ");
    let mut r = (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text,
    )
        .into_response();
    if let Ok(v) = HeaderValue::from_str(&format!("Bearer {value}")) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    r
}

/// 401: no token, or (`presented`) one that is not valid here.
pub fn unauthorized(metadata_url: &str, presented: bool) -> Response {
    if presented {
        challenge(
            StatusCode::UNAUTHORIZED,
            &[
                ("resource_metadata", metadata_url),
                ("error", "invalid_token"),
                ("error_description", "the access token is not valid here"),
            ],
            "Unauthorized: the access token is not valid for this resource\n",
        )
    } else {
        challenge(
            StatusCode::UNAUTHORIZED,
            &[("resource_metadata", metadata_url)],
            "Unauthorized: send Authorization: Bearer <access token>\n",
        )
    }
}

/// 403: the token lacks `scope`, which `tool` needs.
pub fn insufficient_scope(metadata_url: &str, scope: &str, tool: &str) -> Response {
    let why = format!("{tool} needs scope {scope}");
    challenge(
        StatusCode::FORBIDDEN,
        &[
            ("error", "insufficient_scope"),
            ("scope", scope),
            ("resource_metadata", metadata_url),
            ("error_description", &why),
        ],
        "Forbidden: the access token lacks the scope this tool needs\n",
    )
}

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<ProbeParams<'a>>,
}

#[derive(Deserialize)]
struct ProbeParams<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
}

/// What a message asks of the scopes: `Ok(None)` nothing, `Ok(Some(tool))` a tool that needs
/// the write scope, `Err(())` a body this check cannot read (then every scope is required: a
/// body the engine might read otherwise never slips past the check).
pub fn write_tool(body: &[u8]) -> Result<Option<String>, ()> {
    let p: Probe<'_> = serde_json::from_slice(body).map_err(|_| ())?;
    if p.method.as_deref() != Some("tools/call") {
        return Ok(None);
    }
    let name = p.params.and_then(|p| p.name).ok_or(())?;
    Ok(is_write_tool(&name).then(|| name.into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writing_tools_are_found_in_the_body() {
        let call = |n: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{n}"}}}}"#)
        };
        assert_eq!(
            write_tool(call("book_room").as_bytes()),
            Ok(Some("book_room".into()))
        );
        assert_eq!(
            write_tool(call("book\\u005froom").as_bytes()),
            Ok(Some("book_room".into()))
        );
        assert_eq!(write_tool(call("list_rooms").as_bytes()), Ok(None));
        for t in [
            "cancel_booking",
            "extend_booking",
            "end_booking",
            "check_in",
        ] {
            assert_eq!(write_tool(call(t).as_bytes()), Ok(Some(t.into())));
        }
        for t in [
            "day_schedule",
            "list_bookings",
            "booking_trail",
            "no_such_tool",
        ] {
            assert_eq!(write_tool(call(t).as_bytes()), Ok(None));
        }
        assert_eq!(
            write_tool(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#),
            Ok(None)
        );
        // Two names: the check cannot know which the engine takes, so it asks for all.
        assert_eq!(
            write_tool(
                br#"{"method":"tools/call","params":{"name":"list_rooms","name":"book_room"}}"#
            ),
            Err(())
        );
        assert_eq!(write_tool(b"not json"), Err(()));
        assert_eq!(write_tool(br#"{"method":"tools/call"}"#), Err(()));
    }

    #[test]
    fn challenges_point_at_the_metadata() {
        let r = unauthorized("http://h/.well-known/oauth-protected-resource/mcp", false);
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        let h = r.headers()[header::WWW_AUTHENTICATE].to_str().unwrap();
        assert_eq!(
            h,
            "Bearer resource_metadata=\"http://h/.well-known/oauth-protected-resource/mcp\""
        );
        let r = insufficient_scope("u", "rooms:write", "book_room");
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        let h = r.headers()[header::WWW_AUTHENTICATE].to_str().unwrap();
        assert!(
            h.starts_with("Bearer error=\"insufficient_scope\", scope=\"rooms:write\""),
            "{h}"
        );
        assert_eq!(quoted("a\"b\\"), "\"a\\\"b\\\\\"");
    }
}
