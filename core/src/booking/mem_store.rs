//! A fixed-capacity store in RAM (the panel's; also the reference for other stores' tests).

use heapless::{Deque, Vec};

use super::span::Minute;
use super::span::Span;
use super::store::{
    cancels_with_series, due, end_step, next_held_in, next_in_room_in, occupant, occurrence,
    Booking, BookingId, Commit, EndStep, Holder, NewBooking, Occurrence, Resized, SeriesCommit,
    SeriesIds, Status, Store, StoreError,
};
use super::trail::{latest, Actor, Change, Step, Trail};
use crate::seal::Nonce;

/// Changes a [`MemStore`] keeps in its trail, of all its bookings together: a ring, the
/// oldest forgotten first.
pub const MEM_TRAIL: usize = 32;

/// Up to `N` bookings in RAM.
#[derive(Debug, Default)]
pub struct MemStore<const N: usize> {
    bookings: Vec<Booking, N>,
    trail: Deque<(BookingId, Step), MEM_TRAIL>,
}

impl<const N: usize> MemStore<N> {
    /// An empty store.
    pub const fn new() -> Self {
        MemStore {
            bookings: Vec::new(),
            trail: Deque::new(),
        }
    }

    /// Keeps `change` by `by` of booking `id`, forgetting the oldest change when the ring is full.
    fn keep(&mut self, id: BookingId, change: Change, by: &Actor) {
        if self.trail.is_full() {
            self.trail.pop_front();
        }
        // Cannot fail: one was made free above.
        let _ = self.trail.push_back((id, Step { change, by: *by }));
    }

    /// The bookings, oldest first.
    pub fn bookings(&self) -> &[Booking] {
        &self.bookings
    }
}

impl<const N: usize> Store for MemStore<N> {
    async fn commit_by(&mut self, new: &NewBooking, by: &Actor) -> Result<Commit, StoreError> {
        if let Some(b) = self.made_by(&new.holder, &new.nonce).await? {
            return Ok(Commit::Replayed(b));
        }
        if let Some(b) = occupant(self, &new.room, new.span).await? {
            return Ok(Commit::Taken(b));
        }
        let id = self.bookings.len() as BookingId + 1;
        let b = Booking {
            id,
            new: new.clone(),
            status: Status::Active,
            checked_in: false,
            series: None,
        };
        self.bookings
            .push(b.clone())
            .map_err(|_| StoreError::Full)?;
        self.keep(id, Change::Made, by);
        Ok(Commit::Created(b))
    }

    async fn get(&mut self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        Ok(self.bookings.iter().find(|b| b.id == id).cloned())
    }

    async fn made_by(
        &mut self,
        holder: &Holder,
        nonce: &Nonce,
    ) -> Result<Option<Booking>, StoreError> {
        let same_operation = |b: &&Booking| b.new.nonce == *nonce && b.new.holder == *holder;
        Ok(self.bookings.iter().find(same_operation).cloned())
    }

    async fn next_held(
        &mut self,
        holder: &Holder,
        start: Minute,
        room: &str,
    ) -> Result<Option<Booking>, StoreError> {
        Ok(next_held_in(&self.bookings, holder, start, room).cloned())
    }

    async fn next_in_room(
        &mut self,
        room: &str,
        from: Minute,
    ) -> Result<Option<Booking>, StoreError> {
        Ok(next_in_room_in(&self.bookings, room, from).cloned())
    }

    async fn cancel(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        let may = |b: &&mut Booking| b.id == id && (by.operator || b.new.holder == by.holder);
        let Some(b) = self.bookings.iter_mut().find(may) else {
            return Ok(None);
        };
        let first = b.status != Status::Cancelled;
        b.status = Status::Cancelled;
        let b = b.clone();
        if first {
            self.keep(id, Change::Cancelled, by);
        }
        Ok(Some(b))
    }

    async fn trail(&mut self, id: BookingId) -> Result<Trail, StoreError> {
        let of = self.trail.iter().filter(|(b, _)| *b == id);
        Ok(latest(of.map(|(_, s)| *s)))
    }

