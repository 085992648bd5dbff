//! The issuer's signing keys (its JWKS), cached: looked up by `kid`, fetched again when a token
//! names a `kid` not in the cache (at most once per [`MIN_REFRESH`]) or the cache is older than
//! [`MAX_AGE`]. A failed fetch keeps the keys already held, so an issuer that is down does not
//! stop tokens its cached keys verify. Fetches run on tokio's blocking pool, never on a runtime
//! thread.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};
use serde_json::Value;

use super::metadata;

/// Shortest time between two fetches of the JWKS (an unknown `kid` cannot make the server
/// hammer the issuer).
pub const MIN_REFRESH: Duration = Duration::from_secs(5);
/// Keys older than this are fetched again on the next token (a key the issuer withdrew stops
/// verifying within this time, or at the next unknown `kid`).
pub const MAX_AGE: Duration = Duration::from_secs(3600);
/// Most keys kept from one JWKS.
pub const MAX_KEYS: usize = 64;

/// One verification key.
pub struct Key {
    /// The key.
    pub decoding: DecodingKey,
    /// Its family (never HMAC: `oct` keys are not kept).
    pub family: AlgorithmFamily,
    /// The JWK's `alg`, when it names one: then the only algorithm this key verifies.
    pub alg: Option<Algorithm>,
}

type KeyMap = HashMap<String, Arc<Key>>;

/// The cache.
pub struct Jwks {
    uri: String,
    agent: ureq::Agent,
    /// The keys and when they were fetched.
    keys: RwLock<(Arc<KeyMap>, Instant)>,
    /// When a fetch was last tried (held while fetching).
    tried: tokio::sync::Mutex<Option<Instant>>,
}

/// Why a key was not found.
#[derive(Debug, PartialEq, Eq)]
pub enum Missing {
    /// No key with this `kid` (after a refresh, or a refresh was not allowed yet).
    UnknownKid,
    /// The token names no `kid` and the JWKS holds more than one key.
    NoKid,
}

impl Jwks {
    /// A cache of the JWKS at `uri`, fetched once now (blocking: call at start, off the
    /// runtime, or from `spawn_blocking`).
    pub fn load(uri: &str) -> Result<Jwks, String> {
        let agent = metadata::agent();
        let keys = fetch(&agent, uri)?;
        if keys.is_empty() {
            return Err(format!(
                "the JWKS at {uri} holds no usable signing key (RSA, EC or OKP)"
            ));
        }
        let now = Instant::now();
        Ok(Jwks {
            uri: uri.to_owned(),
            agent,
            keys: RwLock::new((Arc::new(keys), now)),
            tried: tokio::sync::Mutex::new(Some(now)),
        })
    }

    fn snapshot(&self) -> (Arc<KeyMap>, Instant) {
        let k = match self.keys.read() {
            Ok(k) => k,
            Err(poisoned) => poisoned.into_inner(),
        };
        (Arc::clone(&k.0), k.1)
    }

    fn find(keys: &KeyMap, kid: Option<&str>) -> Result<Arc<Key>, Missing> {
        match kid {
            Some(kid) => keys.get(kid).cloned().ok_or(Missing::UnknownKid),
            None if keys.len() == 1 => keys.values().next().cloned().ok_or(Missing::NoKid),
            None => Err(Missing::NoKid),
        }
    }

