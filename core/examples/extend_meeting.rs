//! A door panel's `extend_meeting`, not ours, on the public API: it confirms the new end and seals
//! its quote in `requestState`, so the retry extends once, as confirmed, or not if it changed.
#![cfg_attr(not(test), no_std)]
use redmark_core::prelude::*;
#[derive(Args)]
struct ExtendArgs<'a> {
    /// The room whose panel this is
    #[arg(max_len = 24, header = "Room")] // gateways route by room: `Mcp-Param-Room`
    room: &'a str,
    /// How many minutes longer
    #[arg(min = 5, max = 120)]
    minutes: u16,
}
/// What a call quoted, sealed: the meeting's end then, and the end it asked to confirm.
type Quote = (TimeOfDay, TimeOfDay);
/// A door panel hosting `extend_meeting`: its room, and the meeting there (ends before next).
pub struct Panel {
    pub room: &'static str,
    pub title: &'static str,
    pub ends: TimeOfDay,
    pub next_starts: Option<TimeOfDay>,
}
#[app]
impl App for Panel {
    /// Extends this room's meeting by some minutes, once the user has confirmed the new end time.
    #[tool(title = "Extend the meeting", answers_need_state)] // not idempotent: the state makes retries so
    async fn extend_meeting(&mut self, a: ExtendArgs<'_>, call: &Call, reply: Reply) -> Replied {
        let (here, room, title, ends) = (self.room, a.room, self.title, self.ends);
        if room != here {
            return fail!(reply, "This is the panel of '{here}', not of '{room}'.");
        }
        // Asked before: keep to what was quoted (the verified state). Else quote now.
        let (from, to) = Quote::unseal(call).unwrap_or((ends, ends + a.minutes));
        let limit = self.next_starts.unwrap_or(TimeOfDay::END_OF_DAY);
        if to > limit {
            return fail!(reply, "'{title}' can run until {limit} at most, not {to}.");
        }
        let ask = Msg(format_args!("Extend '{title}' until {to}?"));
        let (yes, r) =
            answered!(reply.confirm(call, "Yes, extend it", &ask, &(from, to).seal())?);
        if !yes {
            return complete!(r, "Not extended: '{title}' still ends at {ends}.");
        }
        if ends != from && ends != to {
            return fail!(r, "'{title}' changed: it now ends at {ends}. Not extended.");
        }
        self.ends = to; // (already `to` on this operation's retry: the same answer)
        complete!(r, "Extended '{title}' until {to}.")
    }
}
