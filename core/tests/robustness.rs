//! No input of any shape panics the engine, and every answer it writes is one well-formed
//! JSON-RPC message (property tests over random and mutated messages).

mod common;

use std::sync::OnceLock;

use common::{accept, form_caps, Client};
use proptest::prelude::*;
use redmark_core::booking::{
    Actor, Booking, Commit, Holder, Minute, NewBooking, Store, StoreError,
};
use redmark_core::limits::MIN_OUT;
use serde_json::json;

/// Valid messages of every kind, for the mutator to start from (with a live MRTR retry and the
/// golden requests, see [`seeds`]).
const SEEDS: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"book_room","arguments":{"day":"2026-09-24","hour":9,"room_hint":"the big room"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}"#,
    r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"cancel_booking","arguments":{"booking_id":"bk_1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}}"#,
    r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"list_rooms","arguments":{"day":"2026-09-24","hour":9,"attendees":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
];

/// One message the mutator starts from; `completes` says it books when sent unmutated.
struct Seed {
    bytes: Vec<u8>,
    completes: bool,
}

/// [`SEEDS`], a retry carrying a live `requestState`, and every golden request.
fn seeds() -> &'static [Seed] {
    static ALL: OnceLock<Vec<Seed>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all: Vec<Seed> = SEEDS
            .iter()
            .map(|s| Seed {
                bytes: s.as_bytes().to_vec(),
                completes: false,
            })
            .collect();
        all.push(Seed {
            bytes: live_retry(),
            completes: true,
        });
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
        let mut golden: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "request"))
            .collect();
        golden.sort();
        assert!(golden.len() >= 30, "golden requests missing");
        all.extend(golden.into_iter().map(|p| Seed {
            bytes: std::fs::read(p).unwrap(),
            completes: false,
        }));
        all
    })
}

/// The second round of the seed exchange with a `requestState` minted just now by an engine
/// like the one every case runs on (same key, clock and principal): ask which room, take the
/// state from the `input_required` answer, answer with a room. Unmutated, it books.
fn live_retry() -> Vec<u8> {
    let args = json!({"day": "2026-09-24", "hour": 9, "room_hint": "the big room"});
    let mut c = Client::default();
    let ask = c.call("book_room", args.clone(), form_caps(), None, None);
    assert_eq!(ask["result"]["resultType"], "input_required", "{ask}");
    let state = ask["result"]["requestState"].as_str().expect("a state");
    let retry = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
        "name": "book_room",
        "arguments": args,
        "inputResponses": accept("room", json!({"room_id": "studio-b"})),
        "requestState": state,
        "_meta": common::meta(form_caps()),
    }});
    retry.to_string().into_bytes()
}

/// Sends `seed` unmutated to a fresh engine: it is answered well-formed and, if it should,
/// books (so its mutations start from an accepted message, not from one already rejected).
fn assert_live(seed: &Seed) {
    let answer = check(&mut Client::default(), &seed.bytes);
    if seed.completes {
        let v = answer.expect("an answer");
        assert_eq!(v["result"]["resultType"], "complete", "{v}");
        assert_eq!(v["result"]["structuredContent"]["booked"], true, "{v}");
    }
}

/// Sends `input`; whatever the engine writes must be one well-formed, valid JSON-RPC answer,
/// which is returned.
fn check(c: &mut Client, input: &[u8]) -> Option<serde_json::Value> {
    let (h, text) = c.raw(input);
    h.responded.then(|| {
        assert!(!text.contains('\n'), "one line: {text}");
        let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(v["jsonrpc"], "2.0");
        assert!(
            v.get("result").is_some() ^ v.get("error").is_some(),
            "{text}"
        );
        let method = serde_json::from_slice::<serde_json::Value>(input)
            .ok()
            .and_then(|r| r["method"].as_str().map(String::from));
        common::validate(method.as_deref(), &v);
        v
    })
}

