//! Fetching OAuth metadata documents (blocking, `ureq`): an authorization server's (RFC 8414,
//! else OpenID discovery) and its JWKS; `client/grant.rs` fetches a resource's protected-resource
//! metadata (RFC 9728) with the same helpers. The server calls these off its runtime
//! (`spawn_blocking`); `redmark call` calls them directly.

use std::time::Duration;

use serde_json::Value;

/// Largest metadata or JWKS document read (a JWKS of a few dozen RSA keys is ~20 KiB).
pub const MAX_DOCUMENT: u64 = 256 * 1024;
/// Time for one metadata, JWKS or token request, connect to last byte.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// What redmark needs from an authorization server's metadata.
#[derive(Debug, Clone)]
pub struct Issuer {
    /// `issuer`, identical to the URL it was fetched for (checked).
    pub issuer: String,
    /// `jwks_uri`.
    pub jwks_uri: String,
    /// `token_endpoint`, if any (for the client-credentials grant).
    pub token_endpoint: Option<String>,
    /// `id_token_signing_alg_values_supported` (OpenID), the algorithms the issuer announces.
    pub signing_algs: Vec<String>,
    /// Where the document was found.
    pub from: String,
}

/// An HTTP agent for metadata: status codes as values, [`FETCH_TIMEOUT`], no redirects.
pub fn agent() -> ureq::Agent {
    agent_with_timeout(FETCH_TIMEOUT)
}

/// [`agent`] with `timeout` for each request, connect to last byte.
pub fn agent_with_timeout(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .max_redirects(0)
        .tls_config(crate::platform::tls::config())
        .build()
        .into()
}

/// GETs `url` and parses its JSON body (status 200 only).
pub fn get_json(agent: &ureq::Agent, url: &str) -> Result<Value, String> {
    let mut resp = agent
        .get(url)
        .header("Accept", "application/json")
        .call()
        .map_err(|e| format!("GET {url}: {e}"))?;
    let status = resp.status().as_u16();
    if status != 200 {
        return Err(format!("GET {url}: HTTP {status}"));
    }
    let text = resp
        .body_mut()
        .with_config()
        .limit(MAX_DOCUMENT)
        .read_to_string()
        .map_err(|e| format!("GET {url}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("GET {url}: not JSON ({e})"))
}

/// `base` with `/.well-known/<name>` inserted between its authority and its path (RFC 8414
/// §3.1, RFC 9728 §3.1); a trailing `/` of the path is dropped first.
pub fn well_known_inserted(base: &str, name: &str) -> Result<String, String> {
    let (origin, path) = split_url(base)?;
    let path = path.trim_end_matches('/');
    Ok(format!("{origin}/.well-known/{name}{path}"))
}

/// `base` with `/.well-known/<name>` appended to its path (OpenID Connect Discovery §4).
pub fn well_known_appended(base: &str, name: &str) -> String {
    format!("{}/.well-known/{name}", base.trim_end_matches('/'))
}

/// (`scheme://authority`, path) of an absolute http(s) URL without query or fragment.
pub fn split_url(url: &str) -> Result<(&str, &str), String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(|| format!("{url:?} is not an http:// or https:// URL"))?;
    if url.contains(['?', '#']) {
        return Err(format!("{url:?} has a query or fragment"));
    }
    let scheme_len = url.len() - rest.len();
    let at = rest.find('/').unwrap_or(rest.len());
    if at == 0 {
        return Err(format!("{url:?} has no host"));
    }
    Ok(url.split_at(scheme_len + at))
}

/// Whether `url` is `https://`, or `http://` to this machine (`localhost`, 127.0.0.0/8, `::1`).
/// An issuer's metadata and keys decide whose tokens are accepted: in the clear, anyone on the
/// way could substitute their own keys (RFC 8414 §3 requires TLS for them).
pub fn is_tls_or_loopback(url: &str) -> bool {
    if url.starts_with("https://") {
        return true;
    }
    if !url.starts_with("http://") {
        return false;
    }
    let Ok(uri) = url.parse::<axum::http::Uri>() else {
        return false;
    };
    let host = uri.host().unwrap_or_default();
    let ip = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || ip
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.to_canonical().is_loopback())
}

