//! The booking tools as an [`App`]: a floor and a store; each call is checked against its
//! tool's arguments and handed to the tool's handler.

use super::answer::fail;
use super::book::book_room;
use super::cancel::cancel_booking;
use super::floor::Floor;
use super::list::list_rooms;
use super::store::Store;
use super::tools::{BookingTool, TOOLS};
use crate::engine::{App, Call, CallError, Done, Msg, Reply, ServerInfo, ToolEntry};

/// A floor of rooms and where their bookings live, as an [`App`].
pub struct BookingApp<'r, S: Store> {
    floor: Floor<'r>,
    store: S,
    info: ServerInfo,
}

impl<'r, S: Store> BookingApp<'r, S> {
    /// The booking tools over `floor`, keeping bookings in `store`.
    pub fn new(floor: Floor<'r>, store: S, info: ServerInfo) -> Self {
        BookingApp { floor, store, info }
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }
}

impl<S: Store> App for BookingApp<'_, S> {
    type Tool = BookingTool;

    fn info(&self) -> ServerInfo {
        self.info
    }

    fn tools(&self) -> &[ToolEntry<BookingTool>] {
        TOOLS
    }

    // Out of line (and each tool's handler): as LTO inlined them into the engine's loop the
    // panel's image was 1.2 KiB larger (thumbv6m 50 460 -> 49 568 B with all five apart).
    #[inline(never)]
    fn call_tool(
        &mut self,
        tool: BookingTool,
        call: &Call<'_>,
        reply: Reply<'_, '_>,
    ) -> Result<Done, CallError> {
        if let Err(e) = call.check_args(tool.args()) {
            return Ok(fail(reply, &Msg(format_args!("{e}"))));
        }
        match tool {
            BookingTool::BookRoom => book_room(self.floor, &mut self.store, call, reply),
            BookingTool::CancelBooking => cancel_booking(self.floor, &mut self.store, call, reply),
            BookingTool::ListRooms => list_rooms(self.floor, &self.store, call, reply),
        }
    }
}
