//! `redmark serve --http` as an OAuth 2.1 resource server against a real authorization server:
//! oidc-provider (npm, pinned; `scripts/oauth-peer.sh` installs it, the Node 22 it runs on and
//! the Python SDK 2.3 into `target/oauth-peer/`; `tests/peers/oauth/server.mjs` configures it
//! with resource indicators, JWT access tokens and the client-credentials grant, on loopback;
//! helpers in `oauth_support/`). Nothing here signs a token:
//! the bad tokens come from misconfigured issuers (another issuer URL with the same key, the
//! same issuer URL with another key, another resource, a 1-second lifetime) or are a real token
//! altered (`alg: none`, a payload edited).

mod oauth_support;

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use oauth_support::{b64url, claims, peer_dir, Issuer, OTHER, RESOURCE};
use redmark_tests::peers::{is_free, run_json};
use redmark_tests::server::{
    http, post_mcp, redmark_bin, retry, run_bounded, tool_call, HttpResponse, Server, TempDir,
};
use serde_json::{json, Value};

/// Where challenges point.
const METADATA_URL: &str = "https://rooms.redmark.test/.well-known/oauth-protected-resource/mcp";
const DAY: &str = "2099-09-17";

// --- redmark ----------------------------------------------------------------------------------

/// `redmark serve --http` trusting `issuer`, tokens for [`RESOURCE`], 1 s of clock leeway.
fn serve(issuer: &Issuer, data: &Path) -> Server {
    let s = Server::start(
        &[
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            &issuer.issuer,
            "--resource",
            RESOURCE,
            "--auth-leeway",
            "1",
        ],
        data,
    );
    assert!(s.stderr().contains("auth: issuer"), "{}", s.stderr());
    s
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// `book_room` of `room` at 09:00 on [`DAY`] with `token` (None: no Authorization).
fn book(addr: SocketAddr, token: Option<&str>, room: &str, id: u64) -> HttpResponse {
    let call = tool_call(
        id,
        "book_room",
        json!({"day": DAY, "hour": 9, "room_hint": room}),
        true,
    );
    match token {
        Some(t) => post_mcp(addr, &call, &[("Authorization", &bearer(t))]),
        None => post_mcp(addr, &call, &[]),
    }
}

/// The rooms free at 09:00 on [`DAY`], listed with `token`.
fn rooms(addr: SocketAddr, token: &str) -> Value {
    let call = tool_call(9, "list_rooms", json!({"day": DAY, "hour": 9}), false);
    let r = post_mcp(addr, &call, &[("Authorization", &bearer(token))]);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["result"].clone()
}

fn redmark_call(url: &str, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(redmark_bin());
    cmd.args(["call", "--url", url])
        .args(args)
        .env_remove("REDMARK_TOKEN")
        .env_remove("REDMARK_CLIENT_SECRET")
        .envs(env.iter().copied());
    let run = run_bounded(cmd);
    (run.code, run.stdout, run.stderr)
}

fn is_invalid_token(r: &HttpResponse) -> bool {
    r.status == 401
        && r.header("www-authenticate").is_some_and(|h| {
            h.contains(&format!("resource_metadata=\"{METADATA_URL}\""))
                && h.contains("error=\"invalid_token\"")
        })
}

// --- tests --------------------------------------------------------------------------------------

/// The metadata, the challenge, and `redmark call` with a token it got by client credentials
/// (and with --token, REDMARK_TOKEN and --token-command); a token without the write scope lists
/// but cannot book (403 naming the scope).
#[test]
#[cfg_attr(
    not(oauth_peer),
    ignore = "needs oidc-provider and the Python SDK 2.3 (scripts/oauth-peer.sh installs them)"
)]
fn client_credentials_token_books_through_redmark_call() {
    let tmp = TempDir::new("oauth-call");
    let issuer = Issuer::start(&tmp.path().join("keys.json"), &[]);
    let data = TempDir::new("oauth-call-data");
    let s = serve(&issuer, data.path());
    let addr = s.http[0];
    let url = format!("http://{addr}/mcp");

    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let r = http(addr, "GET", path, &[], b"");
        assert_eq!(r.status, 200, "{path}");
        let doc = r.json();
        assert_eq!(doc["resource"], RESOURCE, "{doc}");
        assert_eq!(
            doc["authorization_servers"],
            json!([issuer.issuer]),
            "{doc}"
        );
        assert_eq!(doc["scopes_supported"], json!(["rooms:write"]), "{doc}");
    }
    let r = book(addr, None, "atrium", 1);
    assert_eq!(r.status, 401);
    assert_eq!(
        r.header("www-authenticate"),
        Some(format!("Bearer resource_metadata=\"{METADATA_URL}\"").as_str())
    );

    // redmark call gets its own token: the issuer from the server's metadata, the resource too.
    let (code, out, err) = redmark_call(
        &url,
        &[
            "--client-id",
            "alice",
            "--answer",
            "room.room_id=studio-b",
            "book_room",
            &format!("day={DAY}"),
            "hour=9",
            "room_hint=the big room",
        ],
        &[("REDMARK_CLIENT_SECRET", "alice-secret-0123456789")],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("Booked Studio B"), "{out}");

    // A token without rooms:write lists the rooms, but booking is refused with the scope named.
    let reader = issuer.token("reader", RESOURCE, "rooms:read");
    let (code, out, err) = redmark_call(
        &url,
        &[
            "--token",
            &reader,
            "list_rooms",
            &format!("day={DAY}"),
            "hour=9",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let r = book(addr, Some(&reader), "atrium", 2);
    assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
    let challenge = r.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.contains("error=\"insufficient_scope\"")
            && challenge.contains("scope=\"rooms:write\""),
        "{challenge}"
    );
    let (code, _, err) = redmark_call(
        &url,
        &[
            "book_room",
            &format!("day={DAY}"),
            "hour=9",
            "room_hint=atrium",
        ],
        &[("REDMARK_TOKEN", &reader)],
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("HTTP 403") && err.contains("insufficient_scope"),
        "{err}"
    );
    assert!(is_free(&rooms(addr, &reader), "atrium"));

    // A token from a command; no token at all says what to pass.
    let writer = issuer.token("bob", RESOURCE, "rooms:write");
    let (code, out, err) = redmark_call(
        &url,
        &[
            "--token-command",
            &format!("echo {writer}"),
            "book_room",
            &format!("day={DAY}"),
            "hour=9",
            "room_hint=atrium",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!is_free(&rooms(addr, &reader), "atrium"));
    let (code, _, err) = redmark_call(&url, &["list_rooms"], &[]);
    assert_eq!(code, 6, "{err}");
    assert!(
        err.contains("HTTP 401") && err.contains("--client-id"),
        "{err}"
    );
}

/// A token for another resource, an expired one, one signed by another key under the right
/// issuer, one from another issuer signed with the right key, `alg: none`, and an edited
/// payload: each 401 `invalid_token`, and nothing is booked.
#[test]
#[cfg_attr(
    not(oauth_peer),
    ignore = "needs oidc-provider and the Python SDK 2.3 (scripts/oauth-peer.sh installs them)"
)]
fn bad_tokens_are_refused_and_book_nothing() {
    let tmp = TempDir::new("oauth-bad");
    let keys = tmp.path().join("keys.json");
    let main = Issuer::start(&keys, &[]);
    // The same key, another issuer URL: only the `iss` check can refuse its tokens.
    let other_issuer = Issuer::start(&keys, &[]);
    // The same issuer URL and kid, another key: only the signature can refuse its tokens.
    let kid = main.kid();
    let impostor = Issuer::start(
        &tmp.path().join("impostor.json"),
        &["--issuer", &main.issuer, "--kid", &kid],
    );
    assert_eq!(impostor.kid(), kid);
    let data = TempDir::new("oauth-bad-data");
    let s = serve(&main, data.path());
    let addr = s.http[0];

    let brief = main.token("brief", RESOURCE, "rooms:write");
    let good = main.token("alice", RESOURCE, "rooms:write");
    let mut bad = vec![
        (
            "another resource",
            main.token("alice", OTHER, "rooms:write"),
        ),
        (
            "another key",
            impostor.token("alice", RESOURCE, "rooms:write"),
        ),
        (
            "another issuer",
            other_issuer.token("alice", RESOURCE, "rooms:write"),
        ),
    ];
    assert_eq!(claims(&bad[0].1)["aud"], OTHER);
    assert_eq!(claims(&bad[2].1)["iss"], other_issuer.issuer);
    let parts: Vec<&str> = good.split('.').collect();
    let none = b64url(format!(r#"{{"alg":"none","typ":"at+jwt","kid":"{kid}"}}"#).as_bytes());
    bad.push(("alg none", format!("{none}.{}.", parts[1])));
    bad.push((
        "alg none, signature kept",
        format!("{none}.{}.{}", parts[1], parts[2]),
    ));
    let hs = b64url(format!(r#"{{"alg":"HS256","typ":"at+jwt","kid":"{kid}"}}"#).as_bytes());
    bad.push(("HS256 header", format!("{hs}.{}.{}", parts[1], parts[2])));
    let mut edited = claims(&good);
    edited["sub"] = json!("bob");
    let edited = b64url(edited.to_string().as_bytes());
    bad.push((
        "edited payload",
        format!("{}.{edited}.{}", parts[0], parts[2]),
    ));
    // The 1-second token has expired (past the 1 s leeway) by now.
    let exp = claims(&brief)["exp"].as_u64().expect("exp");
    while std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
        <= exp + 2
    {
        thread::sleep(Duration::from_millis(200));
    }
    bad.push(("expired", brief));

    for (i, (why, token)) in bad.iter().enumerate() {
        let r = book(addr, Some(token), "atrium", 10 + i as u64);
        assert!(
            is_invalid_token(&r),
            "{why}: {} {:?} {}",
            r.status,
            r.header("www-authenticate"),
            String::from_utf8_lossy(&r.body)
        );
    }
    assert!(
        is_free(&rooms(addr, &good), "atrium"),
        "a refused token booked"
    );
    // The same request with the real token books: the refusals were the tokens'.
    let r = book(addr, Some(&good), "atrium", 30);
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json()["result"]["structuredContent"]["booked"],
        true,
        "{}",
        r.json()
    );
}

/// A token with the operator scope (`--operator-scope`, default rooms:operate) is an operator's:
/// it cancels another subject's booking and reads the booking's trail; the same subject's token
/// without that scope may do neither.
#[test]
#[cfg_attr(
    not(oauth_peer),
    ignore = "needs oidc-provider and the Python SDK 2.3 (scripts/oauth-peer.sh installs them)"
)]
fn a_token_with_the_operator_scope_cancels_anothers_booking_and_reads_its_trail() {
    let tmp = TempDir::new("oauth-operator");
    let issuer = Issuer::start(&tmp.path().join("keys.json"), &[]);
    let data = TempDir::new("oauth-operator-data");
    let s = serve(&issuer, data.path());
    let addr = s.http[0];
    let call = |token: &str, tool: &str, args: Value| {
        let r = post_mcp(
            addr,
            &tool_call(1, tool, args, false),
            &[("Authorization", &bearer(token))],
        );
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        r.json()["result"].clone()
    };
    let alice = issuer.token("alice", RESOURCE, "rooms:write");
    let booked = call(
        &alice,
        "book_room",
        json!({"day": DAY, "hour": 9, "room_id": "atrium"}),
    );
    let id = booked["structuredContent"]["booking"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{booked}"))
        .to_owned();
    let plain = issuer.token("olga", RESOURCE, "rooms:write");
    let r = call(&plain, "cancel_booking", json!({"booking_id": id}));
    assert_eq!(r["isError"], true, "{r}");
    let r = call(&plain, "booking_trail", json!({"booking_id": id}));
    assert_eq!(r["isError"], true, "{r}");

    let operator = issuer.token("olga", RESOURCE, "rooms:write rooms:operate");
    let r = call(&operator, "cancel_booking", json!({"booking_id": id}));
    assert_eq!(r["isError"], false, "{r}");
    let r = call(&operator, "booking_trail", json!({"booking_id": id}));
    let text = r["content"][0]["text"].as_str().unwrap_or("");
    assert!(
        text.starts_with(&format!("{id}: made by "))
            && text.contains("; cancelled by an operator "),
        "{r}"
    );
}

/// A question asked of alice cannot be answered by bob (the sealed `requestState` is bound to
/// alice at this issuer); alice's own retry books, on another instance (same sealing key, same
/// issuer): any instance maps a token to the same principal. A 2025-11-25 session opened by
/// alice refuses bob's token.
#[test]
#[cfg_attr(
    not(oauth_peer),
    ignore = "needs oidc-provider and the Python SDK 2.3 (scripts/oauth-peer.sh installs them)"
)]
fn a_retry_by_another_subject_is_refused() {
    let tmp = TempDir::new("oauth-retry");
    let issuer = Issuer::start(&tmp.path().join("keys.json"), &[]);
    let data = TempDir::new("oauth-retry-data");
    let s = serve(&issuer, data.path());
    let addr = s.http[0];
    let data2 = TempDir::new("oauth-retry-data2");
    let s2 = serve(&issuer, data2.path());
    let addr2 = s2.http[0];
    let alice = issuer.token("alice", RESOURCE, "rooms:write");
    let bob = issuer.token("bob", RESOURCE, "rooms:write");

    let ask = tool_call(
        1,
        "book_room",
        json!({"day": DAY, "hour": 9, "room_hint": "the big room"}),
        true,
    );
    let r = post_mcp(addr, &ask, &[("Authorization", &bearer(&alice))]);
    let asked = r.json();
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"].as_str().expect("state");
    let answer = json!({"room": {"action": "accept", "content": {"room_id": "studio-b"}}});
    for at in [addr, addr2] {
        let by_bob = post_mcp(
            at,
            &retry(&ask, 2, answer.clone(), state),
            &[("Authorization", &bearer(&bob))],
        );
        let refused = by_bob.json();
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(is_free(&rooms(at, &alice), "studio-b"));
    }
    let by_alice = post_mcp(
        addr2,
        &retry(&ask, 3, answer, state),
        &[("Authorization", &bearer(&alice))],
    );
    assert_eq!(
        by_alice.json()["result"]["structuredContent"]["booked"],
        true,
        "{}",
        by_alice.json()
    );

    // 2025-11-25: the session keeps alice.
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}});
    let legacy = |body: &Value, token: &str, sid: Option<&str>| {
        let auth = bearer(token);
        let mut h = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", auth.as_str()),
        ];
        if let Some(sid) = sid {
            h.push(("Mcp-Session-Id", sid));
        }
        http(
            addr,
            "POST",
            "/mcp",
            &h,
            &serde_json::to_vec(body).expect("json"),
        )
    };
    let opened = legacy(&init, &alice, None);
    assert_eq!(opened.status, 200);
    let sid = opened
        .header("mcp-session-id")
        .expect("session id")
        .to_owned();
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    assert_eq!(legacy(&list, &alice, Some(&sid)).status, 200);
    let other = legacy(&list, &bob, Some(&sid));
    assert_eq!(
        other.status,
        404,
        "{}",
        String::from_utf8_lossy(&other.body)
    );
}

