//! A 2025-11-25 host built on the official TypeScript SDK 1.x (`@modelcontextprotocol/sdk`,
//! pinned by `scripts/legacy-peers.sh`) against `redmark serve` over stdio and Streamable HTTP:
//! the seed exchange with the question pushed as a real `elicitation/create`.

use redmark_tests::peers::{
    assert_booked_studio_b, assert_nothing_booked, is_free, typescript_client,
};
use redmark_tests::server::{redmark_bin, Server, TempDir};
use serde_json::Value;

/// The TypeScript host over stdio, answering `answer`, on a fresh data folder.
fn over_stdio(answer: &str) -> Value {
    let data = TempDir::new("legacy-ts");
    let bin = redmark_bin().display().to_string();
    let dir = data.path().display().to_string();
    typescript_client(&[&bin, "serve", "--data", &dir], answer, "2099-09-17")
}

#[test]
#[cfg_attr(
    not(legacy_peers),
    ignore = "needs the legacy SDK peers (scripts/legacy-peers.sh installs them)"
)]
fn typescript_sdk_over_stdio_books_studio_b() {
    assert_booked_studio_b(&over_stdio("accept"));
}

#[test]
#[cfg_attr(
    not(legacy_peers),
    ignore = "needs the legacy SDK peers (scripts/legacy-peers.sh installs them)"
)]
fn typescript_sdk_over_stdio_decline_and_cancel_book_nothing() {
    assert_nothing_booked(&over_stdio("decline"));
    assert_nothing_booked(&over_stdio("cancel"));
}

#[test]
#[cfg_attr(
    not(legacy_peers),
    ignore = "needs the legacy SDK peers (scripts/legacy-peers.sh installs them)"
)]
fn typescript_sdk_without_elicitation_is_told_room_id() {
    let out = over_stdio("none");
    assert_eq!(out["asked"].as_array().map(Vec::len), Some(0), "{out}");
    assert_eq!(out["book"]["isError"], true, "{out}");
    let text = out["book"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("with room_id set to their pick"), "{out}");
    assert!(is_free(&out["rooms"], "studio-b"), "{out}");
}

#[test]
#[cfg_attr(
    not(legacy_peers),
    ignore = "needs the legacy SDK peers (scripts/legacy-peers.sh installs them)"
)]
fn typescript_sdk_over_http_books_studio_b_and_decline_books_nothing() {
    let data = TempDir::new("legacy-ts-http");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let url = format!("http://{}/mcp", s.http[0]);
    assert_nothing_booked(&typescript_client(&[&url], "decline", "2099-09-17"));
    assert_booked_studio_b(&typescript_client(&[&url], "accept", "2099-09-17"));
}