fn mutate(seed: &[u8], edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut m = seed.to_vec();
    for &(pos, op, byte) in edits {
        if m.is_empty() {
            m.push(byte);
            continue;
        }
        let i = pos % m.len();
        match op % 4 {
            0 => m[i] = byte,
            1 => {
                m.remove(i);
            }
            2 => m.insert(i, byte),
            _ => {
                let end = (i + (byte as usize % 16)).min(m.len());
                let chunk = m[i..end].to_vec();
                m.splice(i..i, chunk);
            }
        }
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(input in proptest::collection::vec(any::<u8>(), 0..512)) {
        check(&mut Client::default(), &input);
    }

    #[test]
    fn mutated_messages_never_panic(
        seed in 0..seeds().len(),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..8),
    ) {
        let seed = &seeds()[seed];
        assert_live(seed);
        let input = mutate(&seed.bytes, &edits);
        check(&mut Client::default(), &input);
    }

    /// The live retry alone, so mutations of a retry whose state verifies get their share.
    #[test]
    fn mutated_retries_never_panic(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..8),
    ) {
        let seed = seeds().iter().find(|s| s.completes).unwrap();
        assert_live(seed);
        let input = mutate(&seed.bytes, &edits);
        check(&mut Client::default(), &input);
    }

    #[test]
    fn json_shaped_noise_never_panics(input in r#"[\{\}\[\]",:0-9a-z\\ _/.-]{0,200}"#) {
        check(&mut Client::default(), input.as_bytes());
    }
}

#[test]
fn overflowing_output_becomes_a_well_formed_error() {
    let mut c = Client::default();
    let cx = redmark_core::Context {
        now: 0,
        principal: b"p",
        entropy: [0; 8],
        access: redmark_core::Access::USER,
    };
    let mut out = vec![0u8; MIN_OUT];
    let h = c.engine.handle(SEEDS[1].as_bytes(), &cx, &mut out);
    let v: serde_json::Value = serde_json::from_slice(&out[..h.len]).unwrap();
    assert_eq!(v["error"]["code"], -32603);
    assert_eq!(v["id"], "x");
    let mut tiny = vec![0u8; MIN_OUT - 1];
    assert!(
        !c.engine
            .handle(SEEDS[0].as_bytes(), &cx, &mut tiny)
            .responded
    );
}

#[test]
fn deep_nesting_and_huge_messages_are_refused() {
    let mut c = Client::default();
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let (_, text) = c.raw(deep.as_bytes());
    // Well-formed, only too deep: an invalid request that says so (not a parse error), with
    // its id when readable.
    {
        assert!(text.contains("-32600"), "{text}");
        assert!(text.contains("nested too deeply"), "{text}");
        let inner = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let deep_call = format!(
            r#"{{"jsonrpc":"2.0","id":"deep-1","method":"tools/call","params":{{"name":"x","arguments":{{"a":{inner}}}}}}}"#
        );
        let (_, text) = c.raw(deep_call.as_bytes());
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["id"], "deep-1", "the id is kept when readable: {text}");
        assert_eq!(v["error"]["code"], -32600, "{text}");
    }
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{}"}}"#,
        "x".repeat(redmark_core::limits::MAX_MESSAGE)
    );
    let (_, text) = c.raw(big.as_bytes());
    assert!(text.contains("-32600"), "{text}");
}

#[test]
fn every_seed_is_served_and_the_retry_books() {
    assert!(seeds().iter().any(|s| s.completes));
    for seed in seeds() {
        assert_live(seed);
    }
}

/// A context as any transport passes it.
fn bare_context() -> redmark_core::Context<'static> {
    redmark_core::Context {
        now: 0,
        principal: b"p",
        entropy: [0; 8],
        access: redmark_core::Access::USER,
    }
}

/// The longest id the engine echoes (a JSON string of `MAX_ID` bytes).
fn longest_id() -> String {
    format!("\"{}\"", "i".repeat(redmark_core::limits::MAX_ID - 2))
}

#[test]
fn huge_echoes_still_answer_within_the_smallest_buffer() {
    let (cx, id) = (bare_context(), longest_id());
    let long = "v".repeat(9000);
    let meta = |v: &str| {
        format!(
            r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{v}","io.modelcontextprotocol/clientCapabilities":{{}}}}"#
        )
    };
    for (input, code) in [
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{{}}}}}"#,
                meta(&long)
            ),
            -32022,
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{long}",{}}}}}"#,
                meta("2026-07-28")
            ),
            -32602,
        ),
    ] {
        let mut c = Client::default();
        let mut out = vec![0u8; MIN_OUT];
        let h = c.engine.handle(input.as_bytes(), &cx, &mut out);
        let v: serde_json::Value = serde_json::from_slice(&out[..h.len]).expect("a whole error");
        assert_eq!(v["error"]["code"], code, "{v}");
        common::validate(None, &v);
    }
}

