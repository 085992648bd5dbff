//! The booking tools of a panel that sets its clock by SNTP: `book_room` is refused until the
//! panel has a wall clock (what is past, and what "today" is, need the date); the other tools
//! are answered as always.

use redmark_core::booking::BookingTool;
use redmark_core::engine::{App, Call, CallError, Done, Reply, ServerInfo, ToolEntry};

use super::wall;

/// What `book_room` answers while the panel has no time.
pub const NO_TIME: &str =
    "Not booked: the panel has no time yet (its SNTP server has not answered), so it cannot tell which hours are past. Try again in a minute.";

/// A booking app whose `book_room` waits for the wall clock.
pub struct Clocked<A>(pub A);

impl<A: App<Tool = BookingTool>> App for Clocked<A> {
    type Tool = BookingTool;

    fn info(&self) -> ServerInfo {
        self.0.info()
    }

    fn tools(&self) -> &[ToolEntry<BookingTool>] {
        self.0.tools()
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