/// The issuer rotates its signing key (restarted on the same URL with a new key first): tokens
/// signed with the new key verify without restarting redmark; while the issuer is down, tokens
/// the cached key verifies still work.
#[test]
#[cfg_attr(
    not(oauth_peer),
    ignore = "needs oidc-provider and the Python SDK 2.3 (scripts/oauth-peer.sh installs them)"
)]
fn the_issuer_rotates_its_key_without_a_restart() {
    let tmp = TempDir::new("oauth-rotate");
    let keys = tmp.path().join("keys.json");
    let issuer = Issuer::start(&keys, &[]);
    let data = TempDir::new("oauth-rotate-data");
    let started = Instant::now();
    let s = serve(&issuer, data.path());
    let addr = s.http[0];
    let old = issuer.token("alice", RESOURCE, "rooms:write");
    let (url, port) = (issuer.issuer.clone(), issuer.addr.port().to_string());
    let old_kid = issuer.kid();
    drop(issuer);
    // Down: the cached key still verifies.
    rooms(addr, &old);
    // Rotated: the new key signs, the old one stays published.
    let issuer = Issuer::start(&keys, &["--rotate", "--port", &port, "--issuer", &url]);
    assert_ne!(issuer.kid(), old_kid);
    let new = issuer.token("alice", RESOURCE, "rooms:write");
    assert_eq!(
        claims(&new)["iss"],
        url,
        "the restarted issuer must keep its URL"
    );
    // A refetch is allowed once per 5 s (jwks::MIN_REFRESH); start-up fetched the keys.
    if let Some(left) = Duration::from_secs(6).checked_sub(started.elapsed()) {
        thread::sleep(left);
    }
    let r = book(addr, Some(&new), "nook", 1);
    assert_eq!(r.status, 200, "{}", s.stderr());
    assert_eq!(r.json()["result"]["structuredContent"]["booked"], true);
    assert!(s.wait_stderr("auth: fetched"), "{}", s.stderr());
    rooms(addr, &old);
}

