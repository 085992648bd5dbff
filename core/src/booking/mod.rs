//! Room booking: the floor, the store trait, and the `book_room`, `cancel_booking` and
//! `list_rooms` tools, hosted by the panel and the desktop alike.

mod answer;
mod app;
mod book;
mod cancel;
mod floor;
mod list;
mod mem_store;
mod read;
mod report;
mod slot;
mod store;
mod tools;
mod vacancy;

pub use app::BookingApp;
pub use floor::{Floor, Room, DEFAULT_FLOOR};
pub use mem_store::MemStore;
pub use slot::{Day, Slot, CLOCK_SET_FROM};
pub use store::{
    Booking, BookingId, Commit, Holder, NewBooking, RoomId, Status, Store, StoreError,
};
pub use tools::{BookingTool, TOOLS};
