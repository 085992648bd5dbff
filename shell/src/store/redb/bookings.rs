//! The redb store as the booking tools hold it: reads on the calling thread, writes through
//! the group committer, each handle in its connection's read-after-write order.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use redmark_core::booking::{
    Actor, Booking, BookingId, Commit, Holder, Minute, NewBooking, Occurrence, Resized,
    SeriesCommit, SeriesIds, Store, StoreError, Trail,
};
use redmark_core::seal::Nonce;

use super::file::RedbStore;
use super::group::Committer;
use crate::metrics::metrics;
use crate::store::changes::{self, Change, Changes};
use crate::store::{Admin, Bookings, Fence, Snapshot, PROBE_ID};

/// One engine's handle on a redb store ([`RedbBookings::new`], then
/// [`handle`](Bookings::handle) per engine). The store is released when the last handle is
/// dropped, after the committer made every write sent.
pub struct RedbBookings {
    store: Arc<RedbStore>,
    pub(super) committer: Arc<Committer>,
    fence: Fence,
    /// Where its committed changes are told.
    changes: Arc<Changes>,
}

impl RedbBookings {
    /// The bookings in `store`; the committing thread starts with the first write.
    pub fn new(store: RedbStore) -> Self {
        let (store, changes) = (Arc::new(store), Changes::new());
        RedbBookings {
            committer: Arc::new(Committer::new(Arc::clone(&store), Arc::clone(&changes))),
            store,
            fence: Fence::default(),
            changes,
        }
    }

    /// The store itself (tests, tools).
    pub fn store(&self) -> &RedbStore {
        &self.store
    }

    /// A read on this thread, after the connection's earlier writes, counted in the store's
    /// read latency.
    async fn read<T>(&self, read: impl FnOnce(&RedbStore) -> T) -> T {
        self.fence.wait_for_earlier().await;
        let began = Instant::now();
        let got = read(&self.store);
        // OPS (crate::metrics): store latency.
        metrics().store_read(began.elapsed());
        got
    }
}

impl Store for RedbBookings {
    async fn commit_by(&mut self, new: &NewBooking, by: &Actor) -> Result<Commit, StoreError> {
        self.fence.queued_behind_earlier();
        let (new, by) = (new.clone(), *by);
        let tell = |made: &Result<Commit, StoreError>, _: &RedbStore| {
            made.as_ref().map_or(vec![], changes::of_commit)
        };
        let made = self
            .committer
            .write(move |t| t.book(&new, &by), tell)
            .await?;
        metrics().committed(&made);
        made
    }

    async fn cancel(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        self.fence.queued_behind_earlier();
        let by = *by;
        let made = self
            .committer
            .write(move |t| t.cancel(id, &by), |b, _| changes::of_booking(b))
            .await;
        metrics().cancelled(&made);
        made
    }

    async fn trail(&mut self, id: BookingId) -> Result<Trail, StoreError> {
        self.read(|s| s.trail(id)).await
    }

    async fn get(&mut self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        self.read(|s| s.get(id)).await
    }

    async fn made_by(
        &mut self,
        holder: &Holder,
        nonce: &Nonce,
    ) -> Result<Option<Booking>, StoreError> {
        self.read(|s| s.made_by(holder, nonce)).await
    }

    async fn next_held(
        &mut self,
        holder: &Holder,
        start: Minute,
        room: &str,
    ) -> Result<Option<Booking>, StoreError> {
        self.read(|s| s.next_held(holder, start, room)).await
    }

    async fn next_in_room(
        &mut self,
        room: &str,
        from: Minute,
    ) -> Result<Option<Booking>, StoreError> {
        self.read(|s| s.next_in_room(room, from)).await
    }

    async fn set_end(
        &mut self,
        id: BookingId,
        by: &Actor,
        from: Minute,
        to: Minute,
    ) -> Result<Option<Resized>, StoreError> {
        self.fence.queued_behind_earlier();
        let by = *by;
        let tell = move |r: &Option<Resized>, _: &RedbStore| changes::of_resized(r, from);
        self.committer
            .write(move |t| t.set_end(id, &by, from, to), tell)
            .await
    }

    async fn check_in(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        self.fence.queued_behind_earlier();
        let by = *by;
        self.committer
            .write(move |t| t.check_in(id, &by), |b, _| changes::of_booking(b))
            .await
    }

    async fn release_due(
        &mut self,
        now: Minute,
        window: u16,
        by: &Actor,
    ) -> Result<Option<Booking>, StoreError> {
        self.fence.queued_behind_earlier();
        let by = *by;
        self.committer
            .write(
                move |t| t.release_due(now, window, &by),
                |b, _| changes::of_booking(b),
            )
            .await
    }

    async fn commit_series(
        &mut self,
        base: &NewBooking,
        other: &str,
        occurrences: &[Occurrence],
        by: &Actor,
    ) -> Result<SeriesCommit, StoreError> {
        self.fence.queued_behind_earlier();
        let (base, other, occurrences, by) =
            (base.clone(), other.to_owned(), occurrences.to_vec(), *by);
        let told = (base.clone(), other.clone(), occurrences.clone());
        let tell = move |made: &Result<SeriesCommit, StoreError>, _: &RedbStore| {
            let (base, other, occurrences) = told;
            made.as_ref().map_or(vec![], |c| {
                changes::of_series(&base, &other, &occurrences, c)
            })
        };
        self.committer
            .write(
                move |t| t.book_series(&base, &other, &occurrences, &by),
                tell,
            )
            .await?
    }

    async fn cancel_series(
        &mut self,
        series: BookingId,
        from: Minute,
        by: &Actor,
    ) -> Result<Option<SeriesIds>, StoreError> {
        self.fence.queued_behind_earlier();
        let by = *by;
        // The cancelled bookings' rooms and times, read back after the commit.
        let tell = |ids: &Option<SeriesIds>, store: &RedbStore| {
            let ids = ids.iter().flatten();
            let cancelled = ids.filter_map(|&id| store.get(id).ok().flatten());
            cancelled.map(|b| Change::of(&b)).collect()
        };
        self.committer
            .write(move |t| t.cancel_series(series, from, &by), tell)
            .await
    }

    async fn next_in_series(
        &mut self,
        series: BookingId,
        after: BookingId,
    ) -> Result<Option<Booking>, StoreError> {
        self.read(|s| s.next_in_series(series, after)).await
    }
}

impl Bookings for RedbBookings {
    fn handle(&self) -> Self {
        RedbBookings {
            store: Arc::clone(&self.store),
            committer: Arc::clone(&self.committer),
            fence: Fence::default(),
            changes: Arc::clone(&self.changes),
        }
    }

    fn fence(&self) -> &Fence {
        &self.fence
    }

    fn changes(&self) -> Option<Arc<Changes>> {
        Some(Arc::clone(&self.changes))
    }
}

impl Admin for RedbBookings {
    fn probe(&self) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + '_>> {
        // The operator's own handle: never fenced, so this reads at once.
        Box::pin(async move { self.read(|s| s.get(PROBE_ID)).await.map(drop) })
    }

    fn snapshot(&self, to: std::fs::File) -> Result<Snapshot, String> {
        self.store.snapshot(to)
    }
}
