//! `--trace`: whether it is on, and how one wire message is printed to stderr.

use std::sync::atomic::{AtomicBool, Ordering};

static TRACE: AtomicBool = AtomicBool::new(false);

/// Turns `--trace` on or off for this process.
pub fn set_tracing(on: bool) {
    TRACE.store(on, Ordering::Relaxed);
}

/// Whether `--trace` is on.
pub fn tracing() -> bool {
    TRACE.load(Ordering::Relaxed)
}

/// Prints one wire message under `--trace`.
pub fn trace(dir: &str, msg: &str) {
    if tracing() {
        use std::io::Write as _;
        // One write under the lock: the server's forwarded stderr never lands inside a message.
        let _ = std::io::stderr()
            .lock()
            .write_all(format!("{dir} {msg}\n").as_bytes());
    }
}
