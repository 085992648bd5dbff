//! Validating a JWT access token: the key its `kid` names, an algorithm the issuer announces and
//! that key is for (never `none`, never HMAC), `iss`, `aud`, `exp`/`nbf` with a small leeway,
//! then `iss`+`sub` → the principal a sealed `requestState` is bound to.

use std::collections::HashSet;

use base64ct::{Base64UrlUnpadded, Encoding as _};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, AlgorithmFamily, Validation};
use redmark_core::limits::MAX_PRINCIPAL;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::jwks::{Jwks, Missing};

/// Longest bearer token looked at (Entra ID tokens with many groups run to ~4 KiB).
pub const MAX_TOKEN: usize = 8 * 1024;
/// Prefix of every principal an access token maps to.
pub const PRINCIPAL_PREFIX: &str = "oidc:";

/// Who a valid token names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    /// `oidc:` + base64url(SHA-256(iss NUL sub)): fixed length, the same on every instance.
    pub principal: Vec<u8>,
    /// The scopes granted (`scope`, `scp`, or Entra ID's app `roles`).
    pub scopes: Vec<String>,
}

/// Why a token was refused (said in the log, never to the client beyond "invalid_token").
#[derive(Debug, PartialEq, Eq)]
pub struct Refused(pub String);

/// The fixed rules of one issuer.
pub struct Rules {
    /// `iss`, exactly.
    pub issuer: String,
    /// `aud` must hold one of these (the resource URI, or what `--audience` names).
    pub audiences: Vec<String>,
    /// Algorithms accepted (asymmetric only).
    pub algorithms: Vec<Algorithm>,
    /// Seconds of clock skew allowed on `exp` and `nbf`.
    pub leeway: u64,
}

#[derive(Deserialize)]
struct Claims {
    iss: String,
    sub: String,
    #[serde(default)]
    scope: Option<Value>,
    #[serde(default)]
    scp: Option<Value>,
    #[serde(default)]
    roles: Option<Value>,
}

/// The algorithms to accept: those the issuer announces (`announced`, from its metadata) that
/// are asymmetric; every asymmetric one this build verifies when it announces none.
pub fn algorithms(announced: &[String]) -> Vec<Algorithm> {
    let asymmetric = |a: &Algorithm| a.family() != AlgorithmFamily::Hmac;
    let listed: Vec<Algorithm> = announced
        .iter()
        .filter_map(|a| a.parse::<Algorithm>().ok())
        .filter(asymmetric)
        .collect();
    if listed.is_empty() {
        [
            AlgorithmFamily::Rsa,
            AlgorithmFamily::Ec,
            AlgorithmFamily::Ed,
        ]
        .iter()
        .flat_map(|f| f.algorithms().iter().copied())
        .collect()
    } else {
        listed
    }
}

/// Validates `token` against `rules` with a key from `keys`.
pub async fn validate(token: &str, rules: &Rules, keys: &Jwks) -> Result<Subject, Refused> {
    let no = |why: String| Err(Refused(why));
    if token.len() > MAX_TOKEN {
        return no(format!("token longer than {MAX_TOKEN} bytes"));
    }
    // The header is read unverified only to pick the key and check the algorithm is allowed;
    // `alg: none` (and any name jsonwebtoken does not know) fails right here.
    let header = match jsonwebtoken::decode_header(token) {
        Ok(h) => h,
        Err(e) => return no(format!("unreadable JWT header ({e})")),
    };
    let alg = header.alg;
    if alg.family() == AlgorithmFamily::Hmac || !rules.algorithms.contains(&alg) {
        return no(format!(
            "algorithm {alg:?} is not one of {:?} (asymmetric algorithms the issuer announces)",
            rules.algorithms
        ));
    }
    let key = match keys.key(header.kid.as_deref()).await {
        Ok(k) => k,
        Err(Missing::UnknownKid) => {
            return no(format!(
            "no key {:?} in the issuer's JWKS (fetched again for an unknown kid, {} s after the \
             last fetch ended at the soonest)",
            header.kid,
            super::jwks::MIN_REFRESH.as_secs()
        ))
        }
        Err(Missing::NoKid) => return no("no kid, and the JWKS has several keys".into()),
    };
    if key.family != alg.family() || key.alg.is_some_and(|a| a != alg) {
        return no(format!("algorithm {alg:?} does not fit the key"));
    }
    let mut v = Validation::new(alg);
    v.algorithms = vec![alg];
    v.set_issuer(&[&rules.issuer]);
    v.set_audience(&rules.audiences);
    v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    v.validate_nbf = true;
    v.leeway = rules.leeway;
    let data = match jsonwebtoken::decode::<Claims>(token, &key.decoding, &v) {
        Ok(d) => d,
        Err(e) => return no(explain(e.kind(), token, rules, header.kid.as_deref())),
    };
    let c = data.claims;
    if c.sub.is_empty() {
        return no("empty sub".into());
    }
    let mut scopes = Vec::new();
    for v in [&c.scope, &c.scp, &c.roles].into_iter().flatten() {
        match v {
            Value::String(s) => scopes.extend(s.split_ascii_whitespace().map(str::to_owned)),
            Value::Array(a) => scopes.extend(a.iter().filter_map(Value::as_str).map(str::to_owned)),
            _ => {}
        }
    }
    Ok(Subject {
        principal: principal(&c.iss, &c.sub),
        scopes,
    })
}

