//! `cancel_booking` with `series: true`: what is left of the series an occurrence belongs to,
//! cancelled in one store operation once the caller confirms (the holder's, or an operator's).

use core::fmt;

use super::answer::{complete, fail};
use super::report::{BookingRef, Described};
use super::span::minute_of;
use super::store::{Booking, SeriesIds, Store};
use super::trail::Actor;
use super::zone::Zone;
use crate::engine::{Call, CallError, Done, Msg, Reply, Report};
use crate::typed::Round;
use crate::wire::write::{Num, Writer};

/// Cancels every occurrence still to come of the series `booking` belongs to (the caller may
/// cancel `booking`), once the caller confirms.
pub(super) async fn cancel_series<S: Store>(
    store: &mut S,
    booking: &Booking,
    room: Option<&super::floor::Room<'_>>,
    zone: &dyn Zone,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    let Some(series) = booking.series else {
        return Ok(fail(
            reply,
            &Msg(format_args!(
                "{} is not part of a series: call again without series to cancel it alone.",
                BookingRef(booking)
            )),
        ));
    };
    // From now on (every occurrence while the clock is not set).
    let from = minute_of(call.now).unwrap_or(0);
    let round = {
        let message = Msg(format_args!(
            "Cancel every occurrence still to come of series bk_{} (the series of {}: {})?",
            Num(series.into()),
            BookingRef(booking),
            Described(booking, room, zone)
        ));
        reply.confirm_if_askable(call, "Yes, cancel the series", &message, &[])?
    };
    match round {
        Round::Sent(done) => Ok(done),
        Round::Answer(true, reply) => {
            let by = Actor::of_call(call);
            match store.cancel_series(series, from, &by).await? {
                Some(ids) => Ok(complete(reply, &SeriesCancelled { series, ids: &ids })),
                None => Err(CallError::Internal("series vanished")),
            }
        }
        Round::Answer(_, reply) => Ok(complete(
            reply,
            &Msg(format_args!(
                "Kept series bk_{}: nothing was cancelled.",
                Num(series.into())
            )),
        )),
    }
}

/// What a series' cancel did.
struct SeriesCancelled<'a> {
    series: u32,
    ids: &'a SeriesIds,
}

impl Report for SeriesCancelled<'_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        if self.ids.is_empty() {
            return write!(
                f,
                "Series bk_{} has nothing left to cancel.",
                Num(self.series.into())
            );
        }
        write!(
            f,
            "Series bk_{}: {} bookings cancelled:",
            Num(self.series.into()),
            Num(self.ids.len() as i64)
        )?;
        for id in self.ids {
            write!(f, " bk_{}", Num((*id).into()))?;
        }
        f.write_str(".")
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        w.begin_object()
            .key("series")
            .string_fmt(format_args!("bk_{}", Num(self.series.into())));
        w.key("cancelled").begin_array();
        for id in self.ids {
            w.string_fmt(format_args!("bk_{}", Num((*id).into())));
        }
        w.end_array().end_object();
    }
}
