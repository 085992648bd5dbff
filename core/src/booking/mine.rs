//! `list_bookings`: the caller's own active bookings, earliest first, a page at a time, walked
//! through the store with [`Store::next_held`](super::Store::next_held).

use heapless::Vec;

use super::answer::{complete, fail, Text};
use super::floor::Floor;
use super::read::yours;
use super::report::Mine;
use super::slot::{Day, Slot, CLOCK_SET_FROM};
use super::store::Store;
use super::store::{holder, Booking, RoomId};
use super::tools::MineArgs;
use crate::engine::{Call, CallError, Done, Msg, Reply};
use crate::limits::MAX_LISTED;

/// Where a listing starts, when it is not continuing a page: the start of the day asked for,
/// else the hour under way (all of them while the clock is not set).
fn start(day: Option<Day>, now: u64) -> Slot {
    let first = Slot {
        day: Day {
            year: 2000,
            month: 1,
            day: 1,
        },
        hour: 0,
    };
    match day {
        Some(day) => Slot { day, hour: 0 },
        None if now >= CLOCK_SET_FROM => Slot::containing(now).unwrap_or(first),
        None => first,
    }
}

/// Lists the caller's active bookings (of one day, or from the hour under way on), at most
/// [`MAX_LISTED`] a call; `after` continues from the booking the last page ended with.
pub(super) async fn list_bookings<S: Store>(
    floor: Floor<'_>,
    store: &mut S,
    args: MineArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    let day = match args.day.map(Day::parse) {
        None => None,
        Some(Some(d)) => Some(d),
        Some(None) => {
            return Ok(fail(
                reply,
                &Text("Not a day: give day as YYYY-MM-DD (2000-2999)."),
            ))
        }
    };
    let me = holder(call.principal);
    let from = start(day, call.now);
    let mut at = (from, RoomId::new());
    if let Some(after) = args.after {
        let Some(last) = yours(store, after, &me).await? else {
            return Ok(fail(
                reply,
                &Msg(format_args!(
                    "There is no booking '{}' of yours to list after: give the 'next' of the \
                     page before.",
                    Text(after)
                )),
            ));
        };
        if last.new.slot >= from {
            at = (last.new.slot, last.new.room);
        }
    }
    let mut page: Vec<Booking, MAX_LISTED> = Vec::new();
    let mut more = false;
    while let Some(b) = store.next_held(&me, at.0, &at.1).await? {
        if day.is_some_and(|d| b.new.slot.day > d) {
            break;
        }
        at = (b.new.slot, b.new.room.clone());
        if page.push(b).is_err() {
            more = true;
            break;
        }
    }
    Ok(complete(
        reply,
        &Mine {
            floor,
            page: &page,
            day,
            continued: args.after.is_some(),
            more,
        },
    ))
}
