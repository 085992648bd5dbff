//! The booking page at `/` of `redmark serve --http`: static files compiled into the binary,
//! served with their content type, an ETag, and a strict Content-Security-Policy.
//!
//! The page is an MCP 2026-07-28 client of the same server's `/mcp` (same origin, so the
//! Host/Origin guard and the absence of CORS headers stay as they are); nothing here reads or
//! answers protocol messages. Its files live in `shell/web/` and are plain HTML, CSS and
//! JavaScript modules: no build step, nothing fetched from elsewhere at run time.

use std::sync::OnceLock;

use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// What every page response may load: its own scripts, styles and icon, and `fetch` to its own
/// origin (`/mcp`, `/.well-known/…`); no inline script or style, no frames, no form posts.
/// With `--page-client-id`, `connect-src` names the identity provider's origins too
/// ([`SignIn`]); the sign-in itself is a top-level navigation, which the policy does not govern.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// One file of the page.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

/// The page's files, by the path they are served at.
const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        bytes: include_bytes!("../web/index.html"),
    },
    Asset {
        path: "/web/style.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../web/style.css"),
    },
    Asset {
        path: "/web/app.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/app.js"),
    },
    Asset {
        path: "/web/mcp.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/mcp.js"),
    },
    Asset {
        path: "/web/form.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/form.js"),
    },
    Asset {
        path: "/web/floor.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/floor.js"),
    },
    Asset {
        path: "/web/signin.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/signin.js"),
    },
    Asset {
        path: "/web/time.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/time.js"),
    },
    Asset {
        path: "/web/icon.svg",
        content_type: "image/svg+xml",
        bytes: include_bytes!("../web/icon.svg"),
    },
];

/// The most the page's files may add to the binary (issue 32); the build holds them to it.
pub const MAX_ASSET_BYTES: usize = 150 * 1024;

/// The page's files, in bytes.
const fn asset_bytes() -> usize {
    let mut total = 0;
    let mut i = 0;
    while i < ASSETS.len() {
        total += ASSETS[i].bytes.len();
        i += 1;
    }
    total
}

const _: () = assert!(
    asset_bytes() <= MAX_ASSET_BYTES,
    "the page's files are over MAX_ASSET_BYTES"
);

/// Where the page reads the client id it signs in as (only with `--page-client-id`).
pub const SIGNIN_PATH: &str = "/web/signin.json";

/// What the page signs people in with (`redmark serve --page-client-id`): its public client id
/// at the issuer, and the policy that lets it fetch the issuer's metadata and token endpoint.
pub struct SignIn {
    policy: HeaderValue,
    config: Vec<u8>,
}

impl SignIn {
    /// The sign-in of the public client `client_id`, allowed to fetch from `origins`
    /// (`scheme://host[:port]` each: the issuer's, its token endpoint's).
    pub fn new(client_id: &str, origins: &[&str]) -> Result<SignIn, String> {
        if client_id.is_empty() || client_id.chars().any(char::is_control) {
            return Err(format!("{client_id:?} is not a client id"));
        }
        let mut sources = vec!["'self'"];
        for o in origins {
            // A source expression: no spaces, quotes or `;` that would change the policy.
            let host_chars = |c: char| c.is_ascii_alphanumeric() || ".-:[]".contains(c);
            let rest = o
                .strip_prefix("https://")
                .or_else(|| o.strip_prefix("http://"));
            if !rest.is_some_and(|r| !r.is_empty() && r.chars().all(host_chars)) {
                return Err(format!(
                    "the provider's origin {o:?} cannot go in the page's policy"
                ));
            }
            if !sources.contains(o) {
                sources.push(o);
            }
        }
        let policy = CONTENT_SECURITY_POLICY.replace(
            "connect-src 'self'",
            &format!("connect-src {}", sources.join(" ")),
        );
        Ok(SignIn {
            policy: HeaderValue::from_str(&policy).map_err(|e| e.to_string())?,
            config: serde_json::json!({ "client_id": client_id })
                .to_string()
                .into_bytes(),
        })
    }
}

