//! `day_schedule`: one day of the floor, each room with the hours it is booked.

use super::answer::{complete, fail, Text};
use super::floor::Floor;
use super::report::RoomDay;
use super::slot::Day;
use super::store::Store;
use super::tools::DayArgs;
use super::vacancy::booked_hours;
use crate::engine::{Call, CallError, Done, Reply};

/// Shows the rooms with enough seats and the hours of the day each is booked.
pub(super) async fn day_schedule<S: Store>(
    floor: Floor<'_>,
    store: &mut S,
    args: DayArgs<'_>,
    _call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    let Some(day) = Day::parse(args.day) else {
        return Ok(fail(
            reply,
            &Text("Not a day: give day as YYYY-MM-DD (2000-2999)."),
        ));
    };
    let shown = floor.mask(|r| r.seats >= args.attendees.unwrap_or(0));
    let hours = booked_hours(floor, store, day, shown).await?;
    Ok(complete(
        reply,
        &RoomDay {
            floor,
            shown,
            day,
            hours,
        },
    ))
}
