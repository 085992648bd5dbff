//! The engine never touches the heap: a counting allocator sees zero allocations while it
//! handles a few thousand mixed messages (including full MRTR round trips).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};

use redmark_core::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
use redmark_core::engine::Config;
use redmark_core::limits::OUT;
use redmark_core::seal::{Key, KeyRing};
use redmark_core::{Context, Engine};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
thread_local!(static COUNTING: Cell<bool> = const { Cell::new(false) });

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;

/// Held by each test that counts the waiting store's ticks (a process-wide count).
static TICKING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Full MRTR round trips among the 3,000 messages (one every tenth).
const ROUND_TRIPS: usize = 300;

#[test]
fn thousands_of_mixed_messages_allocate_nothing() {
    let fixed: Vec<Vec<u8>> = [
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{META}}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{{META}}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"list_rooms","arguments":{{"day":"2026-09-24","hour":9}},{META}}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"book_room","arguments":{{"day":"2026-13-17","hour":9}},{META}}}}}"#),
        // The caller's bookings, a page, and the page after bk_3 (the store fills as it runs).
        format!(r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{"name":"list_bookings","arguments":{{}},{META}}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"list_bookings","arguments":{{"day":"2026-10-01","after":"bk_3"}},{META}}}}}"#),
        r#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}"#.into(),
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{}}}"#.into(),
        r#"[1,2,3]"#.into(),
        r#"{"jsonrpc":"2.0","id":7,"method""#.into(),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#.into(),
    ]
    .into_iter()
    .map(String::into_bytes)
    .collect();
    // Room for every round trip's booking (the panel's store holds 64).
    let mut engine = Engine::new(
        BookingApp::new(DEFAULT_FLOOR, MemStore::<ROUND_TRIPS>::new(), common::INFO),
        KeyRing::new(Key::new(1, &[0x42; 32]).unwrap()),
        Config::default(),
    );
    let mut out = vec![0u8; OUT];
    let mut retry = [0u8; 2048];
    let principal = b"alice";

    COUNTING.with(|c| c.set(true));
    let mut answered = 0usize;
    let mut booked = 0usize;
    for i in 0..3000u64 {
        let cx = Context {
            now: 1_790_000_000,
            principal,
            entropy: i.to_be_bytes(),
            access: redmark_core::Access::USER,
        };
        let h = engine.handle(&fixed[i as usize % fixed.len()], &cx, &mut out);
        answered += h.responded as usize;
        if i % 10 == 0 {
            // A full seed round trip: ask, then answer with the echoed state. Each books its
            // own slot: one a day-hour from 2026-10-01 00:00 on (after the test's clock).
            let k = i / 10;
            let (day, hour) = (1 + k / 24, k % 24);
            let mut ask = [0u8; 512];
            let n = {
                let mut w = &mut ask[..];
                let _ = write!(
                    w,
                    r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"book_room","arguments":{{"day":"2026-10-{day:02}","hour":{hour},"room_hint":"the big room"}},{META}}}}}"#
                );
                512 - w.len()
            };
            let h = engine.handle(&ask[..n], &cx, &mut out);
            let doc = redmark_core::wire::parse(&out[..h.len]).expect("response parses");
            let state = doc
                .get("result")
                .and_then(|r| r.get("requestState"))
                .and_then(|s| s.as_plain_str())
                .expect("asked");
            let n = {
                let mut w = &mut retry[..];
                let _ = write!(
                    w,
                    r#"{{"jsonrpc":"2.0","id":"r{i}","method":"tools/call","params":{{"name":"book_room","arguments":{{"day":"2026-10-{day:02}","hour":{hour},"room_hint":"the big room"}},"inputResponses":{{"room":{{"action":"accept","content":{{"room_id":"studio-b"}}}}}},"requestState":"{state}",{META}}}}}"#
                );
                2048 - w.len()
            };
            let h = engine.handle(&retry[..n], &cx, &mut out);
            assert!(h.responded);
            answered += 2;
            let doc = redmark_core::wire::parse(&out[..h.len]).expect("response parses");
            let result = doc.get("result").expect("a result");
            let booked_here = result
                .get("resultType")
                .is_some_and(|t| t.eq_str("complete"))
                && result.get("isError").and_then(|e| e.as_bool()) == Some(false)
                && result
                    .get("structuredContent")
                    .and_then(|s| s.get("booked"))
                    .and_then(|b| b.as_bool())
                    == Some(true);
            assert!(booked_here, "round trip {k} did not book");
            booked += 1;
        }
    }
    COUNTING.with(|c| c.set(false));
    assert!(answered > 3000);
    assert_eq!(booked, ROUND_TRIPS, "every round trip books");
    assert_eq!(engine.app().store().bookings().len(), ROUND_TRIPS);
    assert_eq!(
        ALLOCATIONS.load(Ordering::SeqCst),
        0,
        "the engine allocated"
    );
}

