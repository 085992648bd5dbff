//! Private helpers of `oauth.rs`: the authorization server (oidc-provider, run by
//! `tests/peers/oauth/server.mjs` on the Node that `scripts/oauth-peer.sh` installed), tokens from
//! it by the client-credentials grant, and base64url to alter a real token (never to sign one).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;

use redmark_tests::server::{http, HttpResponse, WAIT};
use serde_json::Value;

/// The resource identifier redmark serves as (its public URL behind a proxy, as in production).
pub const RESOURCE: &str = "https://rooms.redmark.test/mcp";
/// Another resource the same issuer issues tokens for.
pub const OTHER: &str = "https://elsewhere.redmark.test/mcp";

/// Where `scripts/oauth-peer.sh` installed the peers.
pub fn peer_dir() -> PathBuf {
    PathBuf::from(option_env!("REDMARK_OAUTH_PEER_DIR").unwrap_or("target/oauth-peer"))
}

// --- base64url, to alter a real token (never to sign one) -----------------------------------

const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

pub fn b64url(data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

pub fn unb64url(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes() {
        let v = B64.iter().position(|b| *b == c).expect("base64url") as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

pub fn basic(id: &str, secret: &str) -> String {
    let std = b64url(format!("{id}:{secret}").as_bytes())
        .replace('-', "+")
        .replace('_', "/");
    let pad = (4 - std.len() % 4) % 4;
    format!("Basic {std}{}", "=".repeat(pad))
}

/// The claims of a JWT, unverified (to look at, or to edit).
pub fn claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("a JWT");
    serde_json::from_slice(&unb64url(payload)).expect("JSON claims")
}

// --- the authorization server ----------------------------------------------------------------

/// A running oidc-provider; killed on drop (and it stops by itself when its stdin closes).
pub struct Issuer {
    child: Child,
    _stdin: ChildStdin,
    pub addr: SocketAddr,
    pub issuer: String,
    keys: PathBuf,
}

impl Issuer {
    /// Starts oidc-provider with the signing keys in `keys` (made if missing); `extra` are more
    /// `server.mjs` flags.
    pub fn start(keys: &Path, extra: &[&str]) -> Issuer {
        let mut cmd = Command::new(peer_dir().join("node_modules/.bin/node"));
        cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/oauth/server.mjs"))
            .arg("--keys")
            .arg(keys)
            .args(["--resource", RESOURCE, "--resource", OTHER])
            .args(extra)
            .env("REDMARK_OAUTH_PEER_DIR", peer_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("spawn node");
        let stdin = child.stdin.take().expect("stdin");
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let line = rx.recv_timeout(WAIT).expect("oidc-provider did not start");
        let mut words = line.split(' ').skip(1);
        let port: u16 = words.next().and_then(|p| p.parse().ok()).expect("port");
        let issuer = words.next().expect("issuer").to_owned();
        Issuer {
            child,
            _stdin: stdin,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            issuer,
            keys: keys.to_owned(),
        }
    }

    /// The `kid` of the key this issuer signs with.
    pub fn kid(&self) -> String {
        let keys: Value =
            serde_json::from_slice(&std::fs::read(&self.keys).expect("keys")).expect("keys JSON");
        keys["keys"][0]["kid"].as_str().expect("kid").to_owned()
    }

    /// Asks for a token by the client-credentials grant as `client`.
    pub fn try_token(&self, client: &str, resource: &str, scope: &str) -> HttpResponse {
        let auth = basic(client, &format!("{client}-secret-0123456789"));
        let body = format!(
            "grant_type=client_credentials&resource={}&scope={}",
            resource.replace(':', "%3A").replace('/', "%2F"),
            scope.replace(' ', "+").replace(':', "%3A")
        );
        http(
            self.addr,
            "POST",
            "/token",
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            body.as_bytes(),
        )
    }

    pub fn token(&self, client: &str, resource: &str, scope: &str) -> String {
        let r = self.try_token(client, resource, scope);
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        r.json()["access_token"]
            .as_str()
            .expect("access_token")
            .to_owned()
    }
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
