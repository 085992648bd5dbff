//! What the booking page's browser tests set up on the server: the day they book on, the
//! page's address, bookings made over plain HTTP or from the page's tool form, and which rooms
//! the server itself says are free.

use std::net::SocketAddr;

use serde_json::{json, Value};

use crate::browser::Browser;
use crate::server::{post_mcp, tool_call, Server};

/// The day every test books on: far enough ahead never to have started.
pub const DAY: &str = "2099-09-17";

/// The page at [`DAY`] on the server's first HTTP address.
pub fn page_url(s: &Server) -> String {
    format!("http://{}/?day={DAY}", s.http[0])
}

/// The rooms the server itself says are free at `hour` of [`DAY`].
pub fn free_rooms(addr: SocketAddr, hour: u8) -> Vec<String> {
    free_rooms_on(addr, DAY, hour)
}

/// The rooms the server itself says are free at `hour` of `day`.
pub fn free_rooms_on(addr: SocketAddr, day: &str, hour: u8) -> Vec<String> {
    free_rooms_for(addr, json!({"day": day, "hour": hour}))
}

/// The rooms the server itself says are free for all of the span in `args` (day, start,
/// minutes).
pub fn free_rooms_for(addr: SocketAddr, args: Value) -> Vec<String> {
    let r = post_mcp(addr, &tool_call(1, "list_rooms", args, true), &[]);
    let rooms = r.json()["result"]["structuredContent"]["rooms"].clone();
    rooms
        .as_array()
        .unwrap_or_else(|| panic!("no rooms in {}", String::from_utf8_lossy(&r.body)))
        .iter()
        .filter(|x| x["free"] == true)
        .filter_map(|x| x["id"].as_str().map(String::from))
        .collect()
}

/// Books with `args` over plain HTTP, as the holder of `token` (anonymous: the page's own
/// principal on a server without tokens).
pub fn book(addr: SocketAddr, token: Option<&str>, args: Value) {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", a.as_str())).collect();
    let r = post_mcp(
        addr,
        &tool_call(9, "book_room", args.clone(), true),
        &headers,
    );
    assert_eq!(
        r.json()["result"]["structuredContent"]["booked"],
        true,
        "{args}: {}",
        String::from_utf8_lossy(&r.body)
    );
}

/// Calls book_room from the tool form with `hour` and the room in words.
pub fn book_in_words(b: &Browser, hour: u8, hint: &str) {
    b.js(
        "const s = document.getElementById('tool'); s.value = 'book_room';\
         s.dispatchEvent(new Event('change'));",
        json!([]),
    );
    b.fill(
        &b.find("#tool-args [data-field=hour] input"),
        &hour.to_string(),
    );
    b.fill(&b.find("#tool-args [data-field=room_hint] input"), hint);
    b.click(&b.find("#call"));
}

/// Books `room` at `hour` of [`DAY`] over plain HTTP (the page's own principal, anonymous).
pub fn book_over_http(addr: SocketAddr, hour: u8, room: &str) {
    book(
        addr,
        None,
        json!({"day": DAY, "hour": hour, "room_id": room}),
    );
}