/// One line saying why a token failed, for the log: the claim and what was expected (claims
/// are not secrets; the signature is never printed).
fn explain(kind: &ErrorKind, token: &str, rules: &Rules, kid: Option<&str>) -> String {
    let claims: Value = token
        .split('.')
        .nth(1)
        .and_then(|p| Base64UrlUnpadded::decode_vec(p).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    match kind {
        ErrorKind::InvalidAudience => format!(
            "aud {} is not {:?}: the token was issued for another resource (set --resource, or \
             --audience to what the provider puts in aud)",
            claims["aud"], rules.audiences
        ),
        ErrorKind::InvalidIssuer => format!(
            "iss {} is not {:?} (--auth-issuer)",
            claims["iss"], rules.issuer
        ),
        ErrorKind::ExpiredSignature => format!(
            "expired (exp {}, {} s leeway; check the clock)",
            claims["exp"], rules.leeway
        ),
        ErrorKind::ImmatureSignature => format!(
            "not valid yet (nbf {}, {} s leeway; check the clock)",
            claims["nbf"], rules.leeway
        ),
        ErrorKind::InvalidSignature => format!(
            "the signature does not verify with the issuer's key {kid:?} (a token from \
             another issuer or altered)"
        ),
        ErrorKind::MissingRequiredClaim(c) => format!("no {c} claim"),
        other => format!("{other:?}"),
    }
}

/// The principal of subject `sub` at issuer `iss`: a fixed-length digest of both, so two
/// issuers' equal `sub`s differ and every instance derives the same bytes.
pub fn principal(iss: &str, sub: &str) -> Vec<u8> {
    let mut h = Sha256::new();
    h.update(iss.as_bytes());
    h.update([0]);
    h.update(sub.as_bytes());
    let p = format!(
        "{PRINCIPAL_PREFIX}{}",
        Base64UrlUnpadded::encode_string(&h.finalize())
    );
    debug_assert!(p.len() <= MAX_PRINCIPAL);
    p.into_bytes()
}

/// Whether `scopes` hold every scope of `needed`.
pub fn has_scopes(scopes: &[String], needed: &[String]) -> bool {
    let have: HashSet<&str> = scopes.iter().map(String::as_str).collect();
    needed.iter().all(|n| have.contains(n.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_are_fixed_length_and_keep_issuers_apart() {
        let a = principal("https://a.example", "alice");
        assert_eq!(a.len(), PRINCIPAL_PREFIX.len() + 43);
        assert!(a.len() <= MAX_PRINCIPAL);
        assert_ne!(a, principal("https://b.example", "alice"));
        assert_ne!(a, principal("https://a.example", "bob"));
        // The separator keeps "ab"+"c" apart from "a"+"bc".
        assert_ne!(principal("ab", "c"), principal("a", "bc"));
    }

    #[test]
    fn hmac_and_unknown_algorithms_are_never_accepted() {
        let algs = algorithms(&["HS256".into(), "RS256".into(), "none".into()]);
        assert_eq!(algs, [Algorithm::RS256]);
        let all = algorithms(&[]);
        assert!(all.contains(&Algorithm::ES256) && all.contains(&Algorithm::EdDSA));
        assert!(all.iter().all(|a| a.family() != AlgorithmFamily::Hmac));
    }

    #[test]
    fn scopes_are_checked_whole() {
        let s = vec!["rooms:read".to_string(), "rooms:write".to_string()];
        assert!(has_scopes(&s, &["rooms:write".into()]));
        assert!(!has_scopes(&s[..1], &["rooms:write".into()]));
        assert!(has_scopes(&[], &[]));
    }
}
