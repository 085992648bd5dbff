//! The booking store: the one trait that lists what a tool may ask of where bookings live (RAM
//! or flash on a panel, a durable database on a desktop), so at-most-once is decided there.

use heapless::String;
use sha2::{Digest, Sha256};

use super::span::{Minute, Span};
use super::trail::{Actor, Trail};
use crate::engine::{Access, Call, CallError};
use crate::limits::{MAX_ROOM_ID, MAX_TITLE};
use crate::seal::Nonce;

/// A room id as stored.
pub type RoomId = String<MAX_ROOM_ID>;
/// A meeting's title as its organiser gave it (empty: none).
pub type Title = String<MAX_TITLE>;
/// A booking number (`bk_<n>` on the wire).
pub type BookingId = u32;
/// The first 8 bytes of SHA-256 of the principal who booked.
pub type Holder = [u8; 8];

/// Whether a booking still holds its room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Holds the room.
    Active,
    /// Released by `cancel_booking`.
    Cancelled,
    /// Released because nobody checked in within the floor's check-in window: its time is free
    /// again.
    Released,
}

/// A booking to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewBooking {
    /// The room.
    pub room: RoomId,
    /// When.
    pub span: Span,
    /// What the meeting is called (empty if not given).
    pub title: Title,
    /// People expected (0 if unknown).
    pub attendees: u16,
    /// Who books.
    pub holder: Holder,
    /// The operation's nonce: committing the same nonce again returns the same booking.
    pub nonce: Nonce,
}

/// A booking as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Booking {
    /// Its number.
    pub id: BookingId,
    /// What was booked.
    pub new: NewBooking,
    /// Whether it still holds the room.
    pub status: Status,
    /// Whether its holder checked in (`check_in`): a checked-in booking is never released.
    pub checked_in: bool,
    /// The series it is an occurrence of (the series' first booking's id), if any
    /// ([`Store::commit_series`]; the panel's flash log keeps none).
    pub series: Option<BookingId>,
}

/// One occurrence of a series to book: its time, and whether it goes in the other room
/// [`Store::commit_series`] is given instead of the series' own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occurrence {
    /// When.
    pub span: Span,
    /// In the other room.
    pub elsewhere: bool,
}

/// The ids of a series' bookings, in the order of its occurrences.
pub type SeriesIds = heapless::Vec<BookingId, { crate::limits::MAX_OCCURRENCES }>;

/// What [`Store::commit_series`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeriesCommit {
    /// Every occurrence booked, durable before this returns: the series' id (its first
    /// booking's) and each booking's id.
    Created(BookingId, SeriesIds),
    /// This nonce had already booked this series: the same one, nothing new.
    Replayed(BookingId, SeriesIds),
    /// The occurrences (bit `i`: occurrence `i`) an active booking holds some of: nothing
    /// was booked.
    Taken(u64),
    /// This store keeps no series (the panel's flash log): nothing was booked.
    Unsupported,
}

/// The nonce occurrence `i` of a series booked under operation `nonce` is kept under: the
/// first its operation's own (what [`Store::made_by`] finds), each later one derived from it.
pub fn occurrence_nonce(nonce: &Nonce, i: usize) -> Nonce {
    if i == 0 {
        return *nonce;
    }
    let d = Sha256::new()
        .chain_update(b"redmark series occurrence")
        .chain_update(nonce)
        .chain_update((i as u32).to_be_bytes())
        .finalize();
    let mut n = Nonce::default();
    let len = n.len();
    n.copy_from_slice(&d[..len]);
    n
}

/// What [`Store::commit`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Commit {
    /// A new booking, durable before this returns.
    Created(Booking),
    /// This nonce had already booked: the same booking, nothing new.
    Replayed(Booking),
    /// The room is held for part of that time by this (other) booking.
    Taken(Booking),
}

/// What [`Store::set_end`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resized {
    /// The booking as it now stands, ending where asked (also when it already did: a retry).
    Moved(Booking),
    /// This other active booking of the room holds some of the time added.
    Taken(Booking),
    /// The booking no longer ends where the caller saw it end, or is cancelled: as it stands,
    /// unchanged.
    Changed(Booking),
}

/// What [`Store::set_end`] does to booking `b` (its holder's): answer at once, or give it
/// a new span once no other booking holds `from..to` (when `to` is later than `from`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndStep {
    /// The answer, nothing to write.
    Answer(Resized),
    /// The span to write.
    Move(Span),
}