/// The official Python SDK 2.3 (2026-07-28) with a bearer token: books Studio B through the
/// red mark; without a token it is refused.
#[test]
#[cfg_attr(
    not(oauth_peer),
    ignore = "needs oidc-provider and the Python SDK 2.3 (scripts/oauth-peer.sh installs them)"
)]
fn python_sdk_client_books_with_a_bearer_token() {
    let tmp = TempDir::new("oauth-py");
    let issuer = Issuer::start(&tmp.path().join("keys.json"), &[]);
    let data = TempDir::new("oauth-py-data");
    let s = serve(&issuer, data.path());
    let url = format!("http://{}/mcp", s.http[0]);
    let token = issuer.token("alice", RESOURCE, "rooms:write");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/oauth/client.py");
    let mut cmd = Command::new(peer_dir().join("../sdk-peers/venv/bin/python"));
    cmd.arg(&script).args([url.as_str(), token.as_str(), DAY]);
    let out = run_json(cmd);
    assert_eq!(out["asked"].as_array().map(Vec::len), Some(1), "{out}");
    assert_eq!(out["book"]["isError"], false, "{out}");
    // Served as 2026-07-28 (the red mark, not the 2025-11-25 bridge).
    assert_eq!(out["book"]["resultType"], "complete", "{out}");
    assert_eq!(
        out["book"]["structuredContent"]["booking"]["room_id"], "studio-b",
        "{out}"
    );
    assert!(!is_free(&out["rooms"], "studio-b"), "{out}");
    let mut cmd = Command::new(peer_dir().join("../sdk-peers/venv/bin/python"));
    cmd.arg(&script).args([url.as_str(), "not-a-token", DAY]);
    let run = run_bounded(cmd);
    assert_ne!(run.code, 0, "{}", run.stdout);
}

