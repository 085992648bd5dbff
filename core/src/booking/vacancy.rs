//! Which rooms are free for a span, and when each room is busy on a day, asked of the store
//! room by room (for `list_rooms`, `day_schedule`, and a `book_room` whose room is taken).

use core::future::Future;

use super::floor::{Floor, Mask, Needs};
use super::room_set::RoomBits;
use super::span::Span;
#[cfg(feature = "day-schedule")]
use super::span::{Day, Minute};
use super::store::{occupant, Store};
#[cfg(feature = "day-schedule")]
use super::zone::{day_span, wall};
use crate::engine::CallError;
use crate::limits::MAX_ROOMS;
#[cfg(feature = "day-schedule")]
use crate::limits::MAX_SCHEDULE_ROOMS;

/// The rooms of `floor` among `among` with what `needs` asks that nobody holds for any of
/// `span` (only those rooms are read).
pub(super) fn free_at<'a, S: Store>(
    floor: Floor<'a>,
    store: &'a mut S,
    span: Span,
    needs: Needs<'a>,
    among: Mask,
) -> impl Future<Output = Result<Mask, CallError>> + 'a {
    // Not a future of its own: the same one as `first_free`'s (a panel's flash holds one).
    first_free(floor, store, span, needs, among, MAX_ROOMS)
}

/// The first `at_most` rooms (in the floor's order) [`free_at`] would give: no room after them
/// is read (an answer that names at most that many free rooms, on a building of hundreds).
pub(super) async fn first_free<S: Store>(
    floor: Floor<'_>,
    store: &mut S,
    span: Span,
    needs: Needs<'_>,
    among: Mask,
    at_most: usize,
) -> Result<Mask, CallError> {
    let (mut free, mut found) = (Mask::NONE, 0);
    for (i, r) in floor.rooms.iter().take(MAX_ROOMS).enumerate() {
        if found == at_most {
            break;
        }
        let asked = among.has(i) && needs.fit(r);
        if asked && occupant(store, r.id, span).await?.is_none() {
            free = free.with(i);
            found += 1;
        }
    }
    Ok(free)
}

/// Minutes of one cell of a [`Busy`] day.
#[cfg(feature = "day-schedule")]
pub(super) const CELL: u32 = 5;

/// A day in five-minute cells, bit `c` set when the room is booked for any of cell `c`.
#[cfg(feature = "day-schedule")]
pub(super) type Busy = [u32; 9];

#[cfg(feature = "day-schedule")]
/// When each room in `shown` is booked on `day`: entry `k` for the `k`-th of them in the order
/// of `floor` (the first [`MAX_SCHEDULE_ROOMS`] only).
pub(super) async fn busy_cells<S: Store>(
    floor: Floor<'_>,
    store: &mut S,
    day: Day,
    shown: Mask,
) -> Result<[Busy; MAX_SCHEDULE_ROOMS], CallError> {
    let mut busy = [[0; 9]; MAX_SCHEDULE_ROOMS];
    // The day's UTC bounds, and its cells by wall time (a 25-hour day's repeated hour shares
    // its cells; a 23-hour day leaves the skipped hour's empty).
    let Span { start: first, end } = day_span(floor.zone, day);
    let cell = |m: Minute| {
        wall(floor.zone, m)
            .saturating_sub(day.first_minute())
            .min(24 * 60)
    };
    let rooms = floor.rooms.iter().take(MAX_ROOMS).enumerate();
    let shown_rooms = rooms.filter(|(i, _)| shown.has(*i)).map(|(_, r)| r);
    for (cells, r) in busy.iter_mut().zip(shown_rooms) {
        let mut from = first;
        while let Some(b) = store.next_in_room(r.id, from).await? {
            let s = b.new.span;
            // Only forward, within the day: a store that answered otherwise would walk for ever.
            if s.end <= from || s.start >= end {
                break;
            }
            let (a, z) = (cell(s.start.max(first)), cell(s.end.min(end)));
            for c in a / CELL..z.div_ceil(CELL).min(24 * 60 / CELL) {
                cells[(c / 32) as usize] |= 1 << (c % 32);
            }
            from = s.end;
        }
    }
    Ok(busy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::booking::{Actor, Commit, MemStore, NewBooking, DEFAULT_FLOOR};
    use crate::engine::poll_once;
    use heapless::String;

    /// An hour on 2030-01-01.
    const SPAN: Span = Span {
        start: 31_557_600,
        end: 31_557_660,
    };

    fn first(store: &mut MemStore<4>, at_most: usize) -> Mask {
        let all = Needs::seats(0);
        poll_once(first_free(
            DEFAULT_FLOOR,
            store,
            SPAN,
            all,
            Mask::ALL,
            at_most,
        ))
        .unwrap()
        .unwrap()
    }

    #[test]
    fn the_first_free_rooms_are_those_in_the_floors_order_and_no_more() {
        let mut store = MemStore::<4>::new();
        let new = NewBooking {
            room: String::try_from("atrium").unwrap(),
            span: SPAN,
            title: String::new(),
            attendees: 0,
            holder: [1; 8],
            nonce: [1; 8],
        };
        let booked = poll_once(store.commit_by(&new, &Actor::holder([1; 8]))).unwrap();
        assert!(matches!(booked, Ok(Commit::Created(_))));
        // atrium (0) is taken; studio-b (1) and nook (2) are free.
        assert_eq!(first(&mut store, 1), Mask::NONE.with(1));
        assert_eq!(first(&mut store, 2), Mask::NONE.with(1).with(2));
        assert_eq!(first(&mut store, 16), Mask::NONE.with(1).with(2));
        assert_eq!(first(&mut store, 0), Mask::NONE);
    }
}