/// The [`EndStep`] for booking `b`, seen ending at `from`, asked to end at `to`.
pub fn end_step(b: &Booking, from: Minute, to: Minute) -> EndStep {
    let active = b.status == Status::Active;
    if active && b.new.span.end == to {
        return EndStep::Answer(Resized::Moved(b.clone()));
    }
    match Span::new(b.new.span.start, to) {
        Some(span) if active && b.new.span.end == from => EndStep::Move(span),
        _ => EndStep::Answer(Resized::Changed(b.clone())),
    }
}

/// The booking occurrence `i` of a series is ([`Store::commit_series`]): `base` at its span,
/// in its room or `other`, under its own nonce.
pub fn occurrence(
    base: &NewBooking,
    other: &str,
    o: &Occurrence,
    i: usize,
) -> Result<NewBooking, StoreError> {
    let mut new = base.clone();
    new.span = o.span;
    new.nonce = occurrence_nonce(&base.nonce, i);
    if o.elsewhere {
        // The tool names a room of the floor, whose id fits.
        new.room = RoomId::try_from(other).map_err(|_| StoreError::Io)?;
    }
    Ok(new)
}

/// A store failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError {
    /// No room for another booking.
    Full,
    /// The storage failed; nothing was changed.
    Io,
    /// The stored data is damaged or unreadable (e.g. a record or page that does not decode);
    /// nothing was changed, and retrying will not help until the operator restores the store.
    Corrupt,
}

impl StoreError {
    /// What a client (and the log) is told about this failure.
    pub fn message(self) -> &'static str {
        match self {
            StoreError::Full => "The booking store is full",
            StoreError::Io => "The booking store failed; nothing was changed",
            StoreError::Corrupt => {
                "The booking store is damaged; nothing was changed (the server's operator must \
                 restore it)"
            }
        }
    }
}

/// The same words the client is told ([`StoreError::message`]).
impl core::fmt::Display for StoreError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.message())
    }
}

/// A store failure ends a call as a [`CallError::Backend`] in the store's own words.
impl From<StoreError> for CallError {
    // Not inlined: one call per `?` keeps the panel's flash as small as the old one-byte error.
    #[inline(never)]
    fn from(e: StoreError) -> Self {
        CallError::Backend(e.message())
    }
}

impl core::error::Error for StoreError {}

