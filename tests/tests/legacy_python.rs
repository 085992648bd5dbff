//! A 2025-11-25 host built on the official Python SDK 1.x (`mcp`, pinned by
//! `scripts/legacy-peers.sh`) against `redmark serve`: `initialize`, then the seed exchange with
//! the question pushed as a real `elicitation/create` (the dual-era bridge, `shell/src/legacy/`).

use redmark_tests::peers::{assert_booked_studio_b, assert_nothing_booked, is_free, python_client};
use redmark_tests::server::{redmark_bin, Server, TempDir};
use serde_json::Value;

/// The Python host over stdio, answering `answer`, on a fresh data folder.
fn over_stdio(answer: &str) -> Value {
    let data = TempDir::new("legacy-py");
    let bin = redmark_bin();
    let dir = data.path().display().to_string();
    let bin = bin.display().to_string();
    python_client(
        &["stdio", &bin, "serve", "--data", &dir],
        answer,
        "2099-09-17",
    )
}

#[test]
#[cfg_attr(
    not(legacy_peers),
    ignore = "needs the legacy SDK peers (scripts/legacy-peers.sh installs them)"
)]
fn python_sdk_over_stdio_books_studio_b() {
    assert_booked_studio_b(&over_stdio("accept"));
}

#[test]
#[cfg_attr(
    not(legacy_peers),
    ignore = "needs the legacy SDK peers (scripts/legacy-peers.sh installs them)"
)]
fn python_sdk_over_stdio_decline_books_nothing() {
    assert_nothing_booked(&over_stdio("decline"));
}

#[test]
#[cfg_attr(
    not(legacy_peers),
    ignore = "needs the legacy SDK peers (scripts/legacy-peers.sh installs them)"
)]
fn python_sdk_over_stdio_cancel_books_nothing() {
    assert_nothing_booked(&over_stdio("cancel"));
}

/// A host without an elicitation callback declares no `elicitation`: it is asked nothing and
/// gets what a 2026-07-28 client without the capability gets, the candidates and `room_id`
/// to call again with (a tool error the model reads), nothing booked.
#[test]
#[cfg_attr(
    not(legacy_peers),
    ignore = "needs the legacy SDK peers (scripts/legacy-peers.sh installs them)"
)]
fn python_sdk_without_elicitation_is_told_room_id() {
    let out = over_stdio("none");
    assert_eq!(out["asked"].as_array().map(Vec::len), Some(0), "{out}");
    assert_eq!(out["book"]["isError"], true, "{out}");
    let text = out["book"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("with room_id set to their pick"), "{out}");
    assert!(is_free(&out["rooms"], "studio-b"), "{out}");
}

/// The Python host over Streamable HTTP (a 2025-11-25 session; the question rides the POST's
/// SSE stream), answering `answer`.
fn over_http(answer: &str) -> Value {
    let data = TempDir::new("legacy-py-http");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let url = format!("http://{}/mcp", s.http[0]);
    python_client(&["http", &url], answer, "2099-09-17")
}

#[test]
#[cfg_attr(
    not(legacy_peers),
    ignore = "needs the legacy SDK peers (scripts/legacy-peers.sh installs them)"
)]
fn python_sdk_over_http_books_studio_b() {
    assert_booked_studio_b(&over_http("accept"));
}

#[test]
#[cfg_attr(
    not(legacy_peers),
    ignore = "needs the legacy SDK peers (scripts/legacy-peers.sh installs them)"
)]
fn python_sdk_over_http_decline_and_cancel_book_nothing() {
    assert_nothing_booked(&over_http("decline"));
    assert_nothing_booked(&over_http("cancel"));
}
