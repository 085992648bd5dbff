//! `cancel_booking`: asks the holder to confirm, then cancels.

use super::answer::{complete, fail, Text, UNREADABLE};
use super::floor::Floor;
use super::link::{Desk, Link};
use super::report::{BookingRef, Cancelled, Described};
use super::store::{holder, Status};
use super::tools::CancelArgs;
use crate::engine::{Call, CallError, Done, Elicited, Msg, Reply};
use crate::mrtr::{Field, FieldKind, Form, Question};
use crate::typed::{Args as _, Scratch};

const CONFIRM_KEY: &str = "confirm";

/// Cancels the caller's booking `call` names, once the caller confirms.
pub(super) async fn cancel_booking<L: Link>(
    floor: Floor<'_>,
    store: &Desk<L>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    let mut scratch = [0; CancelArgs::SCRATCH];
    let Ok(CancelArgs { booking_id }) =
        CancelArgs::read(call.args, &mut Scratch::new(&mut scratch))
    else {
        return Ok(fail(reply, &Text(UNREADABLE)));
    };
    let id = booking_id.strip_prefix("bk_").and_then(|n| n.parse().ok());
    let booking = match id {
        Some(id) => store.get(id).await?,
        None => None,
    };
    let Some(booking) = booking.filter(|b| b.new.holder == holder(call.principal)) else {
        return Ok(fail(
            reply,
            &Msg(format_args!(
                "There is no booking '{}' of yours to cancel.",
                Text(booking_id)
            )),
        ));
    };
    let room = floor.by_id(&booking.new.room);
    if booking.status == Status::Cancelled {
        return Ok(complete(
            reply,
            &Cancelled {
                booking: &booking,
                room,
                already: true,
            },
        ));
    }
    // The question (its message borrows formatting state that may not cross threads) is
    // gone before the store is awaited.
    let elicited = {
        let message = Msg(format_args!(
            "Cancel {}: {}?",
            BookingRef(&booking),
            Described(&booking, room)
        ));
        let fields = [Field {
            name: "confirm",
            title: "Yes, cancel it",
            description: None,
            required: true,
            kind: FieldKind::Boolean {
                default: Some(true),
            },
        }];
        let question = Question {
            key: CONFIRM_KEY,
            form: Form {
                message: &message,
                fields: &fields,
                mark: None,
            },
        };
        reply.elicit(call, &question, &[])?
    };
    match elicited {
        Elicited::Accepted(c, reply)
            if c.get("confirm").and_then(|v| v.as_bool()) == Some(true) =>
        {
            let b = store.cancel(booking.id, &booking.new.holder).await?;
            let b = b.ok_or(CallError::Internal("booking vanished"))?;
            Ok(complete(
                reply,
                &Cancelled {
                    booking: &b,
                    room,
                    already: false,
                },
            ))
        }
        Elicited::Accepted(_, reply) | Elicited::Declined(reply) | Elicited::Cancelled(reply) => {
            Ok(complete(
                reply,
                &Msg(format_args!(
                    "Kept {}: nothing was cancelled.",
                    BookingRef(&booking)
                )),
            ))
        }
        Elicited::Asked(done) => Ok(done),
    }
}
