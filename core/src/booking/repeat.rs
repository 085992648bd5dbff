//! A wall time the clocks repeat (the autumn change): asking which of its two times is meant,
//! both sealed, so the answer books one of the two the question showed.

use core::fmt;

use super::answer::{complete, Text};
use super::floor::Floor;
use super::floor::Here;
use super::report::NotBooked;
use super::span::Span;
use super::zone::{Local, Rfc3339, Zone};
use crate::engine::{Call, CallError, Done, Msg, Reply};
use crate::mrtr::Choice;
use crate::typed::{Elicited, Offer, Pick, Round, Sealed};
use redmark_macros::Question;

/// Which of the two times a repeated wall time names: asked only then. No argument stands in
/// (`start` is the wall time the clocks repeat, and no argument takes an offset), and booking
/// either would guess: a client that cannot be asked gets `-32021`.
#[derive(Question)]
#[question(key = "time")]
struct WhichTime {
    /// The clocks show this time twice that night
    #[field(title = "Start")]
    start: Pick<2>,
}

/// One of a repeated wall time's two spans, as offered: `02:30–03:30, the first time
/// (2026-10-25T02:30:00+02:00)`.
struct Repeat<'z>(Span, &'z dyn Zone, &'static str);

impl fmt::Display for Repeat<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let local = Local(self.0, self.1);
        let (_, at) = local.starts();
        write!(
            f,
            "{at}–{}, {} ({})",
            local.ends_at(),
            self.2,
            Rfc3339(self.0.start, self.1)
        )
    }
}

/// Asks which of a repeated wall time's two spans, `a` (the earlier) or `b`, is meant: the
/// span with the reply still to be given, or the call's answer.
pub(super) fn ask_which<'w, 'b>(
    floor: Floor<'_>,
    call: &Call<'_>,
    reply: Reply<'w, 'b>,
    a: Span,
    b: Span,
    here: Here,
) -> Result<Result<(Span, Reply<'w, 'b>), Done>, CallError> {
    let zone = floor.zone;
    let (first, second) = (
        Repeat(a, zone, "the first time"),
        Repeat(b, zone, "the second time"),
    );
    let offer: Offer<'_, 2> = [("first", &first), ("second", &second)]
        .into_iter()
        .map(|(value, title)| Choice {
            value,
            title: title as &dyn fmt::Display,
        })
        .collect();
    let (on, at) = Local(a, zone).starts();
    let message = Msg(format_args!(
        "{at} comes twice on {on} on this floor's clock ({}): the clocks go back that night. \
         Which do you mean?",
        Text(zone.name())
    ));
    let state = (a.start, b.start, a.minutes(), here).seal();
    Ok(
        match reply.question_offering::<WhichTime>(call, &message, &state, &offer)? {
            Round::Sent(done) => Err(done),
            Round::Answer(Elicited::Accepted(WhichTime { start }), reply) => {
                Ok((if start.index() == 0 { a } else { b }, reply))
            }
            Round::Answer(Elicited::Declined, reply) => Err(complete(reply, &NotBooked::Declined)),
            Round::Answer(Elicited::Cancelled, reply) => {
                Err(complete(reply, &NotBooked::Cancelled))
            }
        },
    )
}