    async fn set_end(
        &mut self,
        id: BookingId,
        by: &Actor,
        from: Minute,
        to: Minute,
    ) -> Result<Option<Resized>, StoreError> {
        let Some(b) = self.get(id).await?.filter(|b| b.new.holder == by.holder) else {
            return Ok(None);
        };
        let span = match end_step(&b, from, to) {
            EndStep::Move(span) => span,
            EndStep::Answer(done) => return Ok(Some(done)),
        };
        if let Some(added) = Span::new(from, to) {
            if let Some(other) = occupant(self, &b.new.room, added).await? {
                return Ok(Some(Resized::Taken(other)));
            }
        }
        let Some(s) = self.bookings.iter_mut().find(|s| s.id == id) else {
            return Ok(None);
        };
        s.new.span = span;
        let moved = s.clone();
        self.keep(id, Change::end_moved(from, to), by);
        Ok(Some(Resized::Moved(moved)))
    }

    async fn check_in(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        let theirs = |b: &&mut Booking| b.id == id && b.new.holder == by.holder;
        let Some(b) = self.bookings.iter_mut().find(theirs) else {
            return Ok(None);
        };
        let now_in = b.status == Status::Active && !b.checked_in;
        b.checked_in |= now_in;
        let b = b.clone();
        if now_in {
            self.keep(id, Change::CheckedIn, by);
        }
        Ok(Some(b))
    }

    async fn release_due(
        &mut self,
        now: Minute,
        window: u16,
        by: &Actor,
    ) -> Result<Option<Booking>, StoreError> {
        let Some(b) = self.bookings.iter_mut().find(|b| due(b, now, window)) else {
            return Ok(None);
        };
        b.status = Status::Released;
        let b = b.clone();
        self.keep(b.id, Change::Released, by);
        Ok(Some(b))
    }

    async fn commit_series(
        &mut self,
        base: &NewBooking,
        other: &str,
        occurrences: &[Occurrence],
        by: &Actor,
    ) -> Result<SeriesCommit, StoreError> {
        if let Some(first) = self.made_by(&base.holder, &base.nonce).await? {
            let series = first.series.unwrap_or(first.id);
            let ids = self.bookings.iter().filter(|b| b.series == Some(series));
            return Ok(SeriesCommit::Replayed(series, ids.map(|b| b.id).collect()));
        }
        let mut taken = 0u64;
        for (i, o) in occurrences.iter().enumerate() {
            let new = occurrence(base, other, o, i)?;
            if occupant(self, &new.room, new.span).await?.is_some() {
                taken |= 1 << i;
            }
        }
        if taken != 0 {
            return Ok(SeriesCommit::Taken(taken));
        }
        if self.bookings.capacity() - self.bookings.len() < occurrences.len() {
            return Err(StoreError::Full);
        }
        let series = self.bookings.len() as BookingId + 1;
        let mut ids = SeriesIds::new();
        for (i, o) in occurrences.iter().enumerate() {
            let id = self.bookings.len() as BookingId + 1;
            let b = Booking {
                id,
                new: occurrence(base, other, o, i)?,
                status: Status::Active,
                checked_in: false,
                series: Some(series),
            };
            self.bookings.push(b).map_err(|_| StoreError::Full)?;
            let _ = ids.push(id);
            self.keep(id, Change::Made, by);
        }
        Ok(SeriesCommit::Created(series, ids))
    }

    async fn cancel_series(
        &mut self,
        series: BookingId,
        from: Minute,
        by: &Actor,
    ) -> Result<Option<SeriesIds>, StoreError> {
        let first = self.bookings.iter().find(|b| b.id == series);
        if !first
            .is_some_and(|b| b.series == Some(series) && (by.operator || b.new.holder == by.holder))
        {
            return Ok(None);
        }
        let mut ids = SeriesIds::new();
        for b in self.bookings.iter_mut() {
            if cancels_with_series(b, series, from) {
                b.status = Status::Cancelled;
                let _ = ids.push(b.id);
            }
        }
        for id in &ids {
            self.keep(*id, Change::Cancelled, by);
        }
        Ok(Some(ids))
    }

    async fn next_in_series(
        &mut self,
        series: BookingId,
        after: BookingId,
    ) -> Result<Option<Booking>, StoreError> {
        let of = |b: &&Booking| b.series == Some(series) && b.id > after;
        Ok(self
            .bookings
            .iter()
            .filter(of)
            .min_by_key(|b| b.id)
            .cloned())
    }
}
