//! The issuer's signing keys (its JWKS), cached: looked up by `kid`, fetched again when a token
//! names a `kid` not in the cache (one fetch at a time, which every such token waits for, the
//! next [`MIN_REFRESH`] after it ended) or, in the background, when the cache is older than
//! [`MAX_AGE`]. A failed fetch keeps the keys already held, so an issuer that is down does not
//! stop (or slow) tokens its cached keys verify. Fetches run on tokio's blocking pool, never on
//! a runtime thread.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};
use serde_json::Value;
use tokio::sync::watch;

use super::metadata;

/// Shortest time from the end of one fetch of the JWKS to the start of the next (tokens with
/// made-up `kid`s cannot make the server hammer the issuer, nor queue fetches one after another).
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

/// How long one fetch may take and how often fetches may start: the constants, shorter in tests.
#[derive(Debug, Clone, Copy)]
struct Pace {
    fetch_timeout: Duration,
    min_refresh: Duration,
}

impl Pace {
    const DEFAULT: Pace = Pace {
        fetch_timeout: metadata::FETCH_TIMEOUT,
        min_refresh: MIN_REFRESH,
    };
}

/// The cache.
pub struct Jwks {
    source: Arc<Source>,
    pace: Pace,
}

/// Where the keys come from, the keys held, and the fetch in flight.
struct Source {
    uri: String,
    agent: ureq::Agent,
    /// The keys and when they were fetched.
    keys: RwLock<(Arc<KeyMap>, Instant)>,
    /// At most one fetch at a time, and when the last one ended.
    fetching: Mutex<Fetching>,
}

/// The fetch in flight, if any, and when the last one ended.
struct Fetching {
    /// Ends (its sender is dropped) when the fetch in flight has stored what it brought.
    running: Option<watch::Receiver<()>>,
    /// When the last fetch ended, whatever it brought: the next may start [`MIN_REFRESH`] later.
    ended: Instant,
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
        Self::load_paced(uri, Pace::DEFAULT)
    }

    fn load_paced(uri: &str, pace: Pace) -> Result<Jwks, String> {
        let agent = metadata::agent_with_timeout(pace.fetch_timeout);
        let keys = fetch(&agent, uri)?;
        if keys.is_empty() {
            return Err(format!(
                "the JWKS at {uri} holds no usable signing key (RSA, EC or OKP)"
            ));
        }
        let now = Instant::now();
        Ok(Jwks {
            source: Arc::new(Source {
                uri: uri.to_owned(),
                agent,
                keys: RwLock::new((Arc::new(keys), now)),
                fetching: Mutex::new(Fetching {
                    running: None,
                    ended: now,
                }),
            }),
            pace,
        })
    }

    fn find(keys: &KeyMap, kid: Option<&str>) -> Result<Arc<Key>, Missing> {
        match kid {
            Some(kid) => keys.get(kid).cloned().ok_or(Missing::UnknownKid),
            None if keys.len() == 1 => keys.values().next().cloned().ok_or(Missing::NoKid),
            None => Err(Missing::NoKid),
        }
    }

    /// The key `kid` names. An unknown `kid` waits for the fetch in flight, or starts one when
    /// the last ended at least [`MIN_REFRESH`] ago, and waits at most [`FETCH_TIMEOUT`]
    /// (however many wait, they share that one fetch). Keys older than [`MAX_AGE`] are fetched
    /// again in the background while the cached ones keep answering (so an issuer that is down
    /// or slow never delays a token its cached keys verify). A failed fetch keeps the keys.
    ///
    /// [`FETCH_TIMEOUT`]: metadata::FETCH_TIMEOUT
    pub async fn key(&self, kid: Option<&str>) -> Result<Arc<Key>, Missing> {
        let (keys, at) = self.source.snapshot();
        let found = Self::find(&keys, kid);
        if found.is_ok() {
            if at.elapsed() > MAX_AGE {
                self.fetch();
            }
            return found;
        }
        if let Some(mut ended) = self.fetch() {
            // Err: the fetch ended (its sender dropped); Elapsed: it outlasted its timeout.
            let _ = tokio::time::timeout(self.pace.fetch_timeout, ended.changed()).await;
        }
        Self::find(&self.source.snapshot().0, kid)
    }

    /// The end of the fetch in flight, or of one started now on a task of its own; None when
    /// none runs and the last ended less than [`MIN_REFRESH`] ago.
    fn fetch(&self) -> Option<watch::Receiver<()>> {
        let mut fetching = self.source.fetching();
        if let Some(running) = &fetching.running {
            return Some(running.clone());
        }
        if fetching.ended.elapsed() < self.pace.min_refresh {
            return None;
        }
        let (done, ended) = watch::channel(());
        fetching.running = Some(ended.clone());
        let source = Arc::clone(&self.source);
        tokio::spawn(async move {
            source.refresh().await;
            let mut fetching = source.fetching();
            fetching.running = None;
            fetching.ended = Instant::now();
            drop(done);
        });
        Some(ended)
    }
}

impl Source {
    fn fetching(&self) -> MutexGuard<'_, Fetching> {
        self.fetching.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn snapshot(&self) -> (Arc<KeyMap>, Instant) {
        let k = match self.keys.read() {
            Ok(k) => k,
            Err(poisoned) => poisoned.into_inner(),
        };
        (Arc::clone(&k.0), k.1)
    }

