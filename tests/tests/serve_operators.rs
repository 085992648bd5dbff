//! Operators through `redmark serve --http --tokens FILE`: Olga's token is under `[operators]`,
//! Ulla's is a plain user's. Olga cancels Ulla's booking, and `booking_trail` tells her who made
//! it and who cancelled it, over http on which instance; Ulla may neither cancel another's
//! booking nor read a trail. Olga reads the title of Ulla's private meeting on `day_schedule`.

use std::net::SocketAddr;
use std::path::Path;

use redmark_tests::server::{post_mcp, tool_call, Server, TempDir};
use serde_json::{json, Value};

const OLGA: &str = "olga-token-0123456789ab";
const ULLA: &str = "ulla-token-0123456789ab";
const VERA: &str = "vera-token-0123456789ab";
const DAY: &str = "2099-09-17";

/// A server of the default floor whose tokens file makes Olga an operator.
fn serve(data: &Path) -> Server {
    let tokens = data.join("tokens.toml");
    let file = format!("ulla = \"{ULLA}\"\nvera = \"{VERA}\"\n\n[operators]\nolga = \"{OLGA}\"\n");
    std::fs::write(&tokens, file).unwrap();
    Server::start(
        &[
            "--http",
            "127.0.0.1:0",
            "--tokens",
            tokens.to_str().unwrap(),
        ],
        data,
    )
}

/// The result of `tool` with `args`, called as the holder of `token`.
fn call(addr: SocketAddr, token: &str, tool: &str, args: Value) -> Value {
    let auth = format!("Bearer {token}");
    let r = post_mcp(
        addr,
        &tool_call(1, tool, args, false),
        &[("Authorization", &auth)],
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["result"].clone()
}

fn text(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap_or("")
}

#[test]
fn an_operator_cancels_a_users_booking_and_the_trail_says_so_a_user_may_not() {
    let data = TempDir::new("operators");
    let s = serve(data.path());
    let addr = s.http[0];
    let args = json!({"day": DAY, "start": "9:00", "room_id": "atrium", "title": "1:1"});
    let r = call(addr, ULLA, "book_room", args);
    assert_eq!(r["structuredContent"]["booked"], true, "{r}");
    let id = r["structuredContent"]["booking"]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // Another plain user can neither cancel it nor read its trail.
    let r = call(addr, VERA, "cancel_booking", json!({"booking_id": id}));
    assert_eq!(r["isError"], true, "{r}");
    let r = call(addr, VERA, "booking_trail", json!({"booking_id": id}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("operators only"), "{r}");
    // Nor can its own holder read the trail.
    let r = call(addr, ULLA, "booking_trail", json!({"booking_id": id}));
    assert_eq!(r["isError"], true, "{r}");

    // The operator reads the private title, then cancels the booking.
    let r = call(addr, OLGA, "day_schedule", json!({"day": DAY}));
    assert!(text(&r).contains("\"1:1\""), "{r}");
    let r = call(addr, OLGA, "cancel_booking", json!({"booking_id": id}));
    assert_eq!(r["isError"], false, "{r}");
    let r = call(
        addr,
        VERA,
        "book_room",
        json!({"day": DAY, "start": "9:00", "room_id": "atrium"}),
    );
    assert_eq!(
        r["structuredContent"]["booked"], true,
        "the room is free again: {r}"
    );

    let r = call(addr, OLGA, "booking_trail", json!({"booking_id": id}));
    assert_eq!(r["isError"], false, "{r}");
    let trail = text(&r);
    let instance = format!("on instance {}", s.pid());
    let steps: Vec<&str> = trail.split("; ").collect();
    assert_eq!(steps.len(), 2, "{trail}");
    assert!(steps[0].starts_with(&format!("{id}: made by ")), "{trail}");
    assert!(!steps[0].contains("operator"), "{trail}");
    assert!(steps[1].starts_with("cancelled by an operator "), "{trail}");
    for step in steps {
        assert!(step.contains(" over http "), "{trail}");
        assert!(step.contains(&instance), "{trail}");
    }
}
