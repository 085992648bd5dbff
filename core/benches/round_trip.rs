//! The seed lesson's round trip through the engine: the ambiguous `book_room` call (parse,
//! dispatch, seal, emit the form) and the retry (parse, open the state, validate the answer,
//! commit, emit the booking). Heap use is covered by `tests/no_alloc.rs`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use redmark_core::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
use redmark_core::engine::{Config, ServerInfo};
use redmark_core::limits::OUT;
use redmark_core::seal::{Key, KeyRing};
use redmark_core::{Context, Engine};

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;
const ARGS: &str = r#""arguments":{"day":"2026-09-24","hour":9,"room_hint":"the big room"}"#;

fn seed_round_trip(c: &mut Criterion) {
    let info = ServerInfo {
        name: "redmark",
        version: "bench",
        instructions: None,
    };
    let keys = KeyRing::new(Key::new(1, &[7; 32]).expect("key"));
    let mut engine = Engine::new(
        BookingApp::new(DEFAULT_FLOOR, MemStore::<64>::new(), info),
        keys,
        Config::default(),
    );
    let cx = Context {
        now: 1_790_000_000,
        principal: b"alice",
        entropy: [1; 8],
        access: redmark_core::Access::USER,
    };
    let ask = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"book_room",{ARGS},{META}}}}}"#
    );
    let mut out = vec![0u8; OUT];
    let h = engine.handle(ask.as_bytes(), &cx, &mut out);
    let first: serde_json::Value = serde_json::from_slice(&out[..h.len]).expect("json");
    let state = first["result"]["requestState"]
        .as_str()
        .expect("asked")
        .to_owned();
    let retry = format!(
        r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{"name":"book_room",{ARGS},"inputResponses":{{"room":{{"action":"accept","content":{{"room_id":"studio-b"}}}}}},"requestState":"{state}",{META}}}}}"#
    );

    let mut g = c.benchmark_group("seed");
    g.throughput(Throughput::Elements(2));
    g.bench_function("round_trip (ask + retry)", |b| {
        b.iter(|| {
            let a = engine.handle(ask.as_bytes(), &cx, &mut out);
            let r = engine.handle(retry.as_bytes(), &cx, &mut out);
            assert!(a.responded && r.responded);
        })
    });
    g.bench_function("ask (round 1)", |b| {
        b.iter(|| engine.handle(ask.as_bytes(), &cx, &mut out))
    });
    g.bench_function("retry (round 2)", |b| {
        b.iter(|| engine.handle(retry.as_bytes(), &cx, &mut out))
    });
    g.finish();
}

criterion_group!(benches, seed_round_trip);
criterion_main!(benches);
