//! A tool that is not ours: a door panel's `extend_meeting`, on redmark-core's public API.
//! It asks to confirm the new end time and seals the times it quoted in `requestState`, so
//! the confirming call extends to exactly what was confirmed, at most once, and refuses if the
//! meeting changed meanwhile. A library, so it builds bare-metal; `core/tests/` drives it.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![allow(missing_docs)]

use redmark_core::engine::{App, Call, CallError, Done, Msg, Reply, ServerInfo, ToolEntry};
use redmark_core::typed::{Args, Elicited, Question, Round, Sealed, Tools};
use redmark_core::{complete, fail};

/// A time of day on the panel's clock, in minutes since midnight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Sealed)]
pub struct Minute(pub u16);
impl core::fmt::Display for Minute {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:02}:{:02}", self.0 / 60, self.0 % 60)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Tools)]
pub enum PanelTool {
    /// Extends the meeting in this room by some minutes, once the user has confirmed the new
    /// end time.
    #[tool(name = "extend_meeting", title = "Extend the meeting", args = ExtendArgs)]
    #[tool(answers_need_state)] // not idempotent: the state makes an operation's retries so
    ExtendMeeting,
}
#[derive(Args)]
struct ExtendArgs<'a> {
    /// The room whose panel this is
    #[arg(max_len = 24, header = "Room")] // gateways route by room: `Mcp-Param-Room`
    room: &'a str,
    /// How many minutes longer
    #[arg(min = 5, max = 120)]
    minutes: u16,
}
#[derive(Question)]
struct Confirm {
    #[field(title = "Yes, extend it", default = true)]
    confirm: bool,
}
/// What a call quoted: the meeting's end then, and the end it asked to confirm.
#[derive(Clone, Copy, Sealed)]
struct Quote(Minute, Minute);

/// A door panel hosting `extend_meeting`: its room, and the meeting there (ends before next).
pub struct Panel {
    pub room: &'static str,
    pub title: &'static str,
    pub ends: Minute,
    pub next_starts: Option<Minute>,
    pub info: ServerInfo,
}

impl App for Panel {
    type Tool = PanelTool;
    fn info(&self) -> ServerInfo {
        self.info
    }
    fn tools(&self) -> &[ToolEntry<PanelTool>] {
        PanelTool::TOOLS
    }
    async fn call_tool(
        &mut self,
        _: PanelTool,
        call: &Call<'_>,
        reply: Reply<'_, '_>,
    ) -> Result<Done, CallError> {
        let mut scratch = [0; ExtendArgs::SCRATCH];
        let a = match call.read_args::<ExtendArgs>(&mut scratch) {
            Ok(a) => a,
            Err(e) => return Ok(reply.fail(&e)),
        };
        let (here, room, title, ends) = (self.room, a.room, self.title, self.ends);
        if room != here {
            return fail!(reply, "This is the panel of '{here}', not of '{room}'.");
        }
        // Asked before: keep to what was quoted (the verified state). Else quote now.
        let Quote(from, to) =
            Quote::unseal(call).unwrap_or(Quote(ends, Minute(ends.0 + a.minutes)));
        let limit = self.next_starts.unwrap_or(Minute(24 * 60));
        if to > limit {
            return fail!(reply, "'{title}' can run until {limit} at most, not {to}.");
        }
        let ask = Msg(format_args!("Extend '{title}' until {to}?"));
        match reply.question::<Confirm>(call, &ask, &Quote(from, to).seal())? {
            Round::Asked(done) => Ok(done),
            Round::Answered(Elicited::Accepted(Confirm { confirm: true }), r) => {
                if ends != from && ends != to {
                    return fail!(r, "'{title}' changed: it now ends at {ends}. Not extended.");
                }
                self.ends = to; // (already `to` on this operation's retry: the same answer)
                complete!(r, "Extended '{title}' until {to}.")
            }
            Round::Answered(_, r) => complete!(r, "Not extended: '{title}' still ends at {ends}."),
        }
    }
}
