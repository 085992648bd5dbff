//! The booking tools as an [`App`]: a floor and a desk to the store; each call is checked
//! against its tool's arguments and handed to the tool's handler.

use super::answer::fail;
use super::book::book_room;
use super::cancel::cancel_booking;
use super::floor::Floor;
use super::link::{Desk, Immediate, Link};
use super::list::list_rooms;
#[cfg(feature = "list-bookings")]
use super::mine::list_bookings;
use super::store::Store;
use super::tools::{BookingTool, TOOLS};
use crate::engine::{App, Call, CallError, Done, Msg, Reply, ServerInfo, ToolEntry};
use crate::typed::Tools as _;

/// A floor of rooms and the way to where their bookings live, as an [`App`].
pub struct BookingApp<'r, L: Link> {
    floor: Floor<'r>,
    desk: Desk<L>,
    info: ServerInfo,
}

impl<'r, S: Store> BookingApp<'r, Immediate<S>> {
    /// The booking tools over `floor`, keeping bookings in the synchronous `store` (every
    /// operation answered at once: [`Engine::handle`](crate::Engine::handle) serves it).
    pub fn new(floor: Floor<'r>, store: S, info: ServerInfo) -> Self {
        Self::with_link(floor, Immediate::new(store), info)
    }

    /// The store.
    pub fn store(&self) -> core::cell::Ref<'_, S> {
        self.desk.link().store()
    }
}

impl<'r, L: Link> BookingApp<'r, L> {
    /// The booking tools over `floor`, leaving store operations on `link` for the host to
    /// answer (drive the engine with [`Engine::handling`](crate::Engine::handling)).
    pub fn with_link(floor: Floor<'r>, link: L, info: ServerInfo) -> Self {
        BookingApp {
            floor,
            desk: Desk::new(link),
            info,
        }
    }

    /// The link the tools leave store operations on.
    pub fn link(&self) -> &L {
        self.desk.link()
    }
}

impl<L: Link> App for BookingApp<'_, L> {
    type Tool = BookingTool;

    fn info(&self) -> ServerInfo {
        self.info
    }

    fn tools(&self) -> &[ToolEntry<BookingTool>] {
        TOOLS
    }

    async fn call_tool(
        &mut self,
        tool: BookingTool,
        call: &Call<'_>,
        reply: Reply<'_, '_>,
    ) -> Result<Done, CallError> {
        if let Err(e) = call.check_args(tool.args()) {
            return Ok(fail(reply, &Msg(format_args!("{e}"))));
        }
        match tool {
            BookingTool::BookRoom => book_room(self.floor, &self.desk, call, reply).await,
            BookingTool::CancelBooking => cancel_booking(self.floor, &self.desk, call, reply).await,
            BookingTool::ListRooms => list_rooms(self.floor, &self.desk, call, reply).await,
            #[cfg(feature = "list-bookings")]
            BookingTool::ListBookings => list_bookings(self.floor, &self.desk, call, reply).await,
        }
    }
}
