//! Streamable HTTP (2026-07-28) at `/mcp`: one POST per message, nothing protocol-level
//! decoded here beyond the three MCP headers, which the engine checks against the body.
//!
//! Per request, in order:
//! 1. Host/Origin (DNS rebinding, other sites): when bound to loopback, `Host` must name
//!    localhost, 127.0.0.1 or `[::1]` (any port); an `Origin`, if sent, must be the `Host`
//!    itself (name and port: a page on another local port is another site) or, with
//!    `--auth-issuer`, `--resource`'s origin (the site's, behind a TLS proxy that sends
//!    `Host: localhost`). Else **403**. Off
//!    loopback that check cannot stop DNS rebinding (the attacker's name is a valid `Host` and
//!    `Origin`), which is why `redmark serve` refuses a non-loopback address without
//!    `--tokens`: there the bearer token is the guard.
//! 2. Path `/mcp` (else 404; `GET /` and `/web/…` are the booking page, [`crate::web`]);
//!    method POST (else **405**, `Allow: POST`); `Content-Type: application/json` (else
//!    **415**: a page may send `text/plain` and form bodies to any site without a preflight).
//! 3. `Authorization: Bearer` → principal from `--tokens`, or from a JWT access token when
//!    `--auth-issuer` is given (`crate::auth`: 401 with `resource_metadata`, 403
//!    `insufficient_scope` after the body is read); unknown or missing → **401**. With neither,
//!    on loopback, a connection the kernel says is the server's own user's ([`super::peer`],
//!    Linux) is the local user, the principal of stdio and `--tcp` too; any other is one
//!    anonymous principal. `GET /.well-known/oauth-protected-resource[/mcp]`
//!    serves RFC 9728 metadata under `--auth-issuer`. The connection then counts against that
//!    principal; one already holding its share of the listener gets **503**
//!    ([`super::share`]).
//! 4. Body of at most [`MAX_MESSAGE`] bytes, read within the body timeout: larger → **413**
//!    with an id-less JSON-RPC `-32600` "message too large"; too slow → 408.
//! 5. A `subscriptions/listen` the engine acknowledged is answered with an event stream that
//!    stays open ([`super::live`]). Else the engine answers; its `Handled.status` is the HTTP
//!    status (400 for -32020/-32021/-32022
//!    and `_meta` -32602, 404 for -32601, 202 with no body for a notification). One message →
//!    `application/json`; several (notifications before the response) → `text/event-stream`,
//!    one `data:` event each. `Mcp-Param-*` headers go to the engine too
//!    ([`Engine::handle_http`](redmark_core::Engine::handle_http)), which checks them against
//!    arguments marked `x-mcp-header`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use http_body_util::{BodyExt, Limited};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use redmark_core::limits::MAX_MESSAGE;
use redmark_core::Via;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::accept::{accept_gated, WriteTimeout};
use super::feeds;
use super::peer::PeerUids;
use super::share::{Hold, Shares};
use crate::auth::role::seat;
use crate::auth::tokens::Tokens;
use crate::auth::{OAuth, Verdict};
use crate::host::{Hosted, Msg, OwnedHeaders, Shared, LOCAL_PRINCIPAL};
use crate::legacy::http::HttpLegacy;
use crate::metrics::Transport;
use crate::ops::http as ops;

/// Principal of every request when no tokens file is given (but the local user's own, on
/// loopback).
pub const ANONYMOUS: &[u8] = b"http:anonymous";

/// Whether a connection comes from the server's own user, by the kernel's word, on a loopback
/// server without tokens or an issuer (its requests are then the local user's).
#[derive(Clone, Copy)]
struct OwnUser(bool);

/// Settings of one HTTP listener.
pub struct HttpConfig {
    pub tokens: Option<Arc<Tokens>>,
    /// OAuth (`--auth-issuer`): JWT access tokens accepted too.
    pub oauth: Option<Arc<OAuth>>,
    pub max_conns: usize,
    /// Connections one principal may hold (with `tokens` or `oauth`).
    pub per_principal: usize,
    /// Time to receive a request's headers, and separately its body.
    pub read_timeout: Duration,
    /// How long shutdown waits for open connections to finish their request.
    pub grace: Duration,
    /// A connection whose answer the client takes no bytes of for this long is closed.
    pub write_timeout: Duration,
    /// How often an idle `subscriptions/listen` stream gets a keep-alive ([`super::live`]).
    pub keep_alive: Duration,
}