/// The authorization server metadata of `issuer`: RFC 8414's well-known URI first, then OpenID
/// Connect discovery. The document's `issuer` must equal `issuer` exactly (RFC 8414 §3.3).
pub fn fetch_issuer(agent: &ureq::Agent, issuer: &str) -> Result<Issuer, String> {
    let rfc8414 = well_known_inserted(issuer, "oauth-authorization-server")?;
    let openid = well_known_appended(issuer, "openid-configuration");
    let mut tried = Vec::new();
    for url in [rfc8414, openid] {
        match get_json(agent, &url) {
            Ok(doc) => return parse_issuer(&doc, issuer, &url),
            Err(e) => tried.push(e),
        }
    }
    Err(format!(
        "no authorization server metadata for issuer {issuer} ({})",
        tried.join("; ")
    ))
}

fn parse_issuer(doc: &Value, issuer: &str, from: &str) -> Result<Issuer, String> {
    let text = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_owned);
    let named = text("issuer").unwrap_or_default();
    if named != issuer {
        return Err(format!(
            "{from} names issuer {named:?}, not {issuer:?}: give --auth-issuer exactly as the \
             provider writes it (trailing slash included)"
        ));
    }
    let jwks_uri = text("jwks_uri").ok_or_else(|| format!("{from} has no jwks_uri"))?;
    let signing_algs = strings(doc, "id_token_signing_alg_values_supported");
    Ok(Issuer {
        issuer: named,
        jwks_uri,
        token_endpoint: text("token_endpoint"),
        signing_algs,
        from: from.to_owned(),
    })
}

/// The strings of the array member `key` of `doc` (none when it is missing or not an array).
pub fn strings(doc: &Value, key: &str) -> Vec<String> {
    doc.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn well_known_uris_are_formed_as_the_rfcs_say() {
        assert_eq!(
            well_known_inserted("https://as.example/realms/x", "oauth-authorization-server")
                .unwrap(),
            "https://as.example/.well-known/oauth-authorization-server/realms/x"
        );
        assert_eq!(
            well_known_inserted("http://127.0.0.1:8080/mcp", "oauth-protected-resource").unwrap(),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            well_known_inserted("https://as.example/", "oauth-authorization-server").unwrap(),
            "https://as.example/.well-known/oauth-authorization-server"
        );
        assert_eq!(
            well_known_appended("https://as.example/realms/x/", "openid-configuration"),
            "https://as.example/realms/x/.well-known/openid-configuration"
        );
        assert!(split_url("ftp://x/").is_err());
        assert!(split_url("https:///x").is_err());
        assert!(split_url("https://x/a?b").is_err());
    }

    #[test]
    fn metadata_travels_over_tls_unless_it_stays_on_this_machine() {
        for ok in [
            "https://idp.example/realms/x",
            "http://127.0.0.1:8080",
            "http://127.1.2.3/jwks",
            "http://localhost:9/x",
            "http://LOCALHOST",
            "http://[::1]:8080/x",
            "http://[::ffff:127.0.0.1]/x",
        ] {
            assert!(is_tls_or_loopback(ok), "{ok}");
        }
        for refused in [
            "http://idp.example:8080",
            "http://10.0.0.5/jwks",
            "http://0.0.0.0:8080",
            "http://[::]/x",
            "http://localhost.idp.example/x",
            "http://127.0.0.1.idp.example/x",
            "http://user@idp.example/x",
            "ftp://127.0.0.1/x",
            "not a url",
        ] {
            assert!(!is_tls_or_loopback(refused), "{refused}");
        }
    }

    #[test]
    fn issuer_metadata_must_name_the_issuer_exactly() {
        let doc = json!({"issuer": "https://as.example/", "jwks_uri": "https://as.example/jwks",
            "id_token_signing_alg_values_supported": ["RS256", "HS256"]});
        let i = parse_issuer(&doc, "https://as.example/", "u").unwrap();
        assert_eq!(i.signing_algs, ["RS256", "HS256"]);
        let e = parse_issuer(&doc, "https://as.example", "u").unwrap_err();
        assert!(e.contains("trailing slash"), "{e}");
        assert!(parse_issuer(&json!({"issuer": "a"}), "a", "u").is_err());
    }
}
