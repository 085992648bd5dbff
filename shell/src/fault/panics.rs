//! Panics while serving: one log line each, never a multi-line report on stderr, and a way to
//! catch a library's panic without any output at all (the caller says what went wrong).
//!
//! redb answers some damaged files with a panic rather than an error (a truncated file trips an
//! assertion while opening; a page of garbage reaches `unreachable!()` while reading). The store
//! catches those with [`catch_quiet`] and reports them itself; the host (`host/drive.rs`)
//! catches whatever else escapes the engine. The hook installed by [`install_hook`] turns any other panic
//! into one `ERROR` log line (message and location), or, when that log line would not be shown
//! (`REDMARK_LOG=off`, or no log set up, as in `redmark call`), one line written straight to
//! stderr: a panic is never silent. Inside [`catch_quiet`] it only notes the location, which
//! the caught panic's message then carries.

use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};

thread_local! {
    /// Set while [`catch_quiet`] runs on this thread: the hook says nothing.
    static QUIET: Cell<bool> = const { Cell::new(false) };
    /// Where the last quiet panic on this thread happened (`file:line`), for [`catch_quiet`].
    static QUIET_AT: Cell<Option<String>> = const { Cell::new(None) };
}

/// Replaces the default panic output (several lines, a backtrace hint) with one log line, and
/// with nothing inside [`catch_quiet`].
pub fn install_hook() {
    panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()));
        if QUIET.with(Cell::get) {
            QUIET_AT.with(|q| q.set(at));
            return;
        }
        let at = at.map(|a| format!(" at {a}")).unwrap_or_default();
        let message = message(info.payload());
        if tracing::enabled!(tracing::Level::ERROR) {
            tracing::error!("panic: {message}{at}");
        } else {
            eprintln!("redmark: panic: {message}{at}");
        }
    }));
}

/// Runs `f`, turning a panic into `Err(its message)` (with ` at file:line` when the hook noted
/// where) with nothing printed by the hook.
pub fn catch_quiet<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let was = QUIET.with(|q| q.replace(true));
    QUIET_AT.with(|q| q.set(None));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    r.map_err(|p| {
        let at = QUIET_AT.with(Cell::take);
        match at {
            Some(at) => format!("{} at {at}", message(&*p)),
            None => message(&*p),
        }
    })
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