    /// The key `kid` names, fetching the JWKS again if it is unknown or the cache is older
    /// than [`MAX_AGE`] (at most one fetch per [`MIN_REFRESH`]; a failed fetch keeps the keys).
    pub async fn key(&self, kid: Option<&str>) -> Result<Arc<Key>, Missing> {
        let (keys, at) = self.snapshot();
        let found = Self::find(&keys, kid);
        if found.is_ok() && at.elapsed() <= MAX_AGE {
            return found;
        }
        // One fetch at a time; whoever waited looks again at what that fetch brought.
        let mut tried = self.tried.lock().await;
        let (keys, at) = self.snapshot();
        let found = Self::find(&keys, kid);
        let stale = at.elapsed() > MAX_AGE;
        if found.is_ok() && !stale || tried.is_some_and(|t| t.elapsed() < MIN_REFRESH) {
            return found;
        }
        *tried = Some(Instant::now());
        let (agent, uri) = (self.agent.clone(), self.uri.clone());
        match tokio::task::spawn_blocking(move || fetch(&agent, &uri)).await {
            Ok(Ok(keys)) if !keys.is_empty() => {
                tracing::info!(
                    "auth: fetched {} signing key(s) from {}",
                    keys.len(),
                    self.uri
                );
                if let Ok(mut k) = self.keys.write() {
                    *k = (Arc::new(keys), Instant::now());
                }
            }
            Ok(Ok(_)) => tracing::warn!(
                "auth: the JWKS at {} holds no usable key now; keeping the cached ones",
                self.uri
            ),
            Ok(Err(e)) => tracing::warn!("auth: {e}; keeping the cached keys"),
            Err(e) => tracing::warn!("auth: the JWKS fetch stopped: {e}"),
        }
        Self::find(&self.snapshot().0, kid)
    }
}

/// The signing keys of the JWKS at `uri` (keys that are not for signatures, symmetric, or
/// unreadable are skipped).
fn fetch(agent: &ureq::Agent, uri: &str) -> Result<KeyMap, String> {
    let doc = metadata::get_json(agent, uri)?;
    let list = doc
        .get("keys")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{uri} is not a JWKS (no \"keys\" array)"))?;
    Ok(keys_of(list))
}

fn keys_of(list: &[Value]) -> KeyMap {
    let mut keys = KeyMap::new();
    for (i, v) in list.iter().enumerate() {
        if keys.len() == MAX_KEYS {
            tracing::warn!("auth: JWKS has more than {MAX_KEYS} keys; the rest are ignored");
            break;
        }
        // One key at a time: a key this build cannot read (another kty, an encryption
        // algorithm) does not spoil the others.
        let Ok(jwk) = serde_json::from_value::<Jwk>(v.clone()) else {
            continue;
        };
        if jwk
            .common
            .public_key_use
            .as_ref()
            .is_some_and(|u| *u != PublicKeyUse::Signature)
        {
            continue;
        }
        let Ok(decoding) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        let family = decoding.family();
        if family == AlgorithmFamily::Hmac {
            continue;
        }
        let alg = match jwk.common.key_algorithm {
            None => None,
            Some(a) => match a.to_string().parse::<Algorithm>() {
                Ok(alg) if alg.family() == family => Some(alg),
                _ => continue,
            },
        };
        let kid = jwk.common.key_id.clone().unwrap_or_else(|| format!("#{i}"));
        keys.insert(
            kid,
            Arc::new(Key {
                decoding,
                family,
                alg,
            }),
        );
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rsa(kid: &str) -> Value {
        // A 2048-bit modulus is not needed to parse: any base64url n and e are a key.
        json!({"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
               "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw",
               "e": "AQAB"})
    }

    #[test]
    fn only_signing_keys_that_are_not_symmetric_are_kept() {
        let keys = keys_of(&[
            rsa("a"),
            json!({"kty": "oct", "kid": "h", "k": "c2VjcmV0"}),
            json!({"kty": "RSA", "kid": "enc", "use": "enc", "n": "AQAB", "e": "AQAB"}),
            json!({"kty": "weird", "kid": "w"}),
            json!({"kty": "RSA", "kid": "es", "alg": "ES256", "n": "AQAB", "e": "AQAB"}),
        ]);
        assert_eq!(keys.len(), 1, "{:?}", keys.keys().collect::<Vec<_>>());
        assert_eq!(keys["a"].alg, Some(Algorithm::RS256));
        assert_eq!(keys["a"].family, AlgorithmFamily::Rsa);
    }

    #[test]
    fn a_kid_selects_and_no_kid_needs_a_single_key() {
        let one = keys_of(&[rsa("a")]);
        assert!(Jwks::find(&one, Some("a")).is_ok());
        assert!(Jwks::find(&one, None).is_ok());
        assert_eq!(Jwks::find(&one, Some("b")).err(), Some(Missing::UnknownKid));
        let two = keys_of(&[rsa("a"), rsa("b")]);
        assert_eq!(Jwks::find(&two, None).err(), Some(Missing::NoKid));
    }
}
