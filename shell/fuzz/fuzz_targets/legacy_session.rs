//! What a 2025-11-25 client sends through the dual-era bridge (`legacy::session::Session`):
//! its lines, turned into 2026-07-28 requests for a real engine (the booking floor on a
//! `MemStore`), whose answers go back through the bridge, questions pushed to the client and
//! its answers (or none, until their wait runs out) retried with the sealed state. Never a
//! panic, and every line the bridge sends the client is one JSON value.
//!
//! Input: the client's lines, separated by `\n`; each arrives a second after the one before,
//! and a last tick comes after every question's wait.
#![no_main]

use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use redmark::legacy::session::{Action, Session};
use redmark::legacy::QUESTION_WAIT;
use redmark_core::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
use redmark_core::engine::{Config, ServerInfo};
use redmark_core::seal::{Key, KeyRing};
use redmark_core::{Access, Context, Engine};

/// Core round trips one input may cause (each bridged answer is retried at the core once).
const MAX_CORE_RUNS: usize = 64;

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
    let mut session = Session::default();
    let start = Instant::now();
    let mut runs = 0;
    let mut out = vec![0u8; 8192];
    let mut now = start;
    for line in data.split(|b| *b == b'\n') {
        now += Duration::from_secs(1);
        let mut todo = session.client_line(line, now);
        while let Some(action) = todo.pop() {
            match action {
                Action::Send { line, .. } => {
                    let sent = serde_json::from_slice::<serde_json::Value>(&line);
                    assert!(sent.is_ok(), "{}", String::from_utf8_lossy(&line));
                }
                Action::Core { ticket, line, .. } => {
                    runs += 1;
                    if runs > MAX_CORE_RUNS {
                        return;
                    }
                    let cx = Context {
                        now: 1_790_000_000 + (now - start).as_secs(),
                        principal: b"fuzz",
                        entropy: [runs as u8; 8],
                        access: Access::USER,
                    };
                    let h = engine.handle(&line, &cx, &mut out);
                    let answer = if h.responded { &out[..h.len] } else { &[][..] };
                    todo.extend(session.core_answer(ticket, answer, now));
                }
            }
        }
    }
    for action in session.tick(now + QUESTION_WAIT + Duration::from_secs(1)) {
        if let Action::Send { line, .. } = action {
            assert!(serde_json::from_slice::<serde_json::Value>(&line).is_ok());
        }
    }
});
