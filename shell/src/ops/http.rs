//! The operator's two paths on `--http`: `/healthz` for a load balancer (no credentials: it
//! says only whether the server and its store answer) and `/metrics` for Prometheus (read by
//! whoever may call `/mcp`, checked by the caller: `transport/http.rs`).

use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use super::health;
use crate::metrics;
use crate::store::Admin;

/// Where the health check is served.
pub const HEALTH_PATH: &str = "/healthz";
/// Where the metrics are served.
pub const METRICS_PATH: &str = "/metrics";

/// `/healthz`: 200 `{"status":"ok"}` when the store answers a read within
/// [`health::HEALTH_TIMEOUT`], else 503 with the reason (never a booking).
pub async fn healthz(method: &Method, store: Option<&dyn Admin>) -> Response {
    if let Some(r) = not_get(method) {
        return r;
    }
    let (status, body) = match health::check(store).await {
        Ok(()) => (StatusCode::OK, r#"{"status":"ok"}"#.to_owned()),
        Err(why) => {
            tracing::debug!("/healthz: 503 ({why})");
            let why = serde_json::Value::from(why);
            (
                StatusCode::SERVICE_UNAVAILABLE,
                format!(r#"{{"status":"unavailable","reason":{why}}}"#),
            )
        }
    };
    let headers = [
        (header::CONTENT_TYPE, "application/json"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    (status, headers, body).into_response()
}

/// `/metrics`, for a caller already let through: the text exposition format 0.0.4, with how
/// the listener that answers shares its connections.
pub fn metrics(method: &Method, shares: &metrics::ListenerShares) -> Response {
    if let Some(r) = not_get(method) {
        return r;
    }
    let headers = [
        (header::CONTENT_TYPE, metrics::CONTENT_TYPE),
        (header::CACHE_CONTROL, "no-store"),
    ];
    let mut text = metrics::metrics().render();
    shares.render(&mut text);
    (StatusCode::OK, headers, text).into_response()
}

/// 405 for anything but GET and HEAD.
fn not_get(method: &Method) -> Option<Response> {
    if method == Method::GET || method == Method::HEAD {
        return None;
    }
    let mut r = (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "Method not allowed: GET\n",
    )
        .into_response();
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    Some(r)
}
