//! The one engine every transport feeds: an async `Mutex<Engine>` held only around `handle`.
//!
//! `handle` runs on tokio's blocking pool because a booking's durable commit (an fsync) happens
//! inside it; everything else it does takes microseconds. The lock is taken (asynchronously)
//! before going to the blocking pool, so requests waiting their turn are parked futures, not
//! parked blocking threads: at most one blocking thread is busy with the engine at a time.
//!
//! Every request gets an answer: a panic while the engine handles it (a bug, or a library
//! meeting damage it did not expect) is caught here, logged, and answered with a JSON-RPC
//! `-32603` error carrying the request's id (read with the core's envelope parser), on every
//! transport; serving goes on. Continuing with the same engine is safe: it holds only the
//! sealing keys, the configuration, the floor and the store, and keeps no state between
//! requests (an open question travels in the client's sealed `requestState`); the store's
//! writes are redb transactions, so a panic mid-request commits nothing, and the redb store
//! catches redb's own panics and then refuses further use of the file (see `store.rs`).
//! (The lock guard is dropped while unwinding, so the engine is free again either way.)

use std::panic::{self, AssertUnwindSafe};
#[cfg(test)]
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use redmark_core::engine::{fault_answer, Note};
use redmark_core::limits::OUT;
use redmark_core::wire::lines::Line;
use redmark_core::{App, Context, Engine, Handled, HttpHeaders};
use tokio::sync::Mutex;

use super::keys::entropy;

/// An input the engine is asked about, owned so it can cross to the blocking pool.
pub enum Input {
    /// One framed line from a byte stream (blank lines are ignored, over-long ones get -32600).
    Line(Vec<u8>),
    /// A line longer than the framing limit.
    TooLong,
    /// One HTTP body with its MCP headers.
    Http {
        body: Vec<u8>,
        headers: OwnedHeaders,
    },
}

/// `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and every `Mcp-Param-*` as received.
#[derive(Default)]
pub struct OwnedHeaders {
    pub version: Option<String>,
    pub method: Option<String>,
    pub name: Option<String>,
    /// `(name after "Mcp-Param-", value)`.
    pub params: Vec<(String, String)>,
}

/// What came back: `bytes` holds the answer lines joined by `\n` (empty for a notification).
pub struct Output {
    pub bytes: Vec<u8>,
    pub handled: Handled,
}

/// The engine behind every transport.
pub struct Shared<A: App> {
    engine: Arc<Mutex<Engine<A>>>,
    /// Requests waiting for the engine (as futures, not threads); test builds only.
    #[cfg(test)]
    waiting: AtomicUsize,
}

impl<A: App + Send + 'static> Shared<A> {
    /// Shares `engine`.
    pub fn new(engine: Engine<A>) -> Arc<Self> {
        Arc::new(Shared {
            engine: Arc::new(Mutex::new(engine)),
            #[cfg(test)]
            waiting: AtomicUsize::new(0),
        })
    }

    /// Runs one input through the engine on the blocking pool.
    pub async fn handle(self: &Arc<Self>, input: Input, principal: Arc<[u8]>) -> Output {
        // Wait for the engine here, as a future; the blocking thread only ever runs `handle`.
        let mut engine = {
            #[cfg(test)]
            let _waiting = Waiting::new(&self.waiting);
            Arc::clone(&self.engine).lock_owned().await
        };
        let task = tokio::task::spawn_blocking(move || {
            // A panic is answered, not propagated (see the module doc for why the engine
            // stays usable); the panic hook has logged where it happened.
            panic::catch_unwind(AssertUnwindSafe(|| {
                inject_panic(&input);
                handle_now(&mut engine, &input, &principal)
            }))
            .unwrap_or_else(|_| {
                tracing::error!("a request panicked in the engine; answered with -32603");
                // `fault` re-reads the input with the envelope parser, which may be what
                // panicked: a second panic gets the fixed id-less answer instead.
                panic::catch_unwind(AssertUnwindSafe(|| fault(&input))).unwrap_or_else(|_| {
                    tracing::error!("the -32603 answer panicked too; answered without an id");
                    fault_without_id()
                })
            })
        });
        match task.await {
            Ok(out) => out,
            // The task panicked outside both catches (not expected), or was cancelled at
            // runtime shutdown, when nobody waits for the answer.
            Err(e) => {
                tracing::error!("engine task failed: {e}");
                Output {
                    bytes: Vec::new(),
                    handled: Handled {
                        len: 0,
                        status: 500,
                        responded: false,
                        note: None,
                    },
                }
            }
        }
    }

    /// How many requests are waiting for the engine.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }
}

/// Counts a request as waiting for the engine until dropped (also when the future is).
#[cfg(test)]
struct Waiting<'a>(&'a AtomicUsize);

#[cfg(test)]
impl<'a> Waiting<'a> {
    fn new(n: &'a AtomicUsize) -> Self {
        n.fetch_add(1, Ordering::SeqCst);
        Waiting(n)
    }
}

