//! `list_rooms`: the rooms with their seats and, for a day and hour, which are free.

use super::answer::{complete, fail, Text};
use super::floor::Floor;
use super::read::slot;
use super::report::RoomList;
use super::store::Store;
use super::tools::ListArgs;
use super::vacancy::free_at;
use crate::engine::{Call, CallError, Done, Reply};

/// Lists the rooms with enough seats and, given a day and hour, which of them are free.
pub(super) async fn list_rooms<S: Store>(
    floor: Floor<'_>,
    store: &mut S,
    args: ListArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    let people = args.attendees.unwrap_or(0);
    let slot = match (args.day, args.hour) {
        (None, None) => None,
        (Some(d), Some(h)) => match slot(d, h) {
            Some(s) => Some(s),
            None => {
                return Ok(fail(
                    reply,
                    &Text("Not a bookable slot: day is YYYY-MM-DD, hour 0-23."),
                ))
            }
        },
        _ => {
            return Ok(fail(
                reply,
                &Text("Give both day and hour to see which rooms are free."),
            ))
        }
    };
    let shown = floor.mask(|r| r.seats >= people);
    let past = slot.is_some_and(|s| s.is_past(call.now));
    let free = match slot {
        // Only hours still to come are free: a past hour shows every room as not free.
        Some(_) if past => 0,
        Some(s) => free_at(floor, store, s, people).await?,
        None => shown,
    };
    Ok(complete(
        reply,
        &RoomList {
            floor,
            shown,
            free,
            slot,
            past: past.then_some(call.now),
        },
    ))
}
