//! Streamable HTTP as an OAuth 2.1 resource server (MCP 2026-07-28 authorization): the
//! issuer's metadata and keys (`metadata.rs`, `jwks.rs`), JWT access-token validation
//! (`validate.rs`), and what is said to clients (`challenge.rs`: RFC 9728 metadata, 401 and
//! 403 challenges); and static bearer tokens (`tokens.rs`, `--tokens FILE`). The client side (a
//! token by the client-credentials grant) is `client/grant.rs`.
//!
//! `redmark serve --http ADDR --auth-issuer URL --resource URL` turns it on; a token's `iss` +
//! `sub` become the principal (`validate::principal`). stdio and TCP never use it.

pub mod challenge;
pub mod jwks;
pub mod metadata;
pub mod role;
pub mod tokens;
pub mod validate;

use axum::response::Response;

use jwks::Jwks;
use validate::{Refused, Rules, Subject};

/// Default scope the booking tools need.
pub const DEFAULT_WRITE_SCOPE: &str = "rooms:write";
/// Default leeway on `exp` and `nbf`, seconds.
pub const DEFAULT_LEEWAY: u64 = 30;
/// Largest leeway allowed, seconds.
pub const MAX_LEEWAY: u64 = 300;

/// The OAuth options of `redmark serve`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct AuthArgs {
    /// Accept OAuth 2.1 JWT access tokens from this issuer on --http (its metadata and JWKS
    /// are fetched at start); needs --resource. See docs/oauth.md
    #[arg(long, value_name = "URL", requires = "resource")]
    pub auth_issuer: Option<String>,
    /// This server's resource identifier (RFC 8707/9728): the public URL of its MCP endpoint
    /// as clients reach it (behind the TLS proxy); tokens must be issued for it
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    pub resource: Option<String>,
    /// Accept tokens whose `aud` holds this value instead of --resource (repeatable), for
    /// providers that put a client id or an api:// URI in `aud` (Keycloak, Entra ID)
    #[arg(long, value_name = "AUD", requires = "auth_issuer")]
    pub audience: Vec<String>,
    /// The scope book_room and cancel_booking need (list_rooms needs only a valid token)
    #[arg(long, value_name = "SCOPE", default_value = DEFAULT_WRITE_SCOPE)]
    pub write_scope: String,
    /// The scope that makes a token's subject an operator of the floor: it may cancel anyone's
    /// booking (with the write scope too), reads every title and booking_trail
    #[arg(long, value_name = "SCOPE", default_value = role::DEFAULT_OPERATOR_SCOPE)]
    pub operator_scope: String,
    /// Seconds of clock skew allowed on a token's exp and nbf
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_LEEWAY,
          value_parser = clap::value_parser!(u64).range(0..=MAX_LEEWAY))]
    pub auth_leeway: u64,
    /// Accept an http:// --auth-issuer (or jwks_uri) that is not on loopback. Its signing keys
    /// then travel unencrypted and anyone on the way can forge tokens: only for a network you
    /// trust (RFC 8414 requires https)
    #[arg(long, requires = "auth_issuer")]
    pub allow_insecure_issuer: bool,
    /// Let the booking page at / sign people in through the issuer (authorization code with
    /// PKCE) as this public client, registered at the provider with the redirect URI
    /// http(s)://HOST:PORT/ of the page; the issuer's origin is then allowed in the page's
    /// connect-src. Without it the page takes a pasted token only
    #[arg(long, value_name = "ID", requires = "auth_issuer")]
    pub page_client_id: Option<String>,
}

/// The one-line refusal of `url` (the issuer, or its `what`) sent in the clear off loopback.
fn in_the_clear(url: &str, what: &str) -> String {
    format!(
        "--auth-issuer {url}: {what} is not https:// and not on loopback, so the signing keys would \
         travel unencrypted and anyone on the way could forge tokens (RFC 8414 requires https): \
         use the provider's https:// URL, or pass --allow-insecure-issuer if the network to it \
         is trusted"
    )
}

/// A configured resource server: the issuer's rules and keys, and what it publishes.
pub struct OAuth {
    rules: Rules,
    keys: Jwks,
    write_scope: String,
    operator_scope: String,
    /// The absolute URL of the metadata document (the `resource_metadata` of challenges).
    metadata_url: String,
    /// Paths the metadata is served at.
    metadata_paths: Vec<String>,
    document: Vec<u8>,
    /// What the booking page signs in with (`--page-client-id`).
    pub page: Option<crate::web::SignIn>,
    /// `--resource`'s `scheme://authority`: the site as browsers name it behind a TLS proxy.
    origin: String,
}

/// Who a request is, as the resource server sees it.
pub enum Verdict {
    /// A valid token: its subject.
    Subject(Subject),
    /// Refused: the 401 to send.
    Refused(Response),
}

