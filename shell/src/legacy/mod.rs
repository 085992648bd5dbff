//! Dual-era serving (spec 2026-07-28 §7): 2025-11-25 clients, which open with `initialize`, are
//! served by the same core as 2026-07-28 clients. A per-connection [`Session`](session::Session) (sans-IO) turns
//! their requests into 2026-07-28 requests and the core's answers back into 2025-11-25 shapes,
//! and bridges the red mark: a core `input_required` becomes real server→client
//! `elicitation/create` requests whose answers are sent back to the core with the sealed
//! `requestState`, until the call completes. [`stream`] and [`http`] hook it into the loops.

pub mod http;
mod rpc;
pub mod session;
mod shape;
pub mod stream;
mod table;

use std::time::Duration;

/// The 2025-11-25 revisions a legacy client may negotiate; the first is offered otherwise.
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25"];
/// The revision legacy requests are translated to for the core.
pub const CORE_VERSION: &str = "2026-07-28";
/// Questions one `input_required` round may ask (more: the call fails with a tool error).
pub const MAX_QUESTIONS_PER_CALL: usize = 4;
/// `input_required` rounds one call may take before it fails with a tool error.
pub const MAX_ROUNDS: u32 = 4;
/// How long a pushed question may wait for its answer before the call is given up.
pub const QUESTION_WAIT: Duration = Duration::from_secs(120);
/// Bridged `tools/call`s one session may have waiting for answers at once.
pub const MAX_CALLS_PER_SESSION: usize = 8;
/// Legacy HTTP sessions one listener holds at once (past that the least recently used idle
/// one goes; when every session has a call in flight, `initialize` gets 503).
pub const MAX_SESSIONS: usize = 256;
/// Legacy HTTP sessions one principal holds at once (past that its own least recently used
/// idle one goes; when all of its sessions have calls in flight, `initialize` gets 503).
pub const MAX_SESSIONS_PER_PRINCIPAL: usize = 32;

/// How long a question waits: [`QUESTION_WAIT`], or with the `test-hooks` feature
/// `REDMARK_TEST_QUESTION_WAIT_MS`, so end-to-end tests can watch a call being given up.
pub fn question_wait() -> Duration {
    #[cfg(feature = "test-hooks")]
    {
        use std::sync::OnceLock;
        static WAIT: OnceLock<Option<Duration>> = OnceLock::new();
        let w = WAIT.get_or_init(|| {
            let ms = std::env::var("REDMARK_TEST_QUESTION_WAIT_MS").ok()?;
            ms.parse().ok().map(Duration::from_millis)
        });
        if let Some(w) = w {
            return *w;
        }
    }
    QUESTION_WAIT
}
