//! `cancel_booking`: asks the holder to confirm (when its client can be asked), then cancels.

use super::answer::{complete, fail, Text};
use super::floor::Locate;
use super::read::yours;
use super::report::{BookingRef, Cancelled, Described};
use super::store::Store;
use super::store::{holder, Status};
use super::tools::CancelArgs;
use crate::engine::{Call, CallError, Done, Msg, Reply};
use crate::typed::Round;

/// Cancels the caller's booking `call` names, once the caller confirms.
pub(super) async fn cancel_booking<'r, S: Store, L: Locate<'r> + ?Sized>(
    site: &L,
    store: &mut S,
    args: CancelArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    let CancelArgs { booking_id } = args;
    let Some(booking) = yours(store, booking_id, &holder(call.principal)).await? else {
        return Ok(fail(
            reply,
            &Msg(format_args!(
                "There is no booking '{}' of yours to cancel.",
                Text(booking_id)
            )),
        ));
    };
    let (room, zone) = site.locate(&booking.new.room);
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
            let b = store.cancel(booking.id, &booking.new.holder).await?;
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