/// Where bookings live, held by the app: every operation a tool may ask, each atomic.
///
/// The methods are `async`, the embedded idiom for the application's own I/O
/// (`embedded-storage-async`, embassy): a store across a network or a bus awaits it, with no
/// heap and no busy loop, and a synchronous store (RAM, a panel's flash) writes ordinary
/// bodies that are ready on the first poll, so [`Engine::handle`](crate::Engine::handle)
/// serves it in one call. Adding an operation is this trait's method, the tool that calls it,
/// and each store's implementation.
// The futures' auto traits are left to each implementation: a threaded host names its store's
// concrete type and the compiler sees whether its futures are `Send`.
#[allow(async_fn_in_trait)]
pub trait Store {
    /// Books `new` unless the same holder's nonce already booked (then returns that booking)
    /// or an active booking of the room overlaps its span, keeping `by` in a created booking's
    /// trail. A `Created` booking is durable when this returns.
    async fn commit_by(&mut self, new: &NewBooking, by: &Actor) -> Result<Commit, StoreError>;
    /// [`Store::commit_by`] by the booking's own holder, nothing else said (a store's tests, a
    /// host booking for itself).
    async fn commit(&mut self, new: &NewBooking) -> Result<Commit, StoreError> {
        self.commit_by(new, &Actor::holder(new.holder)).await
    }
    /// Marks booking `id` cancelled if `by` holds it or is an operator (idempotent), keeping
    /// `by` in its trail; returns it as it now stands, or `None` when there is no booking `id`
    /// `by` may cancel (the store, not only the tool, refuses anyone else's). Durable when this
    /// returns.
    async fn cancel(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError>;
    /// Booking `id`'s trail, oldest first (at most [`TRAIL_SHOWN`](crate::limits::TRAIL_SHOWN)
    /// changes, the latest). The default keeps none (the panel's flash log, docs/panel.md).
    async fn trail(&mut self, id: BookingId) -> Result<Trail, StoreError> {
        let _ = id;
        Ok(Trail::new())
    }
    /// The booking with this id.
    async fn get(&mut self, id: BookingId) -> Result<Option<Booking>, StoreError>;
    /// The booking `holder`'s operation `nonce` made, if it made one (what [`Store::commit`]
    /// would replay), without booking anything.
    async fn made_by(
        &mut self,
        holder: &Holder,
        nonce: &Nonce,
    ) -> Result<Option<Booking>, StoreError>;
    /// The first active or released booking `holder` holds after (`start`, `room`), in
    /// (start, room id) order (a released one so its holder reads that it was released): asked again from the booking it returns, it walks the holder's bookings one at a
    /// time (`room` `""` starts at `start` itself).
    async fn next_held(
        &mut self,
        holder: &Holder,
        start: Minute,
        room: &str,
    ) -> Result<Option<Booking>, StoreError>;
    /// The first active booking of `room` that ends after `from`, in start order: the one
    /// under way at `from` if any, else the next. Asked again from the end of the booking it
    /// returns, it walks the room's bookings.
    async fn next_in_room(
        &mut self,
        room: &str,
        from: Minute,
    ) -> Result<Option<Booking>, StoreError>;
    /// Moves the end of `by`'s booking `id` from `from` to `to` (see [`end_step`]): a later
    /// end only while no other active booking of the room overlaps the time added; a move is
    /// kept in its trail. `None` when `by` holds no booking `id`. Durable when this returns.
    async fn set_end(
        &mut self,
        id: BookingId,
        by: &Actor,
        from: Minute,
        to: Minute,
    ) -> Result<Option<Resized>, StoreError>;
    /// Marks booking `id` of `by`'s holder checked in if it is active (idempotent: already
    /// checked in is no change), keeping `by` in its trail; returns it as it now stands, or
    /// `None` when `by` holds no booking `id`. A released or cancelled booking is returned
    /// unchanged. Durable when this returns.
    async fn check_in(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError>;
    /// Releases one booking that is [`due`] at `now` for a check-in window of `window` minutes,
    /// keeping `by` (the floor: [`Actor::floor`]) in its trail, and returns it, or `None` when
    /// none is; in one atomic step, so two hosts calling it at once never release a booking
    /// twice, nor one checked in meanwhile. The host calls it until `None`. Durable when this
    /// returns.
    async fn release_due(
        &mut self,
        now: Minute,
        window: u16,
        by: &Actor,
    ) -> Result<Option<Booking>, StoreError>;
    /// Books every occurrence of a series in one atomic step, each an ordinary booking like
    /// `base` (at its span, in `base.room` or, `elsewhere`, in `other`) that carries the
    /// series' id, the `i`th under [`occurrence_nonce`]`(base.nonce, i)`: all, or none when
    /// an active booking holds some of any (`Taken`), or the same series again when the
    /// operation already booked it (`Replayed`). Durable when this returns. The default books
    /// none (`Unsupported`): a store without series (the panel's flash log).
    async fn commit_series(
        &mut self,
        base: &NewBooking,
        other: &str,
        occurrences: &[Occurrence],
        by: &Actor,
    ) -> Result<SeriesCommit, StoreError> {
        let _ = (base, other, occurrences, by);
        Ok(SeriesCommit::Unsupported)
    }
    /// Cancels every active booking of series `series` (its first booking's id) that starts
    /// at or after `from`, if `by` holds the series or is an operator, in one atomic step,
    /// keeping `by` in each one's trail; returns the ids it cancelled (none: nothing left to
    /// cancel), or `None` when there is no series `series` `by` may cancel. Durable when this
    /// returns. The default finds none (a store without series).
    async fn cancel_series(
        &mut self,
        series: BookingId,
        from: Minute,
        by: &Actor,
    ) -> Result<Option<SeriesIds>, StoreError> {
        let _ = (series, from, by);
        Ok(None)
    }
    /// The booking of series `series` (its first booking's id) with the lowest id above
    /// `after`, whatever its status: asked again from the id it returns, it walks the series in
    /// id order (from `series - 1`: all of it; every store numbers bookings from 1). The
    /// default finds none (a store without series: the panel's flash log).
    async fn next_in_series(
        &mut self,
        series: BookingId,
        after: BookingId,
    ) -> Result<Option<Booking>, StoreError> {
        let _ = (series, after);
        Ok(None)
    }
}

/// Whether booking `b`, of a series `by` may cancel, is one [`Store::cancel_series`] cancels.
pub fn cancels_with_series(b: &Booking, series: BookingId, from: Minute) -> bool {
    b.series == Some(series) && b.status == Status::Active && b.new.span.start >= from
}

/// Whether booking `b` is to be released at `now` for a check-in window of `window` minutes:
/// active, not checked in, its window over (`start + window <= now`) and still under way
/// (`now < end`: a booking that ended before anyone looked has no time left to free).
pub fn due(b: &Booking, now: Minute, window: u16) -> bool {
    let span = b.new.span;
    b.status == Status::Active
        && !b.checked_in
        && span.start.saturating_add(window.into()) <= now
        && now < span.end
}

/// A store lent to the app (e.g. one in a static) is a store.
impl<S: Store + ?Sized> Store for &mut S {
    async fn commit_by(&mut self, new: &NewBooking, by: &Actor) -> Result<Commit, StoreError> {
        (**self).commit_by(new, by).await
    }
    async fn cancel(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        (**self).cancel(id, by).await
    }
    async fn trail(&mut self, id: BookingId) -> Result<Trail, StoreError> {
        (**self).trail(id).await
    }
    async fn get(&mut self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        (**self).get(id).await
    }
    async fn made_by(
        &mut self,
        holder: &Holder,
        nonce: &Nonce,
    ) -> Result<Option<Booking>, StoreError> {
        (**self).made_by(holder, nonce).await
    }
    async fn next_held(
        &mut self,
        holder: &Holder,
        start: Minute,
        room: &str,
    ) -> Result<Option<Booking>, StoreError> {
        (**self).next_held(holder, start, room).await
    }
    async fn next_in_room(
        &mut self,
        room: &str,
        from: Minute,
    ) -> Result<Option<Booking>, StoreError> {
        (**self).next_in_room(room, from).await
    }
    async fn set_end(
        &mut self,
        id: BookingId,
        by: &Actor,
        from: Minute,
        to: Minute,
    ) -> Result<Option<Resized>, StoreError> {
        (**self).set_end(id, by, from, to).await
    }
    async fn check_in(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        (**self).check_in(id, by).await
    }
    async fn release_due(
        &mut self,
        now: Minute,
        window: u16,
        by: &Actor,
    ) -> Result<Option<Booking>, StoreError> {
        (**self).release_due(now, window, by).await
    }
    async fn commit_series(
        &mut self,
        base: &NewBooking,
        other: &str,
        occurrences: &[Occurrence],
        by: &Actor,
    ) -> Result<SeriesCommit, StoreError> {
        (**self).commit_series(base, other, occurrences, by).await
    }
    async fn cancel_series(
        &mut self,
        series: BookingId,
        from: Minute,
        by: &Actor,
    ) -> Result<Option<SeriesIds>, StoreError> {
        (**self).cancel_series(series, from, by).await
    }
    async fn next_in_series(
        &mut self,
        series: BookingId,
        after: BookingId,
    ) -> Result<Option<Booking>, StoreError> {
        (**self).next_in_series(series, after).await
    }
}

/// The active booking of `room` that overlaps `span` (the earliest, if several do).
pub async fn occupant<S: Store + ?Sized>(
    store: &mut S,
    room: &str,
    span: Span,
) -> Result<Option<Booking>, StoreError> {
    let next = store.next_in_room(room, span.start).await?;
    Ok(next.filter(|b| b.new.span.overlaps(&span)))
}

/// [`Store::next_held`] over bookings kept in any order (a store that holds them all in RAM).
pub fn next_held_in<'a>(
    bookings: impl IntoIterator<Item = &'a Booking>,
    holder: &Holder,
    start: Minute,
    room: &str,
) -> Option<&'a Booking> {
    let after = (start, room);
    bookings
        .into_iter()
        .filter(|b| b.status != Status::Cancelled && b.new.holder == *holder)
        .filter(|b| (b.new.span.start, b.new.room.as_str()) > after)
        .min_by_key(|b| (b.new.span.start, b.new.room.as_str()))
}

