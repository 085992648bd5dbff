//! `redmark serve --auth-issuer` against an issuer this test serves itself (no Node peer): what
//! start-up refuses (metadata or keys in the clear off loopback) and what a hanging JWKS endpoint
//! costs the clients waiting on it (issue 40).

use std::net::SocketAddr;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use axum::http::header::CONTENT_TYPE;
use axum::routing::get;
use base64ct::{Base64UrlUnpadded, Encoding as _};
use redmark_tests::server::{
    post_mcp, redmark_bin, run_bounded, tool_call, Run, Server, TempDir, TEST_KEY,
};
use serde_json::json;

const RESOURCE: &str = "https://rooms.redmark.test/mcp";
/// `metadata::FETCH_TIMEOUT` in the shell: the longest one JWKS fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// `jwks::MIN_REFRESH` in the shell: the shortest time from one JWKS fetch to the next.
const MIN_REFRESH: Duration = Duration::from_secs(5);

/// An authorization server on loopback: RFC 8414 metadata naming `jwks_uri`, and a JWKS of one
/// RSA key that hangs (accepts, never answers) while `hang` is set; stops when dropped.
struct Issuer {
    url: String,
    port: u16,
    jwks_hits: Arc<AtomicUsize>,
    hang: Arc<AtomicBool>,
    _runtime: tokio::runtime::Runtime,
}

impl Issuer {
    /// Serves; `jwks_host` is the host its metadata names for the JWKS (its own address if None).
    fn start(jwks_host: Option<&str>) -> Issuer {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let url = format!("http://127.0.0.1:{port}");
        let jwks_uri = format!("http://{}:{port}/jwks", jwks_host.unwrap_or("127.0.0.1"));
        let metadata = json!({"issuer": url, "jwks_uri": jwks_uri,
            "id_token_signing_alg_values_supported": ["RS256"]})
        .to_string();
        let keys = json!({"keys": [{"kty": "RSA", "kid": "a", "use": "sig", "alg": "RS256",
            "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw",
            "e": "AQAB"}]})
        .to_string();
        let jwks_hits = Arc::new(AtomicUsize::new(0));
        let hang = Arc::new(AtomicBool::new(false));
        let (hits, hanging) = (Arc::clone(&jwks_hits), Arc::clone(&hang));
        let json = |body: String| ([(CONTENT_TYPE, "application/json")], body);
        let app = axum::Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                get(move || async move { json(metadata) }),
            )
            .route(
                "/jwks",
                get(move || async move {
                    hits.fetch_add(1, Ordering::SeqCst);
                    if hanging.load(Ordering::SeqCst) {
                        std::future::pending::<()>().await;
                    }
                    json(keys)
                }),
            );
        runtime.spawn(async move { axum::serve(listener, app).await });
        Issuer {
            url,
            port,
            jwks_hits,
            hang,
            _runtime: runtime,
        }
    }

    fn jwks_hits(&self) -> usize {
        self.jwks_hits.load(Ordering::SeqCst)
    }
}

/// `redmark serve --data DATA/fresh --http 127.0.0.1:0 --auth-issuer ISSUER --resource … EXTRA`,
/// run to its end, and whether it left the data folder uncreated.
fn serve_refused(data: &TempDir, issuer: &str, extra: &[&str]) -> (Run, bool) {
    let fresh = data.path().join("fresh");
    let mut cmd = Command::new(redmark_bin());
    cmd.args(["serve", "--data"])
        .arg(&fresh)
        .args(["--http", "127.0.0.1:0", "--auth-issuer", issuer])
        .args(["--resource", RESOURCE])
        .args(extra)
        .env("REDMARK_KEY", TEST_KEY);
    let run = run_bounded(cmd);
    (run, !fresh.exists())
}

/// The one line `redmark serve` failed with.
fn error_line(run: &Run) -> &str {
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("listening"), "{}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {}", run.stderr);
    lines[0]
}