struct HttpState<A: Hosted> {
    shared: Arc<Shared<A>>,
    tokens: Option<Arc<Tokens>>,
    oauth: Option<Arc<OAuth>>,
    loopback: bool,
    read_timeout: Duration,
    anonymous: Arc<[u8]>,
    /// LEGACY (dual-era, crate::legacy): the 2025-11-25 sessions.
    legacy: Arc<HttpLegacy>,
    /// Who holds the listener's connections ([`Shares::snapshot`] for metrics).
    shares: Arc<Shares>,
    keep_alive: Duration,
}

/// Serves HTTP on `listener` until shutdown, then lets open requests finish (up to the grace).
pub async fn serve_http<A: Hosted>(
    shared: Arc<Shared<A>>,
    listener: TcpListener,
    cfg: HttpConfig,
    shutdown: CancellationToken,
) {
    let loopback = listener
        .local_addr()
        .map(|a| a.ip().is_loopback())
        .unwrap_or(false);
    // AUTH (crate::auth): with an issuer, too, requests must authenticate. Then connections
    // no request has authenticated yet, and each principal's, have shares of the listener
    // (transport/share.rs); without, every request is the one anonymous principal.
    let st_tokens = cfg.tokens.is_some() || cfg.oauth.is_some();
    let shares = Shares::new(cfg.max_conns, st_tokens, cfg.per_principal, &shutdown);
    let legacy = HttpLegacy::new(shared.serves_resources());
    let state = Arc::new(HttpState {
        shared,
        tokens: cfg.tokens,
        oauth: cfg.oauth,
        loopback,
        read_timeout: cfg.read_timeout,
        anonymous: Arc::from(ANONYMOUS),
        legacy,
        shares: Arc::clone(&shares),
        keep_alive: cfg.keep_alive,
    });
    let app = Router::new().fallback(handle::<A>).with_state(state);
    let tracker = TaskTracker::new();
    // Without credentials on loopback, the user's own connections are the local user.
    let local = listener
        .local_addr()
        .ok()
        .filter(|_| loopback && !st_tokens);
    let mut uids = PeerUids::default();
    accept_gated(
        "http",
        &listener,
        cfg.max_conns,
        &shutdown,
        |peer| shares.admit(peer),
        |sock, peer, hold: Arc<Hold>| {
            let svc = TowerToHyperService::new(app.clone());
            let held = Arc::clone(&hold);
            let own =
                OwnUser(local.is_some_and(|l| uids.check(peer, l) == super::peer::Verdict::Same));
            let svc = hyper::service::service_fn(move |mut req| {
                req.extensions_mut().insert(Arc::clone(&held));
                req.extensions_mut().insert(own);
                // Counted in flight until hyper has taken the whole answer (an SSE stream too).
                let answering = held.answering();
                let answer = hyper::service::Service::call(&svc, req);
                async move {
                    let r = answer.await?;
                    Ok::<_, std::convert::Infallible>(r.map(|b| {
                        axum::body::Body::new(b.map_frame(move |f| {
                            let _ = &answering;
                            f
                        }))
                    }))
                }
            });
            let (read_timeout, write_timeout) = (cfg.read_timeout, cfg.write_timeout);
            tracker.spawn(async move {
                let _open = crate::metrics::metrics().connection(Transport::Http);
                // A client that sends requests and never reads the answers is closed after the
                // write timeout, as over TCP (hyper itself would wait on a full socket forever).
                let io = WriteTimeout::new(sock, Some(write_timeout));
                let conn = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(read_timeout)
                    .max_buf_size(64 * 1024)
                    .serve_connection(TokioIo::new(io), svc);
                let mut conn = std::pin::pin!(conn);
                // Shutdown, or room for a newcomer: closed at once when idle, else after the
                // answer being written.
                let end = tokio::select! {
                    r = conn.as_mut() => r,
                    () = hold.closing().cancelled() => {
                        conn.as_mut().graceful_shutdown();
                        conn.await
                    }
                };
                if let Err(e) = end {
                    tracing::debug!("http {peer}: {e}");
                }
                drop(hold);
            });
        },
    )
    .await;
    tracker.close();
    tokio::select! {
        _ = tracker.wait() => tracing::debug!("http: connections closed"),
        _ = tokio::time::sleep(cfg.grace) => tracing::warn!("http: connections still open after {:?}", cfg.grace),
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text,
    )
        .into_response()
}

