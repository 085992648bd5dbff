//! What a 2025-11-25 client sends through the dual-era bridge (`legacy::session::Session`):
//! its lines, driven as the server drives them (`legacy::stream::drive`: the session's
//! actions in order, the core's answers through a real engine, the booking floor on a
//! `MemStore`), questions pushed to the client and its answers (or none, until their wait runs
//! out) retried with the sealed state. Never a panic, and every line the bridge sends the
//! client is one JSON value.
//!
//! Input: the client's lines, separated by `\n`; each arrives a second after the one before,
//! and a last tick comes after every question's wait.
#![no_main]

use std::future::Future;
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use redmark::legacy::session::{Action, Session};
use redmark::legacy::stream::drive;
use redmark::legacy::QUESTION_WAIT;
use redmark_core::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
use redmark_core::engine::{Config, ServerInfo};
use redmark_core::seal::{Key, KeyRing};
use redmark_core::{Access, Context, Engine};

/// Core round trips one input may cause; past them the core answers nothing (the bridge then
/// ends the request itself).
const MAX_CORE_RUNS: usize = 64;

/// `f`'s output: every future here is ready at once (the engine answers synchronously).
fn ready<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut TaskContext::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => unreachable!("drive awaits only the engine, which answers at once"),
    }
}

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
    let mut now = start;
    let mut runs = 0usize;
    let mut out = vec![0u8; 8192];
    let mut run = |actions: Vec<Action>, session: &mut Session, now: Instant| {
        let core = |line: Vec<u8>| {
            runs += 1;
            let cx = Context {
                now: 1_790_000_000 + (now - start).as_secs(),
                principal: b"fuzz",
                entropy: [runs as u8; 8],
                access: Access::USER,
            };
            let answer = (runs <= MAX_CORE_RUNS).then(|| {
                let h = engine.handle(&line, &cx, &mut out);
                if h.responded {
                    out[..h.len].to_vec()
                } else {
                    Vec::new()
                }
            });
            std::future::ready(answer)
        };
        for (line, _, _) in ready(drive(session, actions, core)) {
            let sent = serde_json::from_slice::<serde_json::Value>(&line);
            assert!(sent.is_ok(), "{}", String::from_utf8_lossy(&line));
        }
    };
    for line in data.split(|b| *b == b'\n') {
        now += Duration::from_secs(1);
        let actions = session.client_line(line, now);
        run(actions, &mut session, now);
    }
    let later = now + QUESTION_WAIT + Duration::from_secs(1);
    let actions = session.tick(later);
    run(actions, &mut session, later);
});
