//! The release timer: every [`RELEASE_EVERY`] the store releases the bookings nobody checked
//! in to within the floor's window (the core has no timer; this is its clock).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redmark_core::booking::{release_due, Floor};

use crate::store::Bookings;

/// How often a server asks its store to release bookings whose check-in window has passed.
pub const RELEASE_EVERY: Duration = Duration::from_secs(15);

/// The timer on `store` (a handle of its own) when the site has a check-in window (every
/// building has the floor file's), for the caller to spawn: it runs at once and then every
/// [`RELEASE_EVERY`], so a restart runs it again and a booking whose window passed while no
/// server ran is released at the first run if it is still under way. Each release is one
/// atomic store operation, so instances sharing a store never release a booking twice; its
/// trail names this instance by its process id (as a caller's [`Actor`] does).
///
/// [`Actor`]: redmark_core::booking::Actor
pub fn timer<S: Bookings>(
    site: &'static [Floor<'static>],
    store: &S,
) -> Option<impl std::future::Future<Output = ()>> {
    let window = site.first().and_then(|f| f.check_in_minutes)?;
    let mut store = store.handle();
    Some(async move {
        let mut every = tokio::time::interval(RELEASE_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let run = release_due(&mut store, Some(window), now, std::process::id(), |b| {
                tracing::info!(booking = b.id, room = %b.new.room, "released: not checked in");
            });
            match run.await {
                Ok(0) => {}
                Ok(n) => tracing::info!("released {n} bookings nobody checked in to"),
                Err(e) => tracing::warn!("release of unchecked bookings: {e} (tried again later)"),
            }
        }
    })
}