/// Behind a TLS proxy that names this server `Host: localhost` (docs/oauth.md), a browser on
/// the booking page names the site in `Origin`: `--resource`'s origin is accepted and no other,
/// and the feed URLs handed out are under the site, not `http://localhost`.
#[test]
#[cfg_attr(
    not(oauth_peer),
    ignore = "needs oidc-provider and the Python SDK 2.3 (scripts/oauth-peer.sh installs them)"
)]
fn behind_a_proxy_the_sites_origin_is_accepted_and_feeds_are_under_it() {
    let tmp = TempDir::new("oauth-proxy");
    let issuer = Issuer::start(&tmp.path().join("keys.json"), &[]);
    let data = TempDir::new("oauth-proxy-data");
    let s = serve(&issuer, data.path());
    let addr = s.http[0];
    let alice = bearer(&issuer.token("alice", RESOURCE, "rooms:write"));
    let site = RESOURCE.trim_end_matches("/mcp");
    let call = tool_call(1, "list_rooms", json!({"day": DAY, "hour": 9}), false);
    for (origin, status) in [(site, 200), ("https://evil.example", 403)] {
        let headers = [
            ("Authorization", alice.as_str()),
            ("Host", "localhost"),
            ("Origin", origin),
        ];
        let r = post_mcp(addr, &call, &headers);
        let body = String::from_utf8_lossy(&r.body);
        assert_eq!(r.status, status, "Origin {origin}: {body}");
    }
    let headers = [("Authorization", alice.as_str()), ("Host", "localhost")];
    let r = http(addr, "GET", "/calendars/", &headers, b"");
    let text = String::from_utf8_lossy(&r.body);
    assert_eq!(r.status, 200, "{text}");
    assert!(
        text.contains(&format!("{site}/calendars/mine.ics?key=")),
        "{text}"
    );
}
