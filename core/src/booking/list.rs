//! `list_rooms`: the rooms with their seats and, for a time, which are free all of it.

use super::answer::{complete, fail, Text};
use super::floor::{Floor, Mask, Needs};
#[cfg(feature = "public-titles")]
use super::named::{in_the_way, Reader};
use super::report::RoomList;
use super::room_set::RoomBits;
use super::store::Store;
use super::tools::ListArgs;
use super::vacancy::free_at;
use super::when::{when, Times};
use crate::engine::{Call, CallError, Done, Msg, Reply};

/// Lists the rooms with enough seats and, given a day and a start, which of them are free.
pub(super) async fn list_rooms<S: Store>(
    floor: Floor<'_>,
    store: &mut S,
    args: ListArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    let people = args.attendees.unwrap_or(0);
    let span = match args.day {
        None if args.start.is_none() && args.hour.is_none() => None,
        None => {
            return Ok(fail(
                reply,
                &Text("Give the day too, to see which rooms are free then."),
            ))
        }
        Some(d) => match when(floor, d, args.start, args.hour, args.minutes, call.now) {
            // A wall time the clocks repeat: the first of the two, shown with its zone.
            Ok(Times::One(s) | Times::Twice(s, _)) => Some(s),
            Err(why) => return Ok(fail(reply, &Msg(format_args!("{why}")))),
        },
    };
    let needs = Needs::seats(people);
    let shown = floor.mask(|r| needs.fit(r));
    let past = span.is_some_and(|s| s.is_past(call.now));
    let free = match span {
        // Only times still to come are free: a past one shows every room as not free.
        Some(_) if past => Mask::NONE,
        Some(s) => free_at(floor, store, s, needs, shown).await?,
        None => shown,
    };
    // The meetings in the way that the caller may read: its own, or any on a public floor.
    #[cfg(feature = "public-titles")]
    let in_the_way = match span {
        Some(s) if !past => in_the_way(floor, store, s, shown & !free, &Reader::of(call)).await?,
        _ => heapless::Vec::new(),
    };
    Ok(complete(
        reply,
        &RoomList {
            floor,
            shown,
            free,
            span,
            past: past.then_some(call.now),
            #[cfg(feature = "public-titles")]
            in_the_way,
        },
    ))
}
