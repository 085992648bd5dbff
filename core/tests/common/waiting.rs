//! A store that waits like a timer (each operation pending twice, woken by its waker) and a
//! test host that polls only when woken, so a handling that spins or stalls fails the test.

use core::future::Future;
use core::pin::pin;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use core::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

use redmark_core::booking::{
    Actor, Booking, BookingId, Commit, Holder, Minute, NewBooking, Occurrence, Resized,
    SeriesCommit, SeriesIds, Store, StoreError, Trail,
};
use redmark_core::seal::Nonce;

/// Polls a [`Tick`] returned `Pending` before it was ready (all ticks, all tests).
pub static TICKS: AtomicUsize = AtomicUsize::new(0);

/// A future pending `left` more times, waking its waker each time as a timer that fires would.
pub struct Tick {
    left: u8,
}

impl Tick {
    /// Pending twice, then ready.
    pub fn twice() -> Self {
        Tick { left: 2 }
    }
}

impl Future for Tick {
    type Output = ();
    fn poll(mut self: core::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.left == 0 {
            return Poll::Ready(());
        }
        self.left -= 1;
        TICKS.fetch_add(1, Ordering::Relaxed);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// `S`, each operation after a [`Tick::twice`].
pub struct Waiting<S>(pub S);

impl<S: Store> Store for Waiting<S> {
    async fn commit_by(&mut self, new: &NewBooking, by: &Actor) -> Result<Commit, StoreError> {
        Tick::twice().await;
        self.0.commit_by(new, by).await
    }
    async fn cancel(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        Tick::twice().await;
        self.0.cancel(id, by).await
    }
    async fn trail(&mut self, id: BookingId) -> Result<Trail, StoreError> {
        Tick::twice().await;
        self.0.trail(id).await
    }
    async fn get(&mut self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        Tick::twice().await;
        self.0.get(id).await
    }
    async fn made_by(
        &mut self,
        holder: &Holder,
        nonce: &Nonce,
    ) -> Result<Option<Booking>, StoreError> {
        Tick::twice().await;
        self.0.made_by(holder, nonce).await
    }
    async fn next_held(
        &mut self,
        holder: &Holder,
        start: Minute,
        room: &str,
    ) -> Result<Option<Booking>, StoreError> {
        Tick::twice().await;
        self.0.next_held(holder, start, room).await
    }
    async fn next_in_room(
        &mut self,
        room: &str,
        from: Minute,
    ) -> Result<Option<Booking>, StoreError> {
        Tick::twice().await;
        self.0.next_in_room(room, from).await
    }
    async fn set_end(
        &mut self,
        id: BookingId,
        by: &Actor,
        from: Minute,
        to: Minute,
    ) -> Result<Option<Resized>, StoreError> {
        Tick::twice().await;
        self.0.set_end(id, by, from, to).await
    }
    async fn check_in(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        Tick::twice().await;
        self.0.check_in(id, by).await
    }
    async fn release_due(
        &mut self,
        now: Minute,
        window: u16,
        by: &Actor,
    ) -> Result<Option<Booking>, StoreError> {
        Tick::twice().await;
        self.0.release_due(now, window, by).await
    }
    async fn commit_series(
        &mut self,
        base: &NewBooking,
        other: &str,
        occurrences: &[Occurrence],
        by: &Actor,
    ) -> Result<SeriesCommit, StoreError> {
        Tick::twice().await;
        self.0.commit_series(base, other, occurrences, by).await
    }
    async fn cancel_series(
        &mut self,
        series: BookingId,
        from: Minute,
        by: &Actor,
    ) -> Result<Option<SeriesIds>, StoreError> {
        Tick::twice().await;
        self.0.cancel_series(series, from, by).await
    }
    async fn next_in_series(
        &mut self,
        series: BookingId,
        after: BookingId,
    ) -> Result<Option<Booking>, StoreError> {
        Tick::twice().await;
        self.0.next_in_series(series, after).await
    }
}

/// Set by [`WOKEN_WAKER`]'s wake.
static WOKEN: AtomicBool = AtomicBool::new(false);

const VTABLE: RawWakerVTable = RawWakerVTable::new(
    |_| RawWaker::new(core::ptr::null(), &VTABLE),
    |_| WOKEN.store(true, Ordering::SeqCst),
    |_| WOKEN.store(true, Ordering::SeqCst),
    |_| {},
);

/// Runs `f` to its end, polling it only after it woke its waker; panics if it is pending
/// with no wake to come (a stall). Returns its output and how many times it was polled.
pub fn block_on<F: Future>(f: F) -> (F::Output, usize) {
    let mut f = pin!(f);
    // SAFETY: the vtable's functions never read the data pointer, so null is a valid one.
    let waker = unsafe { Waker::from_raw(RawWaker::new(core::ptr::null(), &VTABLE)) };
    let mut cx = Context::from_waker(&waker);
    let mut polls = 0;
    loop {
        WOKEN.store(false, Ordering::SeqCst);
        polls += 1;
        if let Poll::Ready(out) = f.as_mut().poll(&mut cx) {
            return (out, polls);
        }
        assert!(WOKEN.load(Ordering::SeqCst), "pending with no wake to come");
    }
}
