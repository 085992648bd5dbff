//! Panics while serving: one log line each, never a multi-line report on stderr, and a way to
//! catch a library's panic without any output at all (the caller says what went wrong).
//!
//! redb answers some damaged files with a panic rather than an error (a truncated file trips an
//! assertion while opening; a page of garbage reaches `unreachable!()` while reading). The store
//! catches those with [`catch_quiet`] and reports them itself; [`Shared`](super::shared) catches
//! whatever else escapes the engine. The hook installed by [`install_hook`] turns any other panic
//! into one `ERROR` log line (message and location).

use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};

thread_local! {
    /// Set while [`catch_quiet`] runs on this thread: the hook says nothing.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Replaces the default panic output (several lines, a backtrace hint) with one log line, and
/// with nothing inside [`catch_quiet`].
pub fn install_hook() {
    panic::set_hook(Box::new(|info| {
        if QUIET.with(Cell::get) {
            return;
        }
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        tracing::error!("panic: {}{at}", message(info.payload()));
    }));
}

/// Runs `f`, turning a panic into `Err(its message)` with nothing printed by the hook.
pub fn catch_quiet<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let was = QUIET.with(|q| q.replace(true));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    r.map_err(|p| message(&*p))
}

/// A panic payload as text.
pub fn message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}
