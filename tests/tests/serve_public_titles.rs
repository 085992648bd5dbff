//! Who sees what through `redmark serve --http` with two token principals: a floor file with
//! `public_titles = true` shows Alice's title to Bob on `day_schedule`; one without shows him
//! only the booked time. Alice sees her own either way; neither names her.

use std::net::SocketAddr;
use std::path::Path;

use redmark_tests::server::{post_mcp, tool_call, Server, TempDir};
use serde_json::{json, Value};

const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-0123456789ab";
const DAY: &str = "2099-09-17";
const TITLE: &str = "Design review";

const ROOMS: &str = r#"
[[room]]
id = "atrium"
name = "The Atrium"
seats = 24

[[room]]
id = "nook"
name = "The Nook"
seats = 4
"#;

/// A server of the two-room floor (`head` before its rooms) with Alice and Bob as principals.
fn serve(data: &Path, head: &str) -> Server {
    let tokens = data.join("tokens.toml");
    std::fs::write(&tokens, format!("alice = \"{ALICE}\"\nbob = \"{BOB}\"\n")).unwrap();
    let rooms = data.join("rooms.toml");
    std::fs::write(&rooms, format!("{head}{ROOMS}")).unwrap();
    Server::start(
        &[
            "--http",
            "127.0.0.1:0",
            "--tokens",
            tokens.to_str().unwrap(),
            "--rooms",
            rooms.to_str().unwrap(),
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

/// The atrium on `day_schedule` as the holder of `token`, and the answer's text.
fn atrium_day(addr: SocketAddr, token: &str) -> (Value, String) {
    let r = call(addr, token, "day_schedule", json!({"day": DAY}));
    let atrium = r["structuredContent"]["rooms"][0].clone();
    assert_eq!(atrium["id"], "atrium", "{r}");
    let text = r["content"][0]["text"].as_str().unwrap().to_owned();
    (atrium, text)
}

/// Alice books the atrium 09:00–09:45 as "Design review" on a server with floor file `head`;
/// returns the server and what Bob, then Alice, see of the atrium's day.
fn seen(tag: &str, head: &str) -> [(Value, String); 2] {
    let data = TempDir::new(tag);
    let s = serve(data.path(), head);
    let addr = s.http[0];
    let args =
        json!({"day": DAY, "start": "9:00", "minutes": 45, "room_id": "atrium", "title": TITLE});
    let r = call(addr, ALICE, "book_room", args);
    assert_eq!(r["structuredContent"]["booked"], true, "{r}");
    [atrium_day(addr, BOB), atrium_day(addr, ALICE)]
}

#[test]
fn day_schedule_shows_others_titles_only_on_a_floor_that_makes_them_public() {
    let run = json!([{"start": "09:00", "end": "09:45"}]);
    let meeting =
        |yours: bool| json!([{"start": "09:00", "end": "09:45", "title": TITLE, "yours": yours}]);

    let [(bob, bob_text), (alice, alice_text)] = seen("titles-private", "");
    assert_eq!(bob["booked"], run, "{bob}");
    assert!(bob.get("meetings").is_none(), "{bob}");
    assert!(!bob_text.contains(TITLE), "{bob_text}");
    assert_eq!(alice["meetings"], meeting(true), "{alice}");
    assert!(
        alice_text.contains("09:00–09:45 \"Design review\" (yours)"),
        "{alice_text}"
    );

    let [(bob, bob_text), (alice, _)] = seen("titles-public", "public_titles = true\n");
    assert_eq!(bob["booked"], run, "{bob}");
    assert_eq!(bob["meetings"], meeting(false), "{bob}");
    assert!(
        bob_text.contains("09:00–09:45 \"Design review\"\n"),
        "{bob_text}"
    );
    assert!(
        !bob_text.contains("alice"),
        "the organiser stays private: {bob_text}"
    );
    assert_eq!(alice["meetings"], meeting(true), "{alice}");
}
