//! `list_bookings` through the real `redmark serve` on redb: the caller's bookings, a page at a
//! time through the store's pending reads, the same after a kill -9 and a restart.

use redmark_tests::server::{tool_call, LineClient, Server, TempDir};
use serde_json::{json, Value};

const DAY: &str = "2099-03-02";

/// Every page of the caller's `list_bookings` (with `extra` arguments), its ids in order.
fn pages(addr: std::net::SocketAddr, extra: &Value) -> Vec<Vec<String>> {
    let mut c = LineClient::tcp(addr);
    let mut args = extra.clone();
    let mut out = Vec::new();
    for id in 1.. {
        assert!(id < 100, "the pages never end");
        let r = c.request(&tool_call(id, "list_bookings", args.clone(), false));
        assert_eq!(r["result"]["isError"], false, "{r}");
        let s = &r["result"]["structuredContent"];
        let ids = s["bookings"].as_array().unwrap_or_else(|| panic!("{r}"));
        out.push(
            ids.iter()
                .map(|b| b["id"].as_str().unwrap().to_owned())
                .collect(),
        );
        let Some(next) = s["next"].as_str() else {
            return out;
        };
        args["after"] = json!(next);
    }
    unreachable!()
}

#[test]
fn your_bookings_page_by_page_and_after_a_kill_9() {
    let data = TempDir::new("list-bookings");
    let mut server = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
    let mut c = LineClient::tcp(server.tcp[0]);
    let mut booked = Vec::new();
    // Eleven hours of The Nook, booked latest first: the list is earliest first.
    for (i, hour) in (8..19).rev().enumerate() {
        let args = json!({"day": DAY, "hour": hour, "room_id": "nook"});
        let r = c.request(&tool_call(i as u64 + 1, "book_room", args, false));
        let id = r["result"]["structuredContent"]["booking"]["id"].as_str();
        booked.push(id.unwrap_or_else(|| panic!("booked: {r}")).to_owned());
    }
    booked.reverse();
    let before = pages(server.tcp[0], &json!({"day": DAY}));
    assert!(before.len() > 1, "more than one page: {before:?}");
    assert_eq!(before.concat(), booked);
    assert_eq!(pages(server.tcp[0], &json!({})).concat(), booked);
    drop(c);
    server.kill9();
    let restarted = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
    assert_eq!(pages(restarted.tcp[0], &json!({"day": DAY})), before);
    let r = LineClient::tcp(restarted.tcp[0]).request(&tool_call(
        1,
        "list_bookings",
        json!({"day": "2099-03-03"}),
        false,
    ));
    assert_eq!(
        r["result"]["content"][0]["text"], "You have no bookings on 2099-03-03.",
        "{r}"
    );
}