/// [`Store::next_in_room`] over bookings kept in any order (a store that holds them all in RAM).
pub fn next_in_room_in<'a>(
    bookings: impl IntoIterator<Item = &'a Booking>,
    room: &str,
    from: Minute,
) -> Option<&'a Booking> {
    bookings
        .into_iter()
        .filter(|b| b.status == Status::Active && b.new.room == room && b.new.span.end > from)
        .min_by_key(|b| b.new.span.start)
}

/// Who holds what `principal` books: the first 8 bytes of SHA-256 of it.
pub fn holder(principal: &[u8]) -> Holder {
    let d = Sha256::digest(principal);
    let mut h = [0; 8];
    h.copy_from_slice(&d[..8]);
    h
}

/// Who acts, from what the host said of a call.
impl Actor {
    /// `principal` calling at `now` with the host's `access`.
    pub fn of(principal: &[u8], now: u64, access: Access) -> Actor {
        Actor {
            holder: holder(principal),
            operator: access.operator,
            on_answer: false,
            at: now,
            via: access.via,
            instance: access.instance,
        }
    }

    /// Who makes `call`, and whether on an answer (it came back with a verified state).
    pub(crate) fn of_call(call: &Call<'_>) -> Actor {
        Actor {
            on_answer: call.state.is_some(),
            ..Actor::of(call.principal, call.now, call.access)
        }
    }
}
