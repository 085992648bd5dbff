//! `cancel_booking`: asks the holder (or an operator, for anyone's) to confirm when its client
//! can be asked, then cancels.

use super::answer::{complete, fail, Text};
use super::floor::Locate;
use super::read::yours;
use super::report::{BookingRef, Cancelled, Described};
use super::store::Store;
use super::store::{holder, Booking, Status, StoreError};
use super::tools::CancelArgs;
use super::trail::Actor;
use crate::engine::{Call, CallError, Done, Msg, Reply};
use crate::typed::Round;

/// The booking `id` names that the caller may cancel: its own, or any to an operator.
async fn cancellable<S: Store>(
    store: &mut S,
    id: &str,
    call: &Call<'_>,
) -> Result<Option<Booking>, StoreError> {
    #[cfg(feature = "operators")]
    if call.access.operator {
        let Some(n) = id.strip_prefix("bk_").and_then(|n| n.parse().ok()) else {
            return Ok(None);
        };
        return store.get(n).await;
    }
    yours(store, id, &holder(call.principal)).await
}

/// Cancels the caller's booking `call` names (an operator's: anyone's), once the caller
/// confirms.
pub(super) async fn cancel_booking<'r, S: Store, L: Locate<'r> + ?Sized>(
    site: &L,
    store: &mut S,
    args: CancelArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    let booking_id = args.booking_id;
    let Some(booking) = cancellable(store, booking_id, call).await? else {
        return Ok(fail(
            reply,
            &Msg(format_args!(
                "There is no booking '{}' of yours to cancel.",
                Text(booking_id)
            )),
        ));
    };
    let (room, zone) = site.locate(&booking.new.room);
    #[cfg(feature = "series")]
    if args.series == Some(true) {
        let s = super::series_cancel::cancel_series(store, &booking, room, zone, call, reply);
        return s.await;
    }
    if booking.status == Status::Cancelled {
        return Ok(complete(
            reply,
            &Cancelled {
                booking: &booking,
                room,
                already: true,
                zone,
            },
        ));
    }
    // The question (its message borrows formatting state that may not cross threads) is
    // gone before the store is awaited.
    let round = {
        let message = Msg(format_args!(
            "Cancel {}: {}?",
            BookingRef(&booking),
            Described(&booking, room, zone)
        ));
        // A client that cannot be asked cancels without confirming: the call names one of the
        // caller's own bookings exactly, and hosts confirm a destructive tool's call themselves.
        reply.confirm_if_askable(call, "Yes, cancel it", &message, &[])?
    };
    match round {
        Round::Sent(done) => Ok(done),
        Round::Answer(true, reply) => {
            let b = store.cancel(booking.id, &Actor::of_call(call)).await?;
            let b = b.ok_or(CallError::Internal("booking vanished"))?;
            Ok(complete(
                reply,
                &Cancelled {
                    booking: &b,
                    room,
                    already: false,
                    zone,
                },
            ))
        }
        Round::Answer(_, reply) => Ok(complete(
            reply,
            &Msg(format_args!(
                "Kept {}: nothing was cancelled.",
                BookingRef(&booking)
            )),
        )),
    }
}
