//! Which rooms are free at a slot, asked of the store room by room (for `list_rooms`, and for
//! a `book_room` whose room is taken).

use super::floor::{Floor, Mask};
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
