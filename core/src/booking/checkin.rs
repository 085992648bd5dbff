//! Check-in and release of no-shows: the `check_in` tool (a holder says the meeting is on), and
//! [`release_due`], which the host calls with its clock to free bookings nobody checked in to.

use core::fmt;

use super::answer::{complete, fail, Text};
use super::floor::Floor;
use super::meeting::{booking_and_floor, Id, Why};
use super::report::{write_booking, BookingRef, Described};
use super::span::{minute_of, Minute, Span};
use super::store::{Booking, Status, Store, StoreError};
use super::tools::BookingArgs;
use super::trail::Actor;
use super::zone::Local;
use crate::engine::{Call, CallError, Done, Msg, Reply, Report};
use crate::wire::write::{Num, Writer};

/// How many minutes before its start a booking may be checked in to.
pub const CHECK_IN_EARLY_MINUTES: u16 = 10;
/// The longest check-in window a floor may set, in minutes after a booking's start.
pub const MAX_CHECK_IN_MINUTES: u16 = 60;
/// The most bookings one [`release_due`] call releases (the next call goes on).
pub const MAX_RELEASED_A_RUN: u32 = 256;

/// Checks the caller in to its booking: from [`CHECK_IN_EARLY_MINUTES`] before the start
/// until the floor's check-in window after it ends; again is no change.
pub(super) async fn check_in<S: Store>(
    floors: &[Floor<'_>],
    store: &mut S,
    args: BookingArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    let what = "check in to";
    let (b, floor) = match booking_and_floor(floors, store, args.booking_id, call, what).await? {
        Ok(found) => found,
        Err(why) => return Ok(fail(reply, &why)),
    };
    let Some(window) = floor.check_in_minutes else {
        let why = Text("This floor has no check-in: a booking holds its room without one.");
        return Ok(fail(reply, &why));
    };
    if b.checked_in {
        return Ok(complete(reply, &CheckedIn(&b, floor, true)));
    }
    let Some(now) = minute_of(call.now) else {
        let why = Text("The server's clock is not set, so it cannot tell what \"now\" is.");
        return Ok(fail(reply, &why));
    };
    let span = b.new.span;
    let opens = span.start.saturating_sub(CHECK_IN_EARLY_MINUTES.into());
    let closes = span.start.saturating_add(window.into()).min(span.end);
    if now < opens || now >= closes {
        let open = Span::new(opens, closes.max(opens + 1)).unwrap_or(span);
        let why = Msg(format_args!(
            "{} can be checked in to from {} minutes before its start until {} minutes after \
             it ({} to {}); now is outside that.",
            BookingRef(&b),
            Num(CHECK_IN_EARLY_MINUTES.into()),
            Num(window.into()),
            Local(open, floor.zone).starts().1,
            Local(open, floor.zone).ends_at(),
        ));
        return Ok(fail(reply, &why));
    }
    match store.check_in(b.id, &Actor::of_call(call)).await? {
        Some(now) if now.checked_in => Ok(complete(reply, &CheckedIn(&now, floor, false))),
        Some(now) if now.status == Status::Released => {
            Ok(fail(reply, &Why::Released(now.id, what)))
        }
        Some(now) => Ok(fail(reply, &Why::Cancelled(now.id, what))),
        None => Ok(fail(reply, &Why::NotYours(Id(args.booking_id), what))),
    }
}

/// A booking checked in to (`true`: it already was).
struct CheckedIn<'a, 'r>(&'a Booking, Floor<'r>, bool);

impl Report for CheckedIn<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        let CheckedIn(b, floor, already) = self;
        let (room, zone) = (floor.by_id(&b.new.room), floor.zone);
        write!(f, "{} ({}) ", BookingRef(b), Described(b, room, zone))?;
        f.write_str(match already {
            true => "was already checked in: it keeps its room.",
            false => "is checked in: it keeps its room.",
        })
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        let CheckedIn(b, floor, already) = self;
        w.begin_object().key("changed").bool(!already);
        write_booking(w, b, floor.by_id(&b.new.room), floor.zone);
        w.end_object();
    }
}

/// Releases the bookings whose check-in window (`window`, a floor's
/// [`check_in_minutes`](Floor::check_in_minutes)) has passed at unix time `now` without a
/// check-in, at most [`MAX_RELEASED_A_RUN`], telling `released` each; how many. Each one's
/// trail says the floor released it on `instance` (0: not said). Nothing when there is no
/// window or the clock is not set. The host calls it with its clock (the core has no timer);
/// calling again is harmless.
pub async fn release_due<S: Store + ?Sized>(
    store: &mut S,
    window: Option<u16>,
    now: u64,
    instance: u32,
    mut released: impl FnMut(&Booking),
) -> Result<u32, StoreError> {
    let (Some(window), Some(minute)) = (window, minute_of(now)) else {
        return Ok(0);
    };
    let by = Actor::floor(now, instance);
    let mut count = 0;
    while count < MAX_RELEASED_A_RUN {
        let Some(b) = store.release_due(minute as Minute, window, &by).await? else {
            break;
        };
        released(&b);
        count += 1;
    }
    Ok(count)
}