async fn handle<A: Hosted>(State(st): State<Arc<HttpState<A>>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    // RFC 9112 §3.2: one Host (else 400); an absolute-form target's authority stands for it.
    let host_view = match super::strict::host_view(&parts) {
        Ok(h) => h,
        Err(bad) => return bad.into_response(),
    };
    let public = st.oauth.as_deref().map(OAuth::origin);
    if let Err(why) = super::strict::check_origin(&host_view, st.loopback, public) {
        tracing::info!("http: 403 ({why})");
        return plain(
            StatusCode::FORBIDDEN,
            "Forbidden: Host or Origin not allowed\n",
        );
    }
    // The booking page (crate::web): `GET /` and its files; same origin as `/mcp`.
    let signin = st.oauth.as_ref().and_then(|o| o.page.as_ref());
    if let Some(r) = crate::web::page(&parts.method, parts.uri.path(), &parts.headers, signin) {
        return r;
    }
    // AUTH (crate::auth): RFC 9728 protected-resource metadata.
    if let Some(r) = st
        .oauth
        .as_ref()
        .and_then(|o| o.well_known(parts.uri.path()))
    {
        return r;
    }
    // OPS (crate::ops): the load balancer's probe, before any credentials; the metrics, for
    // whoever may call /mcp.
    if parts.uri.path() == ops::HEALTH_PATH {
        return ops::healthz(&parts.method, st.shared.admin()).await;
    }
    if parts.uri.path() == ops::METRICS_PATH {
        let who = match caller(&st, &parts).await {
            Ok(who) => who,
            Err(r) => return r,
        };
        if let Some(over) = over_share(&parts, &who.principal) {
            return over;
        }
        return ops::metrics(&parts.method, &st.shares.snapshot().counts());
    }
    // CALENDAR (crate::calendar, super::feeds): the .ics feeds, for a bearer token as /mcp or
    // the key in a feed's URL.
    if let Some(route) = crate::calendar::Route::of(parts.uri.path()) {
        let (cals, tokens) = (st.shared.calendars(), st.tokens.as_deref());
        let who = match feeds::keyed(&parts, cals, tokens, st.oauth.is_some()) {
            Some(Ok(seated)) => seated,
            Some(Err(refused)) => return refused,
            None => match caller(&st, &parts).await {
                Ok(who) => who.principal,
                Err(r) => return r,
            },
        };
        if let Some(over) = over_share(&parts, &who) {
            return over;
        }
        let token = bearer(&parts.headers);
        let base = feeds::Base {
            public: st.oauth.as_deref().map(OAuth::origin),
            loopback: st.loopback,
        };
        return feeds::answer(cals, &parts, route, &who, token, tokens, base).await;
    }
    if parts.uri.path() != "/mcp" {
        return plain(
            StatusCode::NOT_FOUND,
            "Not found: the MCP endpoint is /mcp\n",
        );
    }
    if parts.method != Method::POST {
        // LEGACY (dual-era, crate::legacy): GET/DELETE naming a 2025-11-25 session, for its
        // owner; naming one without a valid token: the 401, as for a POST (not the 405).
        match caller(&st, &parts).await {
            Ok(who) => {
                let early = st
                    .legacy
                    .early(&parts.method, &parts.headers, &who.principal);
                if let Some(r) = early {
                    return r;
                }
            }
            Err(r) if crate::legacy::http::names_session(&parts.method, &parts.headers) => {
                return r
            }
            Err(_) => {}
        }
        let mut r = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "Method not allowed: POST one JSON-RPC message\n",
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return r;
    }
    // Anything but JSON could be a page's cross-origin "simple" request (no preflight).
    if !super::strict::is_json(&parts.headers) {
        return plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported media type: POST /mcp needs Content-Type: application/json\n",
        );
    }
    let (principal, scopes) = match caller(&st, &parts).await {
        Ok(who) => (who.principal, who.scopes),
        Err(r) => return r,
    };
    if let Some(over) = over_share(&parts, &principal) {
        return over;
    }
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let body = if declared.is_some_and(|n| n > MAX_MESSAGE as u64) {
        None
    } else {
        match tokio::time::timeout(st.read_timeout, Limited::new(body, MAX_MESSAGE).collect()).await
        {
            Err(_) => {
                return plain(
                    StatusCode::REQUEST_TIMEOUT,
                    "Request timeout: body too slow\n",
                )
            }
            Ok(Ok(b)) => Some(b.to_bytes().to_vec()),
            Ok(Err(e))
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some() =>
            {
                None
            }
            Ok(Err(e)) => {
                tracing::debug!("http: body: {e}");
                return plain(StatusCode::BAD_REQUEST, "Bad request: unreadable body\n");
            }
        }
    };
    let Some(body) = body else {
        // The engine writes the id-less "message too large" error; the status says why.
        let mut conn = st.shared.connection();
        let h = conn.handle(Msg::TooLong, &principal).await;
        return json(StatusCode::PAYLOAD_TOO_LARGE, conn.answer(&h).to_vec());
    };
    // AUTH (crate::auth): a tool that changes bookings needs the write scope.
    if let (Some(oauth), Some(scopes)) = (&st.oauth, &scopes) {
        if let Some(r) = oauth.check_scope(scopes, &body) {
            return r;
        }
    }
    // LEGACY (dual-era, crate::legacy): 2025-11-25 traffic (initialize, or a live session).
    let run = st.shared.run_line(Arc::clone(&principal));
    if let Some(r) = st.legacy.post(&parts.headers, &body, &principal, run).await {
        return r;
    }
    let h = |name: &str| {
        parts
            .headers
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    // Every Mcp-Param-* header (SEP-2243), for the engine to check against x-mcp-header
    // arguments; header names arrive lower-cased, the engine matches them case-insensitively.
    let params = parts
        .headers
        .iter()
        .filter_map(|(k, v)| {
            let name = k.as_str().strip_prefix("mcp-param-")?;
            Some((
                name.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            ))
        })
        .collect();
    let headers = OwnedHeaders {
        version: h("mcp-protocol-version"),
        method: h("mcp-method"),
        name: h("mcp-name"),
        params,
    };
    let mut conn = st.shared.connection();
    let handled = conn
        .handle(
            Msg::Http {
                body: &body,
                headers: &headers,
            },
            &principal,
        )
        .await;
    // A subscriptions/listen stream: the response stays open (transport/live.rs).
    if handled.listening {
        let ack = conn.answer(&handled).to_vec();
        let closing = match parts.extensions.get::<Arc<Hold>>() {
            Some(hold) => hold.closing().clone(),
            None => CancellationToken::new(),
        };
        let live = st.shared.live();
        return super::live::stream(conn, live, &body, &ack, st.keep_alive, closing);
    }
    let bytes = conn.answer(&handled);
    if !handled.responded {
        if handled.status >= 400 {
            return plain(StatusCode::INTERNAL_SERVER_ERROR, "Internal error\n");
        }
        return StatusCode::ACCEPTED.into_response();
    }
    let status = StatusCode::from_u16(handled.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if !bytes.contains(&b'\n') {
        return json(status, bytes.to_vec());
    }
    let mut sse = Vec::with_capacity(bytes.len() + 64);
    for line in bytes.split(|b| *b == b'\n') {
        sse.extend_from_slice(b"event: message\ndata: ");
        sse.extend_from_slice(line);
        sse.extend_from_slice(b"\n\n");
    }
    let headers = [
        (header::CONTENT_TYPE, "text/event-stream"),
        (header::CACHE_CONTROL, "no-cache"),
        (header::HeaderName::from_static("x-accel-buffering"), "no"),
    ];
    (StatusCode::OK, headers, sse).into_response()
}

/// Who sent a request: the principal, and the scopes of an OAuth access token (None: a
/// static token or anonymous, which every tool accepts).
struct Caller {
    principal: Arc<[u8]>,
    scopes: Option<Vec<String>>,
}

/// Counts the request's connection against `principal` from now on, within its share
/// (transport/share.rs); the 503 to answer instead when that share is full.
fn over_share(parts: &axum::http::request::Parts, principal: &Arc<[u8]>) -> Option<Response> {
    let over = parts
        .extensions
        .get::<Arc<Hold>>()?
        .charge(principal)
        .err()?;
    tracing::debug!("http: 503 ({over:?})");
    Some(over.into_response())
}

/// The caller named by the `Authorization` header: a `--tokens` token, else (with
/// `--auth-issuer`) a valid access token; no `--tokens` and no issuer: the local user on the
/// server's own user's connections ([`OwnUser`]), else anonymous. Else the 401.
async fn caller<A: Hosted>(
    st: &HttpState<A>,
    parts: &axum::http::request::Parts,
) -> Result<Caller, Response> {
    let token = bearer(&parts.headers);
    let fixed = |principal: &[u8], operator| Caller {
        principal: Arc::from(seat(principal, operator, Via::Http)),
        scopes: None,
    };
    let Some(tokens) = &st.tokens else {
        if st.oauth.is_none() {
            let own = parts.extensions.get::<OwnUser>().is_some_and(|o| o.0);
            return Ok(fixed(
                if own { LOCAL_PRINCIPAL } else { &st.anonymous },
                false,
            ));
        }
        return oauth_caller(st, token).await;
    };
    if let Some((p, operator)) = token.and_then(|t| tokens.caller(t)) {
        return Ok(fixed(p, operator));
    }
    if st.oauth.is_some() {
        return oauth_caller(st, token).await;
    }
    let mut r = plain(
        StatusCode::UNAUTHORIZED,
        "Unauthorized: send Authorization: Bearer <token>\n",
    );
    r.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    Err(r)
}

/// AUTH (crate::auth): the caller a JWT access token names.
async fn oauth_caller<A: Hosted>(
    st: &HttpState<A>,
    token: Option<&str>,
) -> Result<Caller, Response> {
    let Some(oauth) = &st.oauth else {
        return Err(plain(StatusCode::UNAUTHORIZED, "Unauthorized\n"));
    };
    match oauth.authenticate(token).await {
        Verdict::Subject(s) => Ok(Caller {
            principal: Arc::from(seat(&s.principal, oauth.is_operator(&s.scopes), Via::Http)),
            scopes: Some(s.scopes),
        }),
        Verdict::Refused(r) => Err(r),
    }
}

fn json(status: StatusCode, bytes: Vec<u8>) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response()
}

fn bearer(h: &HeaderMap) -> Option<&str> {
    let v = h.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Binds an HTTP listener, printing `redmark: listening http ADDR` on stderr.
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, String> {
    let l = super::listen(addr).map_err(|e| format!("cannot listen on http {addr}: {e}"))?;
    let local = l.local_addr().map_err(|e| e.to_string())?;
    eprintln!("redmark: listening http {local}");
    if !local.ip().is_loopback() {
        tracing::warn!("http {local} is not loopback: put TLS in front of it");
    }
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hm(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn bearer_tokens() {
        assert_eq!(bearer(&hm(&[("authorization", "Bearer abc")])), Some("abc"));
        assert_eq!(
            bearer(&hm(&[("authorization", "bearer  abc ")])),
            Some("abc")
        );
        assert_eq!(bearer(&hm(&[("authorization", "Basic abc")])), None);
    }
}
