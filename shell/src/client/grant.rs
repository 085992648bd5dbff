//! An access token by the client-credentials grant (RFC 6749 §4.4) for an MCP endpoint, from
//! the authorization server its protected-resource metadata (RFC 9728) names, asked for that
//! resource (RFC 8707 `resource`). Blocking (`redmark call` is synchronous).

use base64ct::{Base64, Encoding as _};
use serde_json::Value;

use crate::auth::metadata::{self, get_json, split_url, strings, well_known_inserted};

/// A client's credentials.
pub struct Credentials<'a> {
    /// `client_id`.
    pub id: &'a str,
    /// `client_secret`.
    pub secret: &'a str,
    /// Scopes to ask for (space-separated); by default every scope the resource lists.
    pub scope: Option<&'a str>,
}

/// What a client needs from a resource's protected-resource metadata (RFC 9728).
#[derive(Debug, Clone)]
pub struct Resource {
    /// `resource`: the identifier to ask tokens for (RFC 8707 `resource`).
    pub resource: String,
    /// `authorization_servers`.
    pub authorization_servers: Vec<String>,
    /// `scopes_supported`.
    pub scopes: Vec<String>,
}

/// The protected-resource metadata of the MCP endpoint `endpoint`: the path-suffixed
/// well-known URI first, then the root one (as MCP clients look for it).
pub fn fetch_resource(agent: &ureq::Agent, endpoint: &str) -> Result<Resource, String> {
    let suffixed = well_known_inserted(endpoint, "oauth-protected-resource")?;
    let (origin, _) = split_url(endpoint)?;
    let root = format!("{origin}/.well-known/oauth-protected-resource");
    let mut tried = Vec::new();
    for url in [suffixed, root] {
        match get_json(agent, &url) {
            Ok(doc) => return parse_resource(&doc, &url),
            Err(e) => tried.push(e),
        }
    }
    Err(format!(
        "no protected-resource metadata for {endpoint} ({})",
        tried.join("; ")
    ))
}

fn parse_resource(doc: &Value, from: &str) -> Result<Resource, String> {
    let list = |k: &str| strings(doc, k);
    let resource = doc
        .get("resource")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{from} has no resource"))?
        .to_owned();
    let authorization_servers = list("authorization_servers");
    if authorization_servers.is_empty() {
        return Err(format!("{from} names no authorization_servers"));
    }
    Ok(Resource {
        resource,
        authorization_servers,
        scopes: list("scopes_supported"),
    })
}

/// `application/x-www-form-urlencoded` encoding of one value (RFC 6749 §2.3.1 asks it of the
/// id and secret before HTTP Basic).
fn form_encode(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for b in v.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// A token for the MCP endpoint `endpoint`: its metadata (RFC 9728) names the resource and the
/// authorization server, whose metadata names the token endpoint.
pub fn client_credentials(endpoint: &str, creds: &Credentials<'_>) -> Result<String, String> {
    let agent = metadata::agent();
    let res = fetch_resource(&agent, endpoint)?;
    let issuer = &res.authorization_servers[0];
    let meta = metadata::fetch_issuer(&agent, issuer)?;
    let token_url = meta
        .token_endpoint
        .ok_or_else(|| format!("the metadata of {issuer} names no token_endpoint"))?;
    let scope = match creds.scope {
        Some(s) => s.to_owned(),
        None => res.scopes.join(" "),
    };
    let mut form = vec![
        ("grant_type", "client_credentials"),
        ("resource", res.resource.as_str()),
    ];
    if !scope.is_empty() {
        form.push(("scope", scope.as_str()));
    }
    let basic = Base64::encode_string(
        format!("{}:{}", form_encode(creds.id), form_encode(creds.secret)).as_bytes(),
    );
    let mut resp = agent
        .post(&token_url)
        .header("Authorization", &format!("Basic {basic}"))
        .header("Accept", "application/json")
        .send_form(form)
        .map_err(|e| format!("POST {token_url}: {e}"))?;
    let status = resp.status().as_u16();
    let text = resp
        .body_mut()
        .with_config()
        .limit(metadata::MAX_DOCUMENT)
        .read_to_string()
        .map_err(|e| format!("POST {token_url}: {e}"))?;
    let doc: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    if status != 200 {
        let err = doc.get("error").and_then(Value::as_str).unwrap_or("?");
        let why = doc
            .get("error_description")
            .and_then(Value::as_str)
            .unwrap_or("");
        return Err(format!(
            "the token endpoint {token_url} refused the client-credentials grant: HTTP {status} {err} {why}"
        ));
    }
    doc.get("access_token")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("{token_url} answered without an access_token"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn credentials_are_form_encoded_before_basic() {
        assert_eq!(form_encode("redmark-cli"), "redmark-cli");
        assert_eq!(form_encode("a b:c/é"), "a%20b%3Ac%2F%C3%A9");
    }

    #[test]
    fn resource_metadata_needs_a_resource_and_a_server() {
        let r = parse_resource(
            &json!({"resource": "r", "authorization_servers": ["a"], "scopes_supported": ["s"]}),
            "u",
        )
        .unwrap();
        assert_eq!((r.resource.as_str(), r.scopes.len()), ("r", 1));
        assert!(parse_resource(&json!({"resource": "r"}), "u").is_err());
    }
}