/// The answer for a request to the page (`GET` or `HEAD` of `/`, `/index.html` or a
/// `/web/…` file, and [`SIGNIN_PATH`] with `signin`), or `None` when the request is not for
/// the page.
pub fn page(
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    signin: Option<&SignIn>,
) -> Option<Response> {
    let path = if path == "/index.html" { "/" } else { path };
    if let Some(s) = signin.filter(|_| path == SIGNIN_PATH && method == Method::GET) {
        let mut r = (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            s.config.clone(),
        )
            .into_response();
        r.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        return Some(r);
    }
    let (i, asset) = ASSETS.iter().enumerate().find(|(_, a)| a.path == path)?;
    if method != Method::GET && method != Method::HEAD {
        let mut r = (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "Method not allowed: the page is read with GET\n",
        )
            .into_response();
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Some(r);
    }
    let etag = &etags()[i];
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut r = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        // For HEAD, hyper sends the head (with the length) and leaves the body out.
        (
            StatusCode::OK,
            [(header::CONTENT_TYPE, asset.content_type)],
            asset.bytes,
        )
            .into_response()
    };
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    // Always revalidated: a new binary's page is never mixed with an old one's scripts.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    let policy = match signin {
        Some(s) => s.policy.clone(),
        None => HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    };
    h.insert(header::CONTENT_SECURITY_POLICY, policy);
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    Some(r)
}

/// Each asset's strong ETag (the first 16 bytes of its SHA-256, in hex), in [`ASSETS`] order.
fn etags() -> &'static [String] {
    static ETAGS: OnceLock<Vec<String>> = OnceLock::new();
    ETAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| format!("\"{}\"", hex::encode(&Sha256::digest(a.bytes)[..16])))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str, headers: &HeaderMap) -> Option<Response> {
        page(&Method::GET, path, headers, None)
    }

    #[test]
    fn every_file_is_loaded_by_another() {
        let texts: Vec<&str> = ASSETS
            .iter()
            .map(|a| std::str::from_utf8(a.bytes).unwrap())
            .collect();
        for a in &ASSETS[1..] {
            let file = a.path.rsplit('/').next().unwrap();
            assert!(
                texts
                    .iter()
                    .any(|t| t.contains(a.path) || t.contains(&format!("./{file}"))),
                "{} is served but nothing loads it",
                a.path
            );
        }
        // The strict policy forbids inline script and style: the HTML has none.
        assert!(!texts[0].contains("<script>") && !texts[0].contains("style="));
    }

    #[test]
    fn page_headers_and_revalidation() {
        let r = get("/", &HeaderMap::new()).unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        let h = r.headers();
        assert_eq!(h[header::CONTENT_TYPE], "text/html; charset=utf-8");
        assert_eq!(h[header::CONTENT_SECURITY_POLICY], CONTENT_SECURITY_POLICY);
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(h[header::CACHE_CONTROL], "no-cache");
        let etag = h[header::ETAG].clone();
        let mut again = HeaderMap::new();
        again.insert(header::IF_NONE_MATCH, etag);
        let r = get("/", &again).unwrap();
        assert_eq!(r.status(), StatusCode::NOT_MODIFIED);
        let js = get("/web/app.js", &HeaderMap::new()).unwrap();
        assert_eq!(
            js.headers()[header::CONTENT_TYPE],
            "text/javascript; charset=utf-8"
        );
        assert_ne!(js.headers()[header::ETAG], r.headers()[header::ETAG]);
    }

    #[test]
    fn only_the_page_is_answered() {
        assert!(get("/mcp", &HeaderMap::new()).is_none());
        assert!(get("/web/", &HeaderMap::new()).is_none());
        assert!(get("/web/../Cargo.toml", &HeaderMap::new()).is_none());
        assert!(get("/.well-known/oauth-protected-resource", &HeaderMap::new()).is_none());
        let post = page(&Method::POST, "/", &HeaderMap::new(), None).unwrap();
        assert_eq!(post.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert!(get("/index.html", &HeaderMap::new()).is_some());
    }

    #[test]
    fn sign_in_adds_the_providers_origins_to_connect_src_only() {
        assert!(get(SIGNIN_PATH, &HeaderMap::new()).is_none());
        let s = SignIn::new(
            "redmark-page",
            &["http://127.0.0.1:9400", "https://idp.example:8443"],
        )
        .unwrap();
        let r = page(&Method::GET, "/", &HeaderMap::new(), Some(&s)).unwrap();
        let policy = r.headers()[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap();
        assert!(
            policy.contains("; connect-src 'self' http://127.0.0.1:9400 https://idp.example:8443;"),
            "{policy}"
        );
        assert_eq!(
            policy.replace(" http://127.0.0.1:9400 https://idp.example:8443", ""),
            CONTENT_SECURITY_POLICY
        );
        let r = page(&Method::GET, SIGNIN_PATH, &HeaderMap::new(), Some(&s)).unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        for bad in ["http://x; script-src *", "http://", "data:", "http://a b"] {
            assert!(SignIn::new("page", &[bad]).is_err(), "{bad}");
        }
        assert!(SignIn::new("", &[]).is_err());
    }
}
