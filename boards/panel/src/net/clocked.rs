//! The booking tools of a networked panel: `book_room` is refused until the panel has a wall
//! clock (what is past, and what "today" is, need the date); `extend_booking`, `end_booking`
//! and `check_in` are the door's only (its buttons), left out of the network's `tools/list`
//! (with them it would outgrow the [`super::ANSWER_MAX`]-byte output buffer, and RAM for a
//! larger one there is not); the other tools are answered as always.

use redmark_core::booking::{BookingTool, TOOLS};
use redmark_core::engine::{App, Call, CallError, Done, Reply, ServerInfo, ToolEntry};

use super::wall;

/// What `book_room` answers while the panel has no time.
pub const NO_TIME: &str =
    "Not booked: the panel has no time yet (its SNTP server has not answered), so it cannot tell which hours are past. Try again in a minute.";

/// Whether a tool is the door's only.
const fn doors_only(tool: BookingTool) -> bool {
    matches!(tool, BookingTool::ExtendBooking | BookingTool::EndBooking | BookingTool::CheckIn)
}

/// How many tools the network is offered.
const NETWORK_LEN: usize = {
    let (mut i, mut n) = (0, 0);
    while i < TOOLS.len() {
        if !doors_only(TOOLS[i].tool) {
            n += 1;
        }
        i += 1;
    }
    n
};

/// The tools the network is offered, in the core's order.
static NETWORK_TOOLS: [ToolEntry<BookingTool>; NETWORK_LEN] = {
    let mut out = [TOOLS[0]; NETWORK_LEN];
    let (mut i, mut n) = (0, 0);
    while i < TOOLS.len() {
        if !doors_only(TOOLS[i].tool) {
            out[n] = TOOLS[i];
            n += 1;
        }
        i += 1;
    }
    out
};

/// A booking app whose `book_room` waits for the wall clock; the second field is true while
/// the door calls (then every tool is offered).
pub struct Clocked<A>(pub A, pub bool);

impl<A: App<Tool = BookingTool>> App for Clocked<A> {
    type Tool = BookingTool;

    fn info(&self) -> ServerInfo {
        self.0.info()
    }

    fn tools(&self) -> &[ToolEntry<BookingTool>] {
        if self.1 {
            self.0.tools()
        } else {
            &NETWORK_TOOLS
        }
    }

    async fn call_tool(
        &mut self,
        tool: BookingTool,
        call: &Call<'_>,
        reply: Reply<'_, '_>,
    ) -> Result<Done, CallError> {
        if tool == BookingTool::BookRoom && wall::awaited() {
            return Ok(reply.fail(NO_TIME));
        }
        self.0.call_tool(tool, call, reply).await
    }
}
