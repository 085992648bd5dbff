//! `list_bookings`: the caller's own active bookings, earliest first, a page at a time, walked
//! through the store with [`Store::next_held`](super::Store::next_held).

use core::fmt;

use heapless::Vec;

use super::answer::{complete, fail, Text};
use super::floor::{Floor, Locate};
#[cfg(feature = "series")]
use super::fold::{fold, Fold, Met};
use super::read::yours;
use super::read::{day, DayArg};
#[cfg(feature = "series")]
use super::report::booking_fields;
use super::report::{write_booking_object, BookingRef, Described};
use super::span::{minute_of, Day, Minute, CLOCK_SET_FROM, MAX_MINUTES};
#[cfg(feature = "series")]
use super::store::BookingId;
use super::store::Store;
use super::store::{holder, Booking, RoomId, Status};
use super::tools::MineArgs;
use super::zone::{day_span, Utc, Zone};
use crate::engine::{Call, CallError, Done, Msg, Reply, Report};
use crate::limits::MAX_LISTED;
#[cfg(feature = "series")]
use crate::limits::MAX_SERIES_LISTED;
use crate::wire::write::{Num, Writer};

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
/// [`MAX_LISTED`] a call; `after` continues from the booking the last page ended with. Not
/// on one day, a series is listed once, at the first of its occurrences the listing shows
/// (the same on every page), for all of them ([`fold`]); a day lists its occurrence as it is.
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
    #[cfg(feature = "series")]
    let mut folds: Vec<Fold, MAX_SERIES_LISTED> = Vec::new();
    // The series this call has met: their later occurrences are skipped without a walk.
    #[cfg(feature = "series")]
    let mut met: Vec<BookingId, MAX_LISTED> = Vec::new();
    let mut more = false;
    while let Some(b) = store.next_held(&me, at.0, &at.1).await? {
        if day.is_some_and(|d| b.new.span.start >= day_span(zone, d).end) {
            break;
        }
        at = (b.new.span.start, b.new.room.clone());
        if b.new.span.end <= from {
            continue;
        }
        #[cfg(feature = "series")]
        if let Some(s) = b.series.filter(|_| day.is_none()) {
            if met.contains(&s) {
                continue;
            }
            let found = fold(store, site, &b, s, from).await?;
            if !matches!(found, Met::AsIs) {
                // Full: the next occurrence of `s` walks it again, to the same answer.
                let _ = met.push(s);
            }
            match found {
                Met::Skip => continue,
                Met::AsIs => {}
                // The page ends before it: the next page (`after`) lists it.
                Met::Fold(_) if page.is_full() || folds.is_full() => {
                    more = true;
                    break;
                }
                Met::Fold(f) => {
                    let _ = folds.push(f);
                }
            }
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
            #[cfg(feature = "series")]
            folds: &folds,
            day,
            continued: args.after.is_some(),
            more,
        },
    ))
}

/// A page of the caller's bookings (`list_bookings`).
struct Mine<'a, 'r> {
    site: &'a [Floor<'r>],
    page: &'a [Booking],
    /// The series listed, each on the line of its booking listed.
    #[cfg(feature = "series")]
    folds: &'a [Fold<'r>],
    /// The one day asked about.
    day: Option<Day>,
    /// Whether this page continues an earlier one (`after`).
    continued: bool,
    /// Whether more bookings follow the page.
    more: bool,
}

#[cfg(feature = "series")]
impl<'r> Mine<'_, 'r> {
    /// The series booking `b` is listed for, if it is.
    fn fold(&self, b: &Booking) -> Option<&Fold<'r>> {
        self.folds.iter().find(|f| b.series == Some(f.series))
    }
}

impl Report for Mine<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        match (self.page.is_empty(), self.day, self.continued) {
            (true, _, true) => return f.write_str("You have no more bookings."),
            (true, Some(d), _) => return write!(f, "You have no bookings on {d}."),
            (true, None, _) => return f.write_str("You have no bookings still to come."),
            (false, _, true) => f.write_str("More of your bookings:")?,
            (false, Some(d), _) => write!(f, "Your bookings on {d}:")?,
            (false, None, _) => f.write_str("Your bookings still to come:")?,
        }
        for b in self.page {
            #[cfg(feature = "series")]
            if let Some(fold) = self.fold(b) {
                write!(f, "\n{} — ", BookingRef(b))?;
                fold.text(f, b, self.site)?;
                continue;
            }
            let (room, zone) = self.site.locate(&b.new.room);
            write!(f, "\n{} — {}", BookingRef(b), Described(b, room, zone))?;
            if b.status == Status::Released {
                f.write_str(" — released (not checked in)")?;
            }
            if let Some(series) = b.series {
                write!(f, " — of series bk_{}", Num(series.into()))?;
            }
        }
        match self.page.last() {
            Some(last) if self.more => write!(
                f,
                "\nMore follow: call list_bookings again with after={}{}.",
                BookingRef(last),
                if self.day.is_some() {
                    " and the same day"
                } else {
                    ""
                }
            ),
            _ => Ok(()),
        }
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        w.begin_object().key("bookings").begin_array();
        for b in self.page {
            let (room, zone) = self.site.locate(&b.new.room);
            #[cfg(feature = "series")]
            if let Some(fold) = self.fold(b) {
                w.begin_object();
                booking_fields(w, b, room, zone);
                fold.write(w, zone);
                w.end_object();
                continue;
            }
            write_booking_object(w, b, room, zone);
        }
        w.end_array();
        if let Some(last) = self.page.last().filter(|_| self.more) {
            w.key("next")
                .string_fmt(format_args!("{}", BookingRef(last)));
        }
        w.end_object();
    }
}