#[test]
fn an_http_issuer_off_loopback_is_refused_at_start() {
    let data = TempDir::new("issuer-in-the-clear");
    let (run, untouched) = serve_refused(&data, "http://idp.example:8080", &[]);
    let line = error_line(&run);
    assert!(
        line.starts_with(
            "redmark serve: --auth-issuer http://idp.example:8080: the issuer is not https://"
        ),
        "{line}"
    );
    for why in ["unencrypted", "RFC 8414", "--allow-insecure-issuer"] {
        assert!(line.contains(why), "says {why}: {line}");
    }
    assert!(untouched, "refused before creating the data folder");
}

#[test]
fn keys_in_the_clear_off_loopback_are_refused_unless_allowed() {
    // A loopback issuer whose metadata sends the keys to 0.0.0.0: not loopback by address,
    // though on Linux a connection to it reaches this machine (so the allowed case can fetch).
    let issuer = Issuer::start(Some("0.0.0.0"));
    let data = TempDir::new("jwks-in-the-clear");
    let (run, untouched) = serve_refused(&data, &issuer.url, &[]);
    let line = error_line(&run);
    let jwks_uri = format!("http://0.0.0.0:{}/jwks", issuer.port);
    assert!(
        line.contains(&format!("jwks_uri {jwks_uri} is not https://"))
            && line.contains("--allow-insecure-issuer"),
        "{line}"
    );
    assert!(untouched);
    assert_eq!(issuer.jwks_hits(), 0, "the keys were not fetched");

    let s = Server::start(
        &[
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            &issuer.url,
            "--resource",
            RESOURCE,
            "--allow-insecure-issuer",
        ],
        data.path(),
    );
    assert!(s.stderr().contains("auth: issuer"), "{}", s.stderr());
    assert!(
        s.stderr().contains("in the clear off loopback"),
        "warned: {}",
        s.stderr()
    );
    assert_eq!(issuer.jwks_hits(), 1);
}

/// A JWT naming key `kid`: unsigned (the server must look the key up before anything else).
fn token_naming(kid: &str) -> String {
    let part = |v: serde_json::Value| Base64UrlUnpadded::encode_string(v.to_string().as_bytes());
    format!(
        "{}.{}.c2ln",
        part(json!({"alg": "RS256", "typ": "JWT", "kid": kid})),
        part(json!({"sub": "alice"}))
    )
}

/// Issue 40, item 1: while the JWKS endpoint hangs, requests naming keys the server lacks (three
/// made up, one rotated in by the issuer) share one fetch and are all answered within one fetch
/// timeout and a second; before, each started its own fetch after the one before (10, 20, 30,
/// 40 s).
#[test]
fn while_the_jwks_hangs_unknown_kids_are_all_answered_within_one_fetch_timeout() {
    let issuer = Issuer::start(None);
    let data = TempDir::new("jwks-convoy");
    let s = Server::start(
        &[
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            &issuer.url,
            "--resource",
            RESOURCE,
        ],
        data.path(),
    );
    let addr: SocketAddr = s.http[0];
    assert_eq!(issuer.jwks_hits(), 1, "fetched at start");
    // Past the refetch interval since the start-up fetch, the JWKS endpoint hangs.
    thread::sleep(MIN_REFRESH + Duration::from_millis(500));
    issuer.hang.store(true, Ordering::SeqCst);
    let start = Instant::now();
    let asked: Vec<_> = ["made-up-1", "made-up-2", "made-up-3", "rotated-in"]
        .into_iter()
        .map(|kid| {
            thread::spawn(move || {
                let call = tool_call(1, "list_rooms", json!({}), false);
                let auth = format!("Bearer {}", token_naming(kid));
                let r = post_mcp(addr, &call, &[("Authorization", &auth)]);
                (kid, r.status, start.elapsed())
            })
        })
        .collect();
    for a in asked {
        let (kid, status, took) = a.join().expect("request thread");
        assert_eq!(status, 401, "{kid}");
        assert!(
            took <= FETCH_TIMEOUT + Duration::from_secs(1),
            "{kid} answered after {took:?}, more than one fetch timeout ({FETCH_TIMEOUT:?}) + 1 s"
        );
    }
    assert_eq!(issuer.jwks_hits(), 2, "one fetch shared by the four");
    // The log line is read from the server's stderr by another thread: wait for it, bounded.
    assert!(
        s.wait_stderr("no key Some(\"rotated-in\")"),
        "{}",
        s.stderr()
    );
}
