//! Which rooms are free at a slot, and which hours of a day each room is booked, asked of the
//! store room by room (for `list_rooms`, `day_schedule`, and a `book_room` whose room is
//! taken).

use super::floor::{Floor, Mask};
#[cfg(feature = "day-schedule")]
use super::slot::Day;
use super::slot::Slot;
use super::store::Store;
use crate::engine::CallError;
use crate::limits::MAX_ROOMS;

/// The rooms of `floor` with at least `people` seats that nobody holds at `slot`.
pub(super) async fn free_at<S: Store>(
    floor: Floor<'_>,
    store: &mut S,
    slot: Slot,
    people: u16,
) -> Result<Mask, CallError> {
    let mut free = 0;
    for (i, r) in floor.rooms.iter().take(MAX_ROOMS).enumerate() {
        let taken = store.occupant(r.id, slot).await?;
        if taken.is_none() && r.seats >= people {
            free |= 1 << i;
        }
    }
    Ok(free)
}

#[cfg(feature = "day-schedule")]
/// The hours of `day` each room in `shown` is booked (bit `h` of entry `i`: room `i` at hour
/// `h`), in the order of `floor`.
pub(super) async fn booked_hours<S: Store>(
    floor: Floor<'_>,
    store: &mut S,
    day: Day,
    shown: Mask,
) -> Result<[u32; MAX_ROOMS], CallError> {
    let mut hours = [0; MAX_ROOMS];
    for (i, r) in floor.rooms.iter().take(MAX_ROOMS).enumerate() {
        if shown & 1 << i == 0 {
            continue;
        }
        let mut from = Slot { day, hour: 0 };
        while let Some(b) = store.next_in_room(r.id, from).await? {
            // Only forward, within the day: a store that answered otherwise would walk for ever.
            if b.new.slot < from || b.new.slot.day != day {
                break;
            }
            let hour = b.new.slot.hour;
            hours[i] |= 1 << hour;
            if hour >= 23 {
                break;
            }
            from.hour = hour + 1;
        }
    }
    Ok(hours)
}