#[cfg(test)]
impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The `-32603` line for when even [`fault`] panicked: no id, since reading it is what failed.
const FAULT_WITHOUT_ID: &[u8] =
    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#;

/// The answer [`FAULT_WITHOUT_ID`] as an output.
fn fault_without_id() -> Output {
    Output {
        bytes: FAULT_WITHOUT_ID.to_vec(),
        handled: Handled {
            len: FAULT_WITHOUT_ID.len(),
            status: 500,
            responded: true,
            note: None,
        },
    }
}

/// The `-32603` answer to an input whose handling panicked.
fn fault(input: &Input) -> Output {
    let mut out = vec![0u8; OUT];
    let bytes = match input {
        Input::Line(b) | Input::Http { body: b, .. } => Some(&b[..]),
        Input::TooLong => None,
    };
    let handled = fault_answer(bytes, &mut out);
    out.truncate(handled.len);
    Output {
        bytes: out,
        handled,
    }
}

/// Test builds only: `REDMARK_TEST_PANIC=<method>` makes every request of that method panic
/// where the engine would run, so end-to-end tests can check that a panicking request is
/// answered on every transport. Compiled out of release builds.
#[cfg(debug_assertions)]
fn inject_panic(input: &Input) {
    use std::sync::OnceLock;
    static METHOD: OnceLock<Option<String>> = OnceLock::new();
    let Some(method) = METHOD.get_or_init(|| std::env::var("REDMARK_TEST_PANIC").ok()) else {
        return;
    };
    let (Input::Line(b) | Input::Http { body: b, .. }) = input else {
        return;
    };
    if let Ok(env) = redmark_core::wire::envelope::read(b) {
        if env.method.eq_str(method) {
            panic!("REDMARK_TEST_PANIC: injected panic for {method}");
        }
    }
}

#[cfg(not(debug_assertions))]
fn inject_panic(_: &Input) {}

fn handle_now<A: App>(engine: &mut Engine<A>, input: &Input, principal: &[u8]) -> Output {
    let mut out = vec![0u8; OUT];
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let cx = Context {
        now,
        principal,
        entropy: entropy(),
    };
    let handled = match input {
        Input::Line(l) => engine.handle_line(Line::Message(l), &cx, &mut out),
        Input::TooLong => engine.handle_line(Line::TooLong, &cx, &mut out),
        Input::Http { body, headers: h } => {
            let params: Vec<(&str, &str)> = h
                .params
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str()))
                .collect();
            let headers = HttpHeaders {
                version: h.version.as_deref(),
                method: h.method.as_deref(),
                name: h.name.as_deref(),
                params: &params,
            };
            engine.handle_http(body, &cx, &headers, &mut out)
        }
    };
    if let Some(note) = handled.note {
        log_note(note);
    }
    out.truncate(handled.len);
    Output {
        bytes: out,
        handled,
    }
}

fn log_note(note: Note) {
    match note {
        Note::StateRejected(why) => tracing::info!("requestState rejected: {why}"),
        Note::Internal(why) => tracing::error!("tool fault: {why}"),
        other => tracing::warn!("engine: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redmark_core::engine::Config;
    use redmark_core::fixtures::Fixtures;
    use redmark_core::seal::{Key, KeyRing};
    use std::time::Duration;

    /// Requests waiting for the engine hold no blocking thread: with two blocking threads and
    /// the engine busy, eight waiting requests still leave the pool free for other work.
    #[test]
    fn waiting_requests_do_not_hold_blocking_threads() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let key = Key::new(1, &[7u8; 32]).unwrap();
            let shared = Shared::new(Engine::new(Fixtures, KeyRing::new(key), Config::default()));
            let busy = Arc::clone(&shared.engine).lock_owned().await;
            let principal: Arc<[u8]> = Arc::from(&b"t"[..]);
            let waiting: Vec<_> = (0..8)
                .map(|i| {
                    let (s, p) = (Arc::clone(&shared), Arc::clone(&principal));
                    let line = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#);
                    tokio::spawn(async move { s.handle(Input::Line(line.into_bytes()), p).await })
                })
                .collect();
            // All eight are parked on the engine's lock before the pool is probed.
            tokio::time::timeout(Duration::from_secs(30), async {
                while shared.waiting() < 8 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            })
            .await
            .expect("the eight requests never all waited for the engine");
            let other = tokio::task::spawn_blocking(|| 42);
            let got = tokio::time::timeout(Duration::from_secs(30), other).await;
            assert_eq!(
                got.ok().and_then(Result::ok),
                Some(42),
                "blocking pool starved"
            );
            drop(busy);
            for w in waiting {
                let out = tokio::time::timeout(Duration::from_secs(30), w)
                    .await
                    .expect("answered")
                    .unwrap();
                assert!(out.handled.responded);
            }
        });
    }
}