#[test]
fn a_booking_result_fits_the_smallest_buffer() {
    let (cx, id) = (bare_context(), longest_id());
    let input = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"book_room","arguments":{{"day":"2026-09-24","hour":9,"room_id":"studio-b","attendees":12}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    );
    let mut c = Client::default();
    let mut out = vec![0u8; MIN_OUT];
    let h = c.engine.handle(input.as_bytes(), &cx, &mut out);
    let v: serde_json::Value = serde_json::from_slice(&out[..h.len]).unwrap();
    assert_eq!(v["result"]["structuredContent"]["booked"], true, "{v}");
}

#[test]
fn notifications_over_http_are_checked_like_requests() {
    let mut c = Client::default();
    let note = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    let mut out = vec![0u8; MIN_OUT];
    let mut send = |c: &mut Client, method: Option<&str>| {
        let headers = redmark_core::HttpHeaders {
            version: Some("2026-07-28"),
            method,
            ..Default::default()
        };
        let cx = redmark_core::Context {
            now: 0,
            principal: b"p",
            entropy: [0; 8],
            access: redmark_core::Access::USER,
        };
        c.engine.handle_http(note, &cx, &headers, &mut out)
    };
    assert_eq!((send(&mut c, Some("notifications/cancelled")).status), 202);
    let h = send(&mut c, Some("foo"));
    assert!(h.responded && h.status == 400);
    let h = send(&mut c, None);
    assert!(h.responded && h.status == 400);
}

/// A store whose storage has failed: every operation says `Io`.
struct BrokenStore;

impl Store for BrokenStore {
    async fn commit_by(&mut self, _: &NewBooking, _: &Actor) -> Result<Commit, StoreError> {
        Err(StoreError::Io)
    }
    async fn get(&mut self, _: u32) -> Result<Option<Booking>, StoreError> {
        Err(StoreError::Io)
    }
    async fn made_by(
        &mut self,
        _: &Holder,
        _: &redmark_core::seal::Nonce,
    ) -> Result<Option<Booking>, StoreError> {
        Err(StoreError::Io)
    }
    async fn next_held(
        &mut self,
        _: &Holder,
        _: Minute,
        _: &str,
    ) -> Result<Option<Booking>, StoreError> {
        Err(StoreError::Io)
    }
    async fn cancel(&mut self, _: u32, _: &Actor) -> Result<Option<Booking>, StoreError> {
        Err(StoreError::Io)
    }
    async fn next_in_room(&mut self, _: &str, _: Minute) -> Result<Option<Booking>, StoreError> {
        Err(StoreError::Io)
    }
    async fn set_end(
        &mut self,
        _: u32,
        _: &Actor,
        _: Minute,
        _: Minute,
    ) -> Result<Option<redmark_core::booking::Resized>, StoreError> {
        Err(StoreError::Io)
    }
    async fn check_in(&mut self, _: u32, _: &Actor) -> Result<Option<Booking>, StoreError> {
        Err(StoreError::Io)
    }
    async fn release_due(
        &mut self,
        _: Minute,
        _: u16,
        _: &Actor,
    ) -> Result<Option<Booking>, StoreError> {
        Err(StoreError::Io)
    }
}

#[test]
fn a_failing_store_is_answered_in_its_own_words() {
    let app = redmark_core::booking::BookingApp::new(
        redmark_core::booking::DEFAULT_FLOOR,
        BrokenStore,
        common::INFO,
    );
    let key = redmark_core::seal::Key::new(1, &[0x42; 32]).unwrap();
    let mut engine = redmark_core::Engine::new(
        app,
        redmark_core::seal::KeyRing::new(key),
        redmark_core::engine::Config::default(),
    );
    let msg = serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "list_rooms", "arguments": {"day": "2099-01-01", "hour": 9},
        "_meta": common::meta(serde_json::json!({}))}});
    let mut out = vec![0u8; MIN_OUT];
    let h = engine.handle(msg.to_string().as_bytes(), &bare_context(), &mut out);
    let v: serde_json::Value = serde_json::from_slice(&out[..h.len]).unwrap();
    let words = StoreError::Io.message();
    assert_eq!(words, StoreError::Io.to_string());
    assert_eq!(v["error"]["code"], -32603, "{v}");
    assert_eq!(v["error"]["message"], words);
    assert_eq!(h.status, 500);
    assert_eq!(h.note, Some(redmark_core::Note::Internal(words)));
}
