//! Whether this server can serve: up, and its store answers a real read within
//! [`HEALTH_TIMEOUT`] (what `/healthz` says to a load balancer). The read counts in the store's
//! latency like any other.

use std::time::{Duration, Instant};

use redmark_core::booking::{Outcome, StoreOp};

use crate::metrics::metrics;
use crate::store::{Reading, SharedStore};

/// How long the health check waits for the store's answer (a PostgreSQL store that is down
/// or cut off makes the check fail after this, not after the store's own retries).
pub const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

/// The booking id the check reads: never a booking's (ids start at 1), so the read finds
/// nothing and no booking is ever in the answer.
const PROBE_ID: u32 = 0;

/// Reads one booking from `store` (none: a server without a store is healthy when up); `Err`
/// says why the store is not serving.
pub async fn check(store: Option<&dyn SharedStore>) -> Result<(), String> {
    check_within(store, HEALTH_TIMEOUT).await
}

/// [`check`], waiting at most `wait` for a store across the network.
async fn check_within(store: Option<&dyn SharedStore>, wait: Duration) -> Result<(), String> {
    let Some(store) = store else {
        return Ok(());
    };
    let began = Instant::now();
    let outcome = match store.read(&StoreOp::Get(PROBE_ID)) {
        Reading::Now(o) => o,
        Reading::Later(reading) => match tokio::time::timeout(wait, reading).await {
            Ok(o) => o,
            Err(_) => return Err(format!("the booking store did not answer within {wait:?}")),
        },
    };
    metrics().store_read(began.elapsed());
    match outcome {
        Outcome::Booking(Ok(_)) => Ok(()),
        Outcome::Booking(Err(e)) => Err(e.message().to_owned()),
        Outcome::Commit(_) => Err("the booking store answered a read with a write".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::group::Locked;
    use crate::store::{Write, Written};
    use redmark_core::booking::{Booking, BookingId, Holder, MemStore, Slot, StoreError};
    use redmark_core::seal::Nonce;

    /// A store that never answers a read (a PostgreSQL server cut off mid-connect).
    struct Silent;

    impl SharedStore for Silent {
        fn get(&self, _: BookingId) -> Result<Option<Booking>, StoreError> {
            Err(StoreError::Io)
        }
        fn made_by(&self, _: &Holder, _: &Nonce) -> Result<Option<Booking>, StoreError> {
            Err(StoreError::Io)
        }
        fn occupant(&self, _: &str, _: Slot) -> Result<Option<Booking>, StoreError> {
            Err(StoreError::Io)
        }
        fn next_held(&self, _: &Holder, _: Slot, _: &str) -> Result<Option<Booking>, StoreError> {
            Err(StoreError::Io)
        }
        fn write_group(&self, w: &[Write]) -> Vec<Written> {
            w.iter().map(|_| Written::Lost).collect()
        }
        fn read(&self, _: &StoreOp) -> Reading {
            Reading::Later(Box::pin(std::future::pending()))
        }
    }

    #[tokio::test]
    async fn a_store_that_answers_is_up_and_one_that_does_not_is_down_after_the_wait() {
        assert_eq!(check(None).await, Ok(()));
        let mem = Locked::new(MemStore::<4>::new());
        assert_eq!(check(Some(&mem)).await, Ok(()));
        let wait = Duration::from_millis(50);
        let e = check_within(Some(&Silent), wait).await.unwrap_err();
        assert_eq!(e, "the booking store did not answer within 50ms");
    }
}
