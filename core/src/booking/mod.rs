//! Room booking: the floor, the store (a [`Store`] answering at once, or a [`Link`] the host
//! answers later), and the `book_room`, `cancel_booking` and
//! `list_rooms` tools, hosted by the panel and the desktop alike.

mod answer;
mod app;
mod book;
mod cancel;
mod floor;
mod link;
mod list;
mod mem_store;
mod pending;
mod read;
mod report;
mod slot;
mod store;
mod tools;
mod vacancy;

pub use app::BookingApp;
pub use floor::{Floor, Room, DEFAULT_FLOOR};
pub use link::{Desk, Exchange, Immediate, Link, LocalLink, Outcome, StoreOp};
pub use mem_store::MemStore;
pub use pending::{resume, run, step, Answered, Ask, Asked, Pending, Step};
pub use slot::{Day, Slot, CLOCK_SET_FROM};
pub use store::{
    Booking, BookingId, Commit, Holder, NewBooking, RoomId, Status, Store, StoreError,
};
pub use tools::{BookingTool, TOOLS};
