//! `day_schedule`: one day of the floor, each room with the times it is booked and the meetings
//! the caller may read (its own, and others' titles on a floor with public titles).

use super::answer::{complete, fail, Text};
#[cfg(feature = "campus")]
use super::campus::{first_rooms, named_building};
#[cfg(feature = "campus")]
use super::campus_report::UnknownBuilding;
use super::day_report::RoomDay;
#[cfg(feature = "campus")]
use super::floor::on_level;
use super::floor::{Floor, Needs};
use super::named::{meetings, Reader};
use super::read::{day, DayArg};
use super::store::Store;
use super::tools::DayArgs;
use super::vacancy::busy_cells;
use crate::engine::{Call, CallError, Done, Reply};
#[cfg(feature = "campus")]
use crate::limits::MAX_SCHEDULE_ROOMS;

/// Shows the rooms with enough seats (of one building and level, on a site) and the times of
/// the day each is booked.
pub(super) async fn day_schedule<S: Store>(
    site: &[Floor<'_>],
    store: &mut S,
    args: DayArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    #[cfg(feature = "campus")]
    let (floor, needs) = match args.building.map(|b| named_building(site, b)) {
        None => (site.first(), Needs::seats(0)),
        Some(Some(b)) => (site.get(b), Needs::seats(0)),
        Some(None) => {
            let name = args.building.unwrap_or("");
            return Ok(fail(reply, &UnknownBuilding { site, name }));
        }
    };
    #[cfg(feature = "campus")]
    let needs = Needs {
        equipment: args.equipment,
        ..needs
    };
    #[cfg(not(feature = "campus"))]
    let (floor, needs) = (site.first(), Needs::seats(0));
    let floor = *floor.ok_or(CallError::Internal("a site of no building"))?;
    let needs = Needs {
        people: args.attendees.unwrap_or(0),
        ..needs
    };
    let DayArg::Day(day) = day(args.day, call.now, floor.zone) else {
        return Ok(fail(
            reply,
            &Text("Not a day: give day as YYYY-MM-DD (2000-2999), today, tomorrow or a weekday."),
        ));
    };
    #[cfg(feature = "campus")]
    let (shown, more) = first_rooms(
        floor.mask(|r| needs.fit(r) && on_level(r, args.level)),
        MAX_SCHEDULE_ROOMS,
    );
    #[cfg(not(feature = "campus"))]
    let shown = floor.mask(|r| needs.fit(r));
    let busy = busy_cells(floor, store, day, shown).await?;
    let named = meetings(floor, store, day, shown, &Reader::of(call)).await?;
    Ok(complete(
        reply,
        &RoomDay {
            floor,
            shown,
            day,
            busy,
            named,
            #[cfg(feature = "campus")]
            place: (site, more),
        },
    ))
}
