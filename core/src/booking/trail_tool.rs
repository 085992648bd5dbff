//! `booking_trail`: an operator reads who made and changed a booking (a plain user is refused).

use core::fmt;

use super::answer::{complete, fail, Text};
use super::store::{BookingId, Store};
use super::tools::BookingArgs;
use super::trail::{Said, Trail};
use crate::engine::{Call, CallError, Done, Msg, Reply, Report};

/// Answers booking `args.booking_id`'s trail to an operator.
pub(super) async fn booking_trail<S: Store>(
    store: &mut S,
    args: BookingArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    if !call.access.operator {
        return Ok(fail(
            reply,
            &Text("A booking's trail is for the floor's operators only."),
        ));
    }
    let id = args.booking_id;
    let found = match id.strip_prefix("bk_").and_then(|n| n.parse().ok()) {
        Some(n) => store.get(n).await?.map(|b| b.id),
        None => None,
    };
    let Some(id) = found else {
        return Ok(fail(
            reply,
            &Msg(format_args!("There is no booking '{}'.", Text(id))),
        ));
    };
    let trail = store.trail(id).await?;
    Ok(complete(reply, &Trailed { id, trail: &trail }))
}

/// `bk_7: made by … at … over http on instance …; cancelled by an operator … .`
struct Trailed<'a> {
    id: BookingId,
    trail: &'a Trail,
}

impl Report for Trailed<'_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        write!(f, "bk_{}: ", self.id)?;
        if self.trail.is_empty() {
            return f.write_str("this store keeps no trail of it.");
        }
        for (i, step) in self.trail.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{}", Said(step))?;
        }
        f.write_str(".")
    }
}
