//! The door-panel firmware under QEMU, on every board (`lm3s6965evb`, Cortex-M3;
//! `microbit`, nRF51 Cortex-M0): the same tests, one module per board, each driving the
//! board's emulated UART0 exactly as a stdio client drives `redmark serve`: one JSON-RPC
//! message per line.
//!
//! Needs `qemu-system-arm` and the `thumbv7m-none-eabi` and `thumbv6m-none-eabi` targets;
//! fails (does not skip) without them. Every wait is bounded; every QEMU started is killed by
//! its `Panel`.

use std::io::Write;
use std::thread;
use std::time::Duration;

use redmark_tests::qemu::rpc::{
    accept, big_room, book_exact, boot_with_test_time, call, form_caps, parse, request, rpc,
    state_of,
};
use redmark_tests::qemu::{firmware, stack_high_water, Board, Build, Panel, LM3S6965EVB, MICROBIT};
use redmark_tests::server::meta;
use serde_json::json;

const VERSION: &str = "2026-07-28";
/// The firmware's line buffer (boards/panel/src/lib.rs LINE_MAX).
const LINE_MAX: usize = 2048;
/// The stack budget, bytes.
const STACK_BUDGET: usize = 8 * 1024;

/// Every test below, for one board, whose booking store holds `$holds` bookings.
macro_rules! panel_tests {
    ($board:expr, $holds:expr) => {
        const BOARD: Board = $board;
        /// Bookings the board's store holds (boards/flash-store `FlashStore::capacity`).
        const HOLDS: i64 = $holds;

        /// A panel booted and told the test time, as its host would.
        fn boot() -> Panel {
            boot_with_test_time(BOARD)
        }

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn discover_answers_with_the_panel_identity_and_nothing_else_on_the_uart() {
    let mut p = boot();
    let r = rpc(
        &mut p,
        1,
        &request(1, "server/discover", json!({"_meta": meta(json!({}))})),
    );
    assert_eq!(r["result"]["supportedVersions"], json!([VERSION]));
    // A panel serves no resource and follows nothing (its core is built without `resources`).
    assert_eq!(r["result"]["capabilities"], json!({"tools": {}}), "{r}");
    assert_eq!(
        r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "redmark-panel"
    );
    let r = rpc(
        &mut p,
        2,
        &request(2, "tools/list", json!({"_meta": meta(json!({}))})),
    );
    let names: Vec<_> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["book_room", "cancel_booking", "list_rooms"]);
    // Nor are the resource methods and `subscriptions/listen` known to it.
    let methods = [
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "redmark://rooms/nook/2099-01-01"})),
        ("subscriptions/listen", json!({"notifications": {}})),
    ];
    for (i, (method, mut params)) in (10..).zip(methods) {
        params["_meta"] = meta(json!({}));
        let r = rpc(&mut p, i, &request(i, method, params));
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }
    // No banner, no log line: nothing more arrives unasked.
    assert_eq!(p.try_recv(Duration::from_millis(300)), None);
    let err = p.finish();
    assert!(
        err.contains("redmark-panel: up: epoch"),
        "boot diagnostics go to semihosting: {err}"
    );
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn the_seed_exchange_ambiguous_room_form_retry_booking() {
    let mut p = boot();
    let r1 = rpc(
        &mut p,
        7,
        &call(7, "book_room", big_room(9), form_caps(), None, None),
    );
    let result = &r1["result"];
    let req = &result["inputRequests"]["room"];
    assert_eq!(req["method"], "elicitation/create", "{r1}");
    assert_eq!(req["params"]["mode"], "form");
    let options: Vec<_> = req["params"]["requestedSchema"]["properties"]["room_id"]["oneOf"]
        .as_array()
        .expect("room options")
        .iter()
        .map(|o| o["const"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["atrium", "studio-b"]);
    assert!(
        result["inputRequests"].get("requestState").is_none(),
        "requestState is a sibling"
    );
    let state = state_of(&r1);

    // New id, same arguments, the answer and the echoed state.
    let r2 = rpc(
        &mut p,
        8,
        &call(
            8,
            "book_room",
            big_room(9),
            form_caps(),
            Some(accept("room", json!({"room_id": "studio-b"}))),
            Some(&state),
        ),
    );
    assert_eq!(r2["result"]["resultType"], "complete", "{r2}");
    assert_eq!(r2["result"]["isError"], false, "{r2}");
    assert_eq!(
        r2["result"]["structuredContent"]["booking"]["room_id"], "studio-b",
        "{r2}"
    );
    assert!(r2["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("Studio B"));

    // The slot is now taken, as the RAM store remembers.
    let r3 = rpc(
        &mut p,
        9,
        &call(
            9,
            "book_room",
            json!({"day": "2026-09-17", "hour": 9, "room_id": "studio-b"}),
            json!({}),
            None,
            None,
        ),
    );
    assert_eq!(r3["result"]["isError"], true, "{r3}");
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn bookings_and_cancels_survive_resets() {
    let mut p = boot();
    let r = rpc(&mut p, 1, &book_exact(1, "2026-09-21", 9, "nook"));
    let kept = r["result"]["structuredContent"]["booking"]["id"]
        .as_str()
        .expect("booking id")
        .to_owned();
    let r = rpc(&mut p, 2, &book_exact(2, "2026-09-21", 10, "nook"));
    let dropped = r["result"]["structuredContent"]["booking"]["id"]
        .as_str()
        .expect("booking id")
        .to_owned();
    let state = state_of(&rpc(
        &mut p,
        3,
        &call(
            3,
            "cancel_booking",
            json!({"booking_id": dropped}),
            form_caps(),
            None,
            None,
        ),
    ));
    let r = rpc(
        &mut p,
        4,
        &call(
            4,
            "cancel_booking",
            json!({"booking_id": dropped}),
            form_caps(),
            Some(accept("confirm", json!({"confirm": true}))),
            Some(&state),
        ),
    );
    assert_eq!(
        r["result"]["structuredContent"]["booking"]["status"], "cancelled",
        "{r}"
    );
    for round in 0..2 {
        p.reset();
    p.set_time();
        // The booking is still there: its hour is taken; the cancelled one's hour is free
        // (booked again in the first round, so taken in the second).
        let r = rpc(
            &mut p,
            10 + round,
            &book_exact(10 + round, "2026-09-21", 9, "nook"),
        );
        assert_eq!(
            r["result"]["structuredContent"]["reason"], "taken",
            "round {round}: {r}"
        );
        let r = rpc(
            &mut p,
            20 + round,
            &book_exact(20 + round, "2026-09-21", 10, "nook"),
        );
        let want_free = round == 0;
        assert_eq!(r["result"]["isError"], !want_free, "round {round}: {r}");
        // Booking ids go on from where they were: no id is reused after a reset.
        if want_free {
            let id = r["result"]["structuredContent"]["booking"]["id"]
                .as_str()
                .unwrap();
            assert!(id != kept && id != dropped, "{id} reused");
        }
    }
    let err = p.finish();
    assert_eq!(err.matches("redmark-panel: up: ").count(), 3, "{err}");
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn a_client_that_cannot_be_asked_gets_32021() {
    // A panel leaves the stand-in out (core feature `stand-in`, its flash): -32021 as before.
    let mut p = boot();
    let r = rpc(
        &mut p,
        1,
        &call(1, "book_room", big_room(16), json!({}), None, None),
    );
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}}),
        "{r}"
    );
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn garbage_and_oversize_lines_get_errors_and_the_panel_goes_on() {
    let mut p = boot();
    let list = |id: i64| request(id, "tools/list", json!({"_meta": meta(json!({}))}));

    for garbage in [
        &b"garbage"[..],
        b"{",
        b"\x00\xff\xfe",
        b"[1,2",
        br#"{"jsonrpc":"2.0","id":1,"method":}"#,
    ] {
        let mut line = garbage.to_vec();
        line.push(b'\n');
        p.send_raw(&line);
        let r = parse(&p.recv());
        assert_eq!(r["error"]["code"], -32700, "{garbage:?}: {r}");
    }
    assert!(rpc(&mut p, 1, &list(1))["result"]["tools"].is_array());

    // A line exactly as long as the buffer is served; one byte more is refused whole.
    let base = list(2);
    let exact = format!("{base}{}", " ".repeat(LINE_MAX - base.len()));
    assert_eq!(exact.len(), LINE_MAX);
    assert!(rpc(&mut p, 2, &exact)["result"]["tools"].is_array());
    let over = format!("{exact} ");
    let r = parse(&p.exchange(&over));
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert!(
        r.get("id").is_none(),
        "an over-long line has no id to echo: {r}"
    );

    // Far longer than the buffer, and a huge one split in pieces.
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"x\",\"pad\":\"{}\"}}",
        "a".repeat(20_000)
    );
    assert_eq!(parse(&p.exchange(&huge))["error"]["code"], -32600);
    assert!(rpc(&mut p, 4, &list(4))["result"]["tools"].is_array());
    // Blank lines are ignored; notifications get nothing.
    p.send("");
    p.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
            .to_string(),
    );
    assert!(rpc(&mut p, 5, &list(5))["result"]["tools"].is_array());
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn a_thousand_messages_no_reply_lost_or_reordered_and_the_stack_stays_in_budget() {
    let mut p = boot();
    const N: i64 = 1000;
    let msgs: Vec<String> = (1..=N)
        .map(|id| match id % 5 {
            0 => request(id, "tools/list", json!({"_meta": meta(json!({}))})),
            1 => request(id, "server/discover", json!({"_meta": meta(json!({}))})),
            // Odd ones carry a fraction: the deepest path (float parsing in the request digest).
            2 if id % 2 == 0 => call(
                id,
                "list_rooms",
                json!({"day": "2026-09-17", "hour": id % 24}),
                json!({}),
                None,
                None,
            ),
            2 => call(
                id,
                "list_rooms",
                json!({"day": "2026-09-17", "hour": 9.5, "attendees": 2.25e1}),
                json!({}),
                None,
                None,
            ),
            3 => call(
                id,
                "book_room",
                big_room((id % 24) as u8),
                form_caps(),
                None,
                None,
            ),
            _ => format!("not json {id}"),
        })
        .collect();
    let started = std::time::Instant::now();
    // Pipelined from another thread, as fast as QEMU takes them.
    let mut stdin = p.take_stdin();
    let writer = thread::spawn(move || {
        for m in &msgs {
            if stdin
                .write_all(m.as_bytes())
                .and_then(|_| stdin.write_all(b"\n"))
                .is_err()
            {
                return None;
            }
        }
        let _ = stdin.flush();
        Some(stdin) // kept open until joined
    });
    for id in 1..=N {
        let r = parse(&p.recv());
        if id % 5 == 4 {
            assert_eq!(r["error"]["code"], -32700, "reply {id}: {r}");
            continue;
        }
        assert_eq!(r["id"], json!(id), "reply {id} lost or out of order: {r}");
        let ok = match id % 5 {
            0 => r["result"]["tools"].is_array(),
            1 => r["result"]["supportedVersions"].is_array(),
            2 => r["result"]["resultType"] == "complete",
            _ => r["result"]["resultType"] == "input_required",
        };
        assert!(ok, "reply {id}: {r}");
    }
    let took = started.elapsed();
    println!("{}: 1000 pipelined messages answered in {took:.2?}", BOARD.name);
    let _stdin = writer.join().expect("writer");
    assert_eq!(
        p.try_recv(Duration::from_millis(200)),
        None,
        "no extra replies"
    );

    let err = p.finish();
    let hw = stack_high_water(&err).expect("stack high-water reported over semihosting");
    let line = err
        .lines()
        .rfind(|l| l.contains("stack high-water"))
        .unwrap_or("");
    println!("panel after 1000 messages: {line}");
    assert!(
        hw <= STACK_BUDGET,
        "stack high-water {hw} bytes is over the {STACK_BUDGET}-byte budget"
    );
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn an_idle_panel_sleeps_instead_of_spinning() {
    let mut p = boot();
    let r = rpc(
        &mut p,
        1,
        &request(1, "server/discover", json!({"_meta": meta(json!({}))})),
    );
    assert!(r["result"].is_object(), "{r}");
    let before = p.cpu_time();
    thread::sleep(Duration::from_secs(2));
    let used = p.cpu_time() - before;
    // Spinning costs QEMU a whole host core (about 2 s here); WFI costs next to nothing.
    assert!(
        used < Duration::from_millis(600),
        "QEMU used {used:?} of CPU in 2 s while the panel was idle"
    );
    // And it wakes up for the next message.
    let r = rpc(
        &mut p,
        2,
        &request(2, "tools/list", json!({"_meta": meta(json!({}))})),
    );
    assert!(r["result"]["tools"].is_array(), "{r}");
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn the_flash_store_holds_its_capacity_of_active_bookings_and_says_when_full() {
    let mut p = boot();
    let book = |p: &mut Panel, id: i64| {
        let args = json!({"day": format!("2026-10-{:02}", 1 + id / 24), "hour": id % 24, "room_id": "nook"});
        rpc(p, id, &call(id, "book_room", args, json!({}), None, None))
    };
    for id in 0..HOLDS {
        let r = book(&mut p, id);
        assert_eq!(r["result"]["isError"], false, "booking {id}: {r}");
    }
    let r = book(&mut p, HOLDS);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("store is full"),
        "{r}"
    );
    // Still serving.
    let id = HOLDS + 1;
    let r = rpc(
        &mut p,
        id,
        &request(id, "tools/list", json!({"_meta": meta(json!({}))})),
    );
    assert!(r["result"]["tools"].is_array(), "{r}");
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn without_a_time_from_its_host_the_panel_refuses_book_room() {
    let mut p = Panel::boot_on(BOARD, &firmware(Build::standard(BOARD)));
    let r = rpc(&mut p, 1, &book_exact(1, "2026-09-22", 9, "nook"));
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("the panel has no time yet"), "{r}");
    // What does not need the date is served as before.
    let r = rpc(
        &mut p,
        2,
        &call(2, "list_rooms", json!({}), json!({}), None, None),
    );
    assert_eq!(r["result"]["isError"], false, "{r}");
    // Told the time by its host, it books.
    p.set_time();
    let r = rpc(&mut p, 3, &book_exact(3, "2026-09-22", 9, "nook"));
    assert_eq!(
        r["result"]["structuredContent"]["booking"]["room_id"], "nook",
        "{r}"
    );
}
    };
}

mod lm3s6965evb {
    use super::*;
    // Its 8 KiB store (RAM standing in for flash under QEMU) holds 48 titled bookings.
    panel_tests!(LM3S6965EVB, 48);
}

mod microbit {
    use super::*;
    // Its 64 KiB store holds MAX_BOOKINGS.
    panel_tests!(MICROBIT, 256);
}
