//! `day_schedule`: one day of the floor, each room with the times it is booked and the meetings
//! the caller may read (its own, and others' titles on a floor with public titles).

use super::answer::{complete, fail, Text};
use super::day_report::RoomDay;
use super::floor::Floor;
use super::named::meetings;
use super::read::{day, DayArg};
use super::store::{holder, Store};
use super::tools::DayArgs;
use super::vacancy::busy_cells;
use crate::engine::{Call, CallError, Done, Reply};

/// Shows the rooms with enough seats and the times of the day each is booked.
pub(super) async fn day_schedule<S: Store>(
    floor: Floor<'_>,
    store: &mut S,
    args: DayArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    let DayArg::Day(day) = day(args.day, call.now, floor.zone) else {
        return Ok(fail(
            reply,
            &Text("Not a day: give day as YYYY-MM-DD (2000-2999), today, tomorrow or a weekday."),
        ));
    };
    let shown = floor.mask(|r| r.seats >= args.attendees.unwrap_or(0));
    let busy = busy_cells(floor, store, day, shown).await?;
    let named = meetings(floor, store, day, shown, &holder(call.principal)).await?;
    Ok(complete(
        reply,
        &RoomDay {
            floor,
            shown,
            day,
            busy,
            named,
        },
    ))
}