    /// Fetches the JWKS (on the blocking pool) and replaces the keys if it holds any.
    async fn refresh(&self) {
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
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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

    /// A loopback HTTP server answering every request with its body (counted), or, while it has
    /// none, accepting and never answering (an issuer that hangs); until dropped.
    struct JwksServer {
        url: String,
        hits: Arc<AtomicUsize>,
        body: Arc<Mutex<Option<String>>>,
        stop: Arc<AtomicBool>,
    }

    impl JwksServer {
        fn start(body: String) -> JwksServer {
            use std::io::{Read, Write};
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.set_nonblocking(true).unwrap();
            let url = format!("http://{}/jwks", listener.local_addr().unwrap());
            let hits = Arc::new(AtomicUsize::new(0));
            let body = Arc::new(Mutex::new(Some(body)));
            let stop = Arc::new(AtomicBool::new(false));
            let (h, b, st) = (Arc::clone(&hits), Arc::clone(&body), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut held = Vec::new();
                while !st.load(Ordering::Relaxed) {
                    let Ok((mut sock, _)) = listener.accept() else {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    };
                    h.fetch_add(1, Ordering::SeqCst);
                    let Some(body) = b.lock().unwrap().clone() else {
                        held.push(sock);
                        continue;
                    };
                    let _ = sock.set_nonblocking(false);
                    let mut buf = [0u8; 4096];
                    let _ = sock.read(&mut buf);
                    let _ = write!(
                        sock,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                }
            });
            JwksServer {
                url,
                hits,
                body,
                stop,
            }
        }

        fn hits(&self) -> usize {
            self.hits.load(Ordering::SeqCst)
        }

        /// Answers `body` from now on (None: hangs).
        fn answer(&self, body: Option<String>) {
            *self.body.lock().unwrap() = body;
        }
    }

    impl Drop for JwksServer {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    /// Lets the next unknown `kid` fetch at once, as if the refetch interval had passed.
    fn allow_fetch(jwks: &Jwks) {
        jwks.source.fetching().ended = Instant::now() - jwks.pace.min_refresh;
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn an_unknown_kid_fetches_at_most_once_per_interval_and_a_down_issuer_keeps_the_keys() {
        let rt = runtime();
        let server = JwksServer::start(json!({"keys": [rsa("a")]}).to_string());
        let jwks = Jwks::load(&server.url).unwrap();
        assert_eq!(server.hits(), 1);
        rt.block_on(async {
            assert!(jwks.key(Some("a")).await.is_ok());
            // Fetched at start: an unknown kid right after does not fetch again.
            assert_eq!(jwks.key(Some("b")).await.err(), Some(Missing::UnknownKid));
            assert_eq!(server.hits(), 1);
            // Once the interval has passed, it does (once).
            allow_fetch(&jwks);
            assert_eq!(jwks.key(Some("b")).await.err(), Some(Missing::UnknownKid));
            assert_eq!(jwks.key(Some("c")).await.err(), Some(Missing::UnknownKid));
            assert_eq!(server.hits(), 2);
        });
        drop(server);
        std::thread::sleep(Duration::from_millis(50));
        rt.block_on(async {
            // The issuer is gone: a fetch fails, the cached key still verifies.
            allow_fetch(&jwks);
            assert_eq!(jwks.key(Some("b")).await.err(), Some(Missing::UnknownKid));
            assert!(jwks.key(Some("a")).await.is_ok());
        });
    }

    /// Issue 40: while the JWKS endpoint hangs, requests naming unknown `kid`s (and one whose
    /// key was rotated in) share one fetch, each answered within one fetch timeout; the failed
    /// fetch is not retried by every waiter, nor at once by the next request.
    #[test]
    fn waiters_on_a_hanging_issuer_share_one_fetch_and_none_waits_longer_than_its_timeout() {
        // Production's ratio (10 s fetch timeout, 5 s between fetches), made short.
        let pace = Pace {
            fetch_timeout: Duration::from_secs(2),
            min_refresh: Duration::from_secs(1),
        };
        let server = JwksServer::start(json!({"keys": [rsa("a")]}).to_string());
        let jwks = Jwks::load_paced(&server.url, pace).unwrap();
        // The issuer rotates in key "b", then its JWKS endpoint hangs.
        server.answer(None);
        let rt = runtime();
        rt.block_on(async {
            allow_fetch(&jwks);
            let start = Instant::now();
            let asked = |kid: &'static str| {
                let jwks = &jwks;
                async move { (kid, jwks.key(Some(kid)).await.err(), start.elapsed()) }
            };
            let answers = tokio::join!(asked("x1"), asked("x2"), asked("x3"), asked("b"));
            for (kid, missing, took) in [answers.0, answers.1, answers.2, answers.3] {
                assert_eq!(missing, Some(Missing::UnknownKid), "{kid}");
                assert!(
                    took <= pace.fetch_timeout + Duration::from_secs(1),
                    "{kid} answered after {took:?}, more than one fetch timeout ({:?}) + 1 s",
                    pace.fetch_timeout
                );
            }
            assert_eq!(server.hits(), 2, "the start-up fetch and one shared fetch");
            // The failed fetch is not tried again by the next unknown kid right away.
            assert_eq!(jwks.key(Some("x4")).await.err(), Some(Missing::UnknownKid));
            assert_eq!(server.hits(), 2, "no fetch right after a failed one");
        });
        server.answer(Some(json!({"keys": [rsa("a"), rsa("b")]}).to_string()));
        rt.block_on(async {
            allow_fetch(&jwks);
            assert!(
                jwks.key(Some("b")).await.is_ok(),
                "the rotated key, fetched"
            );
            assert_eq!(server.hits(), 3);
        });
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
