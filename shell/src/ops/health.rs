//! Whether this server can serve: up, and its store answers a real read within
//! [`HEALTH_TIMEOUT`] (what `/healthz` says to a load balancer). The read counts in the store's
//! latency like any other.

use std::time::Duration;

use crate::store::Admin;

/// How long the health check waits for the store's answer (a PostgreSQL store that is down
/// or cut off makes the check fail after this, not after the store's own retries).
pub const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

/// Reads one booking from `store` (none: a server without a store is healthy when up); `Err`
/// says why the store is not serving.
pub async fn check(store: Option<&dyn Admin>) -> Result<(), String> {
    check_within(store, HEALTH_TIMEOUT).await
}

/// [`check`], waiting at most `wait` for a store across the network.
async fn check_within(store: Option<&dyn Admin>, wait: Duration) -> Result<(), String> {
    let Some(store) = store else {
        return Ok(());
    };
    match tokio::time::timeout(wait, store.probe()).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(e.message().to_owned()),
        Err(_) => Err(format!("the booking store did not answer within {wait:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::redb::{RedbBookings, RedbStore};
    use redmark_core::booking::StoreError;
    use std::future::Future;
    use std::pin::Pin;

    /// A store that never answers a read (a PostgreSQL server cut off mid-connect).
    struct Silent;

    impl Admin for Silent {
        fn probe(&self) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + '_>> {
            Box::pin(std::future::pending())
        }
    }

    #[tokio::test]
    async fn a_store_that_answers_is_up_and_one_that_does_not_is_down_after_the_wait() {
        assert_eq!(check(None).await, Ok(()));
        let store = RedbBookings::new(RedbStore::in_memory().unwrap());
        assert_eq!(check(Some(&store)).await, Ok(()));
        let wait = Duration::from_millis(50);
        let e = check_within(Some(&Silent), wait).await.unwrap_err();
        assert_eq!(e, "the booking store did not answer within 50ms");
    }
}
