//! `subscriptions/listen`: params, the bound on URIs, and the exact bytes of every message.
//!
//! `subscriptions/listen`: the params checked, the bound on URIs, and the exact bytes of the
//! acknowledgement, an update and the two closes.

use super::Listen;
use crate::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
use crate::engine::{Config, Context, Engine, ServerInfo};
use crate::limits::{MAX_LISTEN_URIS, OUT};
use crate::seal::{Key, KeyRing};

fn engine() -> Engine<BookingApp<'static, MemStore<8>>> {
    let info = ServerInfo {
        name: "redmark",
        version: "1.0.0",
        instructions: None,
    };
    let app = BookingApp::new(DEFAULT_FLOOR, MemStore::<8>::new(), info);
    let key = Key::new(1, b"an example key of 32 bytes or so").unwrap();
    Engine::new(app, KeyRing::new(key), Config::default())
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn listen(notifications: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{{{META},"notifications":{notifications}}}}}"#
    )
}

/// The answer to `msg`, and whether it opened a stream.
fn answer(msg: &str) -> (String, bool) {
    let cx = Context {
        now: 1_800_000_000,
        principal: b"alice",
        entropy: [1; 8],
        access: crate::Access::USER,
    };
    let mut out = [0u8; OUT];
    let h = engine().handle(msg.as_bytes(), &cx, &mut out);
    (
        String::from_utf8(out[..h.len].to_vec()).unwrap(),
        h.listening,
    )
}

#[test]
fn a_listen_is_acknowledged_with_its_uris_and_id() {
    let (a, open) = answer(&listen(
        r#"{"resourceSubscriptions":["redmark://rooms/atrium/2026-12-07"],"toolsListChanged":true}"#,
    ));
    assert!(open);
    assert_eq!(
        a,
        r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"resourceSubscriptions":["redmark://rooms/atrium/2026-12-07"]},"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}"#
    );
}

#[test]
fn discover_says_resources_can_be_subscribed_to() {
    let msg =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{META}}}}}"#);
    let (a, open) = answer(&msg);
    assert!(!open);
    assert!(a.contains(r#""resources":{"subscribe":true}"#), "{a}");
}

#[test]
fn bad_params_are_refused_and_open_nothing() {
    for (notifications, says) in [
        ("[]", "params.notifications must be an object"),
        (r#"{"toolsListChanged":1}"#, "must be booleans"),
        (r#"{"resourceSubscriptions":"x"}"#, "must be an array"),
        (r#"{"resourceSubscriptions":[1]}"#, "must be an array"),
        (
            r#"{"resourceSubscriptions":["redmark://rooms/nowhere/2026-12-07"]}"#,
            r#""code":-32602,"message":"Resource not found","data":{"uri":"redmark://rooms/nowhere/2026-12-07"}"#,
        ),
    ] {
        let (a, open) = answer(&listen(notifications));
        assert!(!open, "{notifications}");
        assert!(a.contains(says), "{notifications}: {a}");
        assert!(a.contains(r#""id":7"#), "{a}");
    }
    let missing = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{{{META}}}}}"#
    );
    assert!(answer(&missing)
        .0
        .contains("params.notifications must be an object"));
}

#[test]
fn more_uris_than_the_bound_are_refused_with_their_own_error() {
    let uris = |n: usize| {
        let one = r#""redmark://rooms/atrium/2026-12-07""#;
        format!(
            r#"{{"resourceSubscriptions":[{}]}}"#,
            [one; 64][..n].join(",")
        )
    };
    let (a, open) = answer(&listen(&uris(MAX_LISTEN_URIS)));
    assert!(open, "{a}");
    let (a, open) = answer(&listen(&uris(MAX_LISTEN_URIS + 1)));
    assert!(!open);
    assert_eq!(
        a,
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"error":{{"code":-32602,"message":"Too many resourceSubscriptions","data":{{"max":{MAX_LISTEN_URIS}}}}}}}"#
        )
    );
}

#[test]
fn the_host_reads_back_the_id_and_uris() {
    let msg = listen(
        r#"{"resourceSubscriptions":["redmark://rooms/atrium/2026-12-07","redmark:\/\/rooms\/studio-b\/2026-12-08"]}"#,
    );
    let l = Listen::read(msg.as_bytes()).unwrap();
    assert_eq!(l.id(), b"7");
    let mut uris = std::vec::Vec::new();
    l.for_each_uri(|u| uris.push(String::from(u)));
    assert_eq!(
        uris,
        [
            "redmark://rooms/atrium/2026-12-07",
            "redmark://rooms/studio-b/2026-12-08"
        ]
    );
    let other = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#);
    assert!(Listen::read(other.as_bytes()).is_none());
}

#[test]
fn an_update_and_the_closes_carry_the_stream_id() {
    let e = engine();
    let mut out = [0u8; 512];
    let sub = br#""s-1""#;
    let n = e
        .write_resource_updated(sub, "redmark://rooms/atrium/2026-12-07", &mut out)
        .unwrap();
    assert_eq!(
        &out[..n],
        br#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"redmark://rooms/atrium/2026-12-07","_meta":{"io.modelcontextprotocol/subscriptionId":"s-1"}}}"#
    );
    let n = e.write_listen_closed(sub, &mut out).unwrap();
    assert_eq!(
        &out[..n],
        br#"{"jsonrpc":"2.0","id":"s-1","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"s-1","io.modelcontextprotocol/serverInfo":{"name":"redmark","version":"1.0.0"}}}}"#
    );
    let n = e.write_listen_cancelled(sub, &mut out).unwrap();
    assert_eq!(
        &out[..n],
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s-1","reason":"the server ended the subscription"}}"#
    );
    // Not an id: nothing written, no panic.
    for bad in [&b"{}"[..], b"", b"\"unterminated", b"null"] {
        assert!(e.write_resource_updated(bad, "x", &mut out).is_err());
    }
    assert!(e.write_resource_updated(sub, "x", &mut out[..10]).is_err());
}