/// A store that waits like a timer (each operation pending twice, then woken), under a host
/// that polls only when woken: every booking books, no poll is wasted, nothing touches the heap.
#[test]
fn bookings_through_a_waiting_store_allocate_nothing() {
    use common::waiting::{block_on, Waiting, TICKS};
    use redmark_core::engine::Message;

    const BOOKINGS: usize = 200;
    let _alone = TICKING.lock().unwrap_or_else(|e| e.into_inner());
    let mut engine = Engine::new(
        BookingApp::new(
            DEFAULT_FLOOR,
            Waiting(MemStore::<BOOKINGS>::new()),
            common::INFO,
        ),
        KeyRing::new(Key::new(1, &[0x42; 32]).unwrap()),
        Config::default(),
    );
    let mut out = vec![0u8; OUT];
    let mut msg = [0u8; 512];
    let (mut polls, mut booked) = (0usize, 0usize);
    let ticks_before = TICKS.load(Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    for i in 0..BOOKINGS as u64 * 2 {
        // Each slot twice: the second finds it taken (and reads which rooms are free).
        let k = i / 2;
        let n = {
            let mut w = &mut msg[..];
            let _ = write!(
                w,
                r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"book_room","arguments":{{"day":"2026-10-{:02}","hour":{},"room_id":"nook"}},{META}}}}}"#,
                1 + k / 24,
                k % 24
            );
            512 - w.len()
        };
        let cx = Context {
            now: 1_790_000_000,
            principal: b"alice",
            entropy: i.to_be_bytes(),
            access: redmark_core::Access::USER,
        };
        let (handled, n) = block_on(engine.handling(Message::Plain(&msg[..n]), &cx, &mut out));
        assert!(handled.responded);
        polls += n;
        booked += (i % 2 == 0) as usize;
    }
    COUNTING.with(|c| c.set(false));
    let ticks = TICKS.load(Ordering::Relaxed) - ticks_before;
    // One poll to start each message, and one per time a store operation was pending.
    assert_eq!(polls, BOOKINGS * 2 + ticks, "polled only when woken");
    assert!(
        ticks >= BOOKINGS * 2 * 2,
        "every booking waited for its write"
    );
    assert_eq!(engine.app().store().0.bookings().len(), booked);
    assert_eq!(
        ALLOCATIONS.load(Ordering::SeqCst),
        0,
        "the engine allocated"
    );
}

/// The whole state of a handling waiting for its store is the future itself: its size is
/// fixed at compile time, and bounded here (docs: `Engine::handling`).
#[test]
fn a_waiting_handling_fits_in_a_bounded_size() {
    use common::waiting::Waiting;
    use redmark_core::engine::Message;

    let mut engine = Engine::new(
        BookingApp::new(DEFAULT_FLOOR, Waiting(MemStore::<64>::new()), common::INFO),
        KeyRing::new(Key::new(1, &[0x42; 32]).unwrap()),
        Config::default(),
    );
    let cx = Context {
        now: 1_790_000_000,
        principal: b"alice",
        entropy: [0; 8],
        access: redmark_core::Access::USER,
    };
    let mut out = [0u8; 64];
    let handling = engine.handling(Message::Plain(b"{}"), &cx, &mut out);
    let size = core::mem::size_of_val(&handling);
    println!("a handling of the booking app: {size} bytes (64-bit host)");
    assert!(size <= redmark_core::limits::MAX_HANDLING, "{size} bytes");
}

/// `resources/read` of a room's day awaits the store like a tool: polled once it is still
/// waiting (`handle` answers -32603), driven by `handling` it reads the day, without the heap.
#[test]
fn a_room_day_read_awaits_its_store_and_allocates_nothing() {
    use common::waiting::{block_on, Waiting};
    use redmark_core::engine::Message;

    let _alone = TICKING.lock().unwrap_or_else(|e| e.into_inner());
    let mut engine = Engine::new(
        BookingApp::new(DEFAULT_FLOOR, Waiting(MemStore::<8>::new()), common::INFO),
        KeyRing::new(Key::new(1, &[0x42; 32]).unwrap()),
        Config::default(),
    );
    let cx = |i: u64| Context {
        now: 1_790_000_000,
        principal: b"alice",
        entropy: i.to_be_bytes(),
        access: redmark_core::Access::USER,
    };
    let mut out = vec![0u8; OUT];
    for hour in [9, 11] {
        let book = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"book_room","arguments":{{"day":"2026-09-22","hour":{hour},"room_id":"nook","title":"Stand-up"}},{META}}}}}"#
        );
        let (h, _) =
            block_on(engine.handling(Message::Plain(book.as_bytes()), &cx(hour), &mut out));
        assert!(String::from_utf8_lossy(&out[..h.len]).contains(r#""booked":true"#));
    }
    let read = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{{"uri":"redmark://rooms/nook/tomorrow",{META}}}}}"#
    );
    let once = engine.handle(read.as_bytes(), &cx(1), &mut out);
    let text = String::from_utf8_lossy(&out[..once.len]).into_owned();
    assert!(
        text.contains("-32603"),
        "polled once, the read was still waiting: {text}"
    );
    COUNTING.with(|c| c.set(true));
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let (h, polls) = block_on(engine.handling(Message::Plain(read.as_bytes()), &cx(2), &mut out));
    let allocated = ALLOCATIONS.load(Ordering::SeqCst) - before;
    COUNTING.with(|c| c.set(false));
    assert_eq!(allocated, 0, "the read allocated");
    assert!(polls > 1, "the read waited for its store");
    let text = String::from_utf8_lossy(&out[..h.len]).into_owned();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let json = v["result"]["contents"][0]["text"].as_str().unwrap();
    let day: serde_json::Value = serde_json::from_str(json).unwrap();
    let starts: Vec<_> = day["bookings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["from"].clone())
        .collect();
    assert_eq!(starts, ["09:00", "11:00"], "{text}");
    assert_eq!(
        v["result"]["contents"][0]["uri"],
        "redmark://rooms/nook/2026-09-22"
    );
}