impl OAuth {
    /// Sets up from `args` (None when --auth-issuer is absent): fetches the issuer's metadata
    /// and JWKS. Blocking: call it before the runtime serves anything, or off it. Every error
    /// is one line naming the flag to fix.
    pub fn setup(args: &AuthArgs) -> Result<Option<OAuth>, String> {
        let (Some(issuer), Some(resource)) = (&args.auth_issuer, &args.resource) else {
            return Ok(None);
        };
        let (origin, path) =
            metadata::split_url(resource).map_err(|e| format!("--resource {e}"))?;
        let origin = origin.to_owned();
        metadata::split_url(issuer).map_err(|e| format!("--auth-issuer {e}"))?;
        let insecure_ok = args.allow_insecure_issuer;
        if !insecure_ok && !metadata::is_tls_or_loopback(issuer) {
            return Err(in_the_clear(issuer, "the issuer"));
        }
        if args.write_scope.is_empty() || args.write_scope.contains(char::is_whitespace) {
            return Err("--write-scope: one scope, no spaces".into());
        }
        if args.operator_scope.is_empty() || args.operator_scope.contains(char::is_whitespace) {
            return Err("--operator-scope: one scope, no spaces".into());
        }
        let agent = metadata::agent();
        let meta = metadata::fetch_issuer(&agent, issuer)
            .map_err(|e| format!("--auth-issuer {issuer}: {e}"))?;
        if !insecure_ok && !metadata::is_tls_or_loopback(&meta.jwks_uri) {
            return Err(in_the_clear(
                issuer,
                &format!("its metadata's jwks_uri {}", meta.jwks_uri),
            ));
        }
        if insecure_ok
            && !(metadata::is_tls_or_loopback(issuer)
                && metadata::is_tls_or_loopback(&meta.jwks_uri))
        {
            tracing::warn!(
                "auth: issuer {issuer} (keys {}) in the clear off loopback (--allow-insecure-issuer)",
                meta.jwks_uri
            );
        }
        let keys =
            Jwks::load(&meta.jwks_uri).map_err(|e| format!("--auth-issuer {issuer}: {e}"))?;
        let algorithms = validate::algorithms(&meta.signing_algs);
        let audiences = if args.audience.is_empty() {
            vec![resource.clone()]
        } else {
            args.audience.clone()
        };
        tracing::info!(
            "auth: issuer {issuer} (metadata {}), tokens for {}, algorithms {algorithms:?}",
            meta.from,
            audiences.join(" or ")
        );
        let path = path.trim_end_matches('/');
        let mut metadata_paths = vec![challenge::WELL_KNOWN.to_owned()];
        for p in [path, "/mcp"] {
            let suffixed = format!("{}{p}", challenge::WELL_KNOWN);
            if !p.is_empty() && !metadata_paths.contains(&suffixed) {
                metadata_paths.push(suffixed);
            }
        }
        let metadata_url = metadata::well_known_inserted(resource, "oauth-protected-resource")?;
        let scopes = vec![args.write_scope.clone()];
        let page = match &args.page_client_id {
            Some(id) => {
                let mut origins = vec![metadata::split_url(issuer)?.0];
                if let Some(token) = &meta.token_endpoint {
                    origins.push(
                        metadata::split_url(token)
                            .map_err(|e| format!("--auth-issuer {issuer}: its token_endpoint {e}"))?
                            .0,
                    );
                }
                let signin = crate::web::SignIn::new(id, &origins)
                    .map_err(|e| format!("--page-client-id: {e}"))?;
                Some(signin)
            }
            None => None,
        };
        Ok(Some(OAuth {
            rules: Rules {
                issuer: meta.issuer,
                audiences,
                algorithms,
                leeway: args.auth_leeway,
            },
            keys,
            write_scope: args.write_scope.clone(),
            operator_scope: args.operator_scope.clone(),
            metadata_url,
            metadata_paths,
            document: challenge::resource_document(resource, issuer, &scopes),
            page,
            origin,
        }))
    }

    /// The public origin (`--resource`'s `scheme://authority`): a browser's `Origin` there is
    /// this site's, and feed URLs are handed out under it.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The metadata document, when `path` is one of its well-known paths.
    pub fn well_known(&self, path: &str) -> Option<Response> {
        self.metadata_paths
            .iter()
            .any(|p| p == path)
            .then(|| challenge::metadata_response(&self.document))
    }

    /// Validates the bearer token `token` (None: no token was sent).
    pub async fn authenticate(&self, token: Option<&str>) -> Verdict {
        let Some(token) = token else {
            return Verdict::Refused(challenge::unauthorized(&self.metadata_url, false));
        };
        match validate::validate(token, &self.rules, &self.keys).await {
            Ok(s) => Verdict::Subject(s),
            Err(Refused(why)) => {
                tracing::info!("http: 401 (access token refused: {why})");
                Verdict::Refused(challenge::unauthorized(&self.metadata_url, true))
            }
        }
    }

    /// Whether a token with `scopes` is an operator's (`--operator-scope`).
    pub fn is_operator(&self, scopes: &[String]) -> bool {
        validate::has_scopes(scopes, std::slice::from_ref(&self.operator_scope))
    }

    /// The 403 to send when `body` calls a tool whose scope `scopes` lack.
    pub fn check_scope(&self, scopes: &[String], body: &[u8]) -> Option<Response> {
        let need = std::slice::from_ref(&self.write_scope);
        if validate::has_scopes(scopes, need) {
            return None;
        }
        let tool = match challenge::write_tool(body) {
            Ok(None) => return None,
            Ok(Some(tool)) => tool,
            Err(()) => "this request".to_owned(),
        };
        tracing::info!("http: 403 ({tool} needs scope {})", self.write_scope);
        Some(challenge::insufficient_scope(
            &self.metadata_url,
            &self.write_scope,
            &tool,
        ))
    }
}
