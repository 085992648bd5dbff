//! `list_bookings`: the caller's own active bookings, earliest first, a page at a time, walked
//! through the store with [`Store::next_held`](super::Store::next_held).

use heapless::Vec;

use super::answer::{complete, fail, Text};
use super::floor::Floor;
use super::read::yours;
use super::read::{day, DayArg};
use super::report::Mine;
use super::span::{minute_of, Day, Minute, CLOCK_SET_FROM, MAX_MINUTES};
use super::store::Store;
use super::store::{holder, Booking, RoomId};
use super::tools::MineArgs;
use super::zone::{day_span, Utc, Zone};
use crate::engine::{Call, CallError, Done, Msg, Reply};
use crate::limits::MAX_LISTED;

/// Where a listing starts, when it is not continuing a page: the start of the day asked for,
/// else now (all of them while the clock is not set): a booking under way is still listed.
fn start(day: Option<Day>, now: u64, zone: &dyn Zone) -> Minute {
    match day {
        Some(day) => day_span(zone, day).start,
        None if now >= CLOCK_SET_FROM => minute_of(now).unwrap_or(0),
        None => 0,
    }
}

/// Lists the caller's active bookings (of one day, or from the hour under way on), at most
/// [`MAX_LISTED`] a call; `after` continues from the booking the last page ended with.
pub(super) async fn list_bookings<S: Store>(
    site: &[Floor<'_>],
    store: &mut S,
    args: MineArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    // A day is read on the first building's clock.
    let zone = site.first().map_or(&Utc as &dyn Zone, |b| b.zone);
    let day =
        match args.day.map(|d| day(d, call.now, zone)) {
            None => None,
            Some(DayArg::Day(d)) => Some(d),
            Some(_) => return Ok(fail(
                reply,
                &Text(
                    "Not a day: give day as YYYY-MM-DD (2000-2999), today, tomorrow or a weekday.",
                ),
            )),
        };
    let me = holder(call.principal);
    let from = start(day, call.now, zone);
    // Bookings under way at `from` are listed too: start the walk the longest booking earlier
    // and skip those that ended.
    let mut at = (from.saturating_sub(MAX_MINUTES), RoomId::new());
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
        if last.new.span.end > from {
            at = (last.new.span.start, last.new.room);
        }
    }
    let mut page: Vec<Booking, MAX_LISTED> = Vec::new();
    let mut more = false;
    while let Some(b) = store.next_held(&me, at.0, &at.1).await? {
        if day.is_some_and(|d| b.new.span.start >= day_span(zone, d).end) {
            break;
        }
        at = (b.new.span.start, b.new.room.clone());
        if b.new.span.end <= from {
            continue;
        }
        if page.push(b).is_err() {
            more = true;
            break;
        }
    }
    Ok(complete(
        reply,
        &Mine {
            site,
            page: &page,
            day,
            continued: args.after.is_some(),
            more,
        },
    ))
}
