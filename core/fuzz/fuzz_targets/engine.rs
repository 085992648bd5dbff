//! Any bytes through the whole engine: never a panic, always one JSON line or nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redmark_core::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
use redmark_core::engine::{Config, ServerInfo};
use redmark_core::seal::{Key, KeyRing};
use redmark_core::{Context, Engine};

fuzz_target!(|data: &[u8]| {
    let info = ServerInfo {
        name: "fuzz",
        version: "0",
        instructions: None,
    };
    let Ok(key) = Key::new(1, &[3; 32]) else {
        return;
    };
    let mut engine = Engine::new(
        BookingApp::new(DEFAULT_FLOOR, MemStore::<8>::new(), info),
        KeyRing::new(key),
        Config::default(),
    );
    let cx = Context {
        now: 1_790_000_000,
        principal: b"fuzz",
        entropy: [0; 8],
        access: redmark_core::Access::USER,
    };
    let mut out = [0u8; 2048];
    let h = engine.handle(data, &cx, &mut out);
    if h.responded {
        assert!(redmark_core::wire::parse(&out[..h.len]).is_ok());
    }
});
