//! A store outage is logged once when it starts and once when it ends, not once per request:
//! while the store (PostgreSQL) is known to be down, the requests that fail because of it are
//! logged at debug level only.

use std::sync::atomic::{AtomicBool, Ordering};

use redmark_core::booking::StoreError;

/// Set while the booking store is unreachable (by `pg.rs`, which logs the transitions).
static STORE_DOWN: AtomicBool = AtomicBool::new(false);

/// Records that the store went down (`true`) or came back; returns whether that changed
/// anything, so the caller logs the start and the end of an outage once each.
pub fn store_down(down: bool) -> bool {
    STORE_DOWN.swap(down, Ordering::Relaxed) != down
}

/// Whether a tool fault `why` is the store failing while it is known to be down (then the
/// outage was already logged, and this request is not worth an ERROR line of its own).
pub fn is_known_outage(why: &str) -> bool {
    STORE_DOWN.load(Ordering::Relaxed) && why == StoreError::Io.message()
}

/// Logs a tool fault: ERROR, or debug during a known store outage.
pub fn tool_fault(why: &str) {
    if is_known_outage(why) {
        tracing::debug!("tool fault during the store outage: {why}");
    } else {
        tracing::error!("tool fault: {why}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_is_one_transition_each_way() {
        let io = StoreError::Io.message();
        assert!(!is_known_outage(io));
        assert!(store_down(true), "the start is news");
        assert!(!store_down(true), "the same outage again is not");
        assert!(is_known_outage(io));
        assert!(
            !is_known_outage("another fault"),
            "other faults stay errors"
        );
        assert!(store_down(false), "the end is news");
        assert!(!store_down(false));
        assert!(!is_known_outage(io));
    }
}
