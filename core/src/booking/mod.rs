//! Room booking: the floor, the [`Store`] trait the app holds (answering at once, or awaited),
//! and the `book_room`, `cancel_booking`, `list_rooms` and `list_bookings`
//! tools, hosted by the panel and the desktop alike.

mod answer;
mod app;
mod book;
#[cfg(feature = "campus")]
mod campus;
#[cfg(feature = "campus")]
mod campus_report;
mod cancel;
#[cfg(feature = "meeting-life")]
mod checkin;
#[cfg(feature = "day-schedule")]
mod day_report;
mod floor;
#[cfg(all(feature = "series", feature = "list-bookings"))]
mod fold;
#[cfg(feature = "offer-instead")]
mod instead;
#[cfg(not(feature = "campus"))]
mod list;
#[cfg(feature = "day-schedule")]
pub mod mcp_app;
#[cfg(feature = "meeting-life")]
mod meeting;
mod mem_store;
#[cfg(feature = "list-bookings")]
mod mine;
#[cfg(any(feature = "day-schedule", feature = "public-titles"))]
mod named;
mod read;
#[cfg(feature = "clock-changes")]
mod repeat;
mod report;
#[cfg(feature = "day-schedule")]
mod room_complete;
#[cfg(feature = "day-schedule")]
pub mod room_day;
#[cfg(feature = "day-schedule")]
mod room_day_uri;
mod room_set;
#[cfg(feature = "day-schedule")]
mod schedule;
#[cfg(feature = "series")]
mod series;
#[cfg(feature = "series")]
mod series_book;
#[cfg(feature = "series")]
mod series_cancel;
mod span;
mod store;
mod time_of_day;
mod tools;
mod trail;
#[cfg(feature = "operators")]
mod trail_tool;
#[cfg(feature = "tz")]
mod tz;
mod vacancy;
mod when;
mod zone;

pub use app::BookingApp;
pub use app::{BookingTool, TOOLS};
#[cfg(feature = "meeting-life")]
pub use checkin::{release_due, CHECK_IN_EARLY_MINUTES, MAX_CHECK_IN_MINUTES, MAX_RELEASED_A_RUN};
pub use floor::{Floor, Room, DEFAULT_FLOOR, DEFAULT_GRID, DEFAULT_MAX_MINUTES, DEFAULT_SITE};
pub use mem_store::MemStore;
#[cfg(any(feature = "day-schedule", feature = "public-titles"))]
pub use named::title_readable;
#[cfg(feature = "day-schedule")]
pub use room_day_uri::{room_day, watched, ROOM_DAY_PREFIX};
#[cfg(feature = "campus")]
pub use room_set::RoomSet;
pub use room_set::{Mask, RoomBits};
pub use span::{minute_of, Day, Minute, Span, CLOCK_SET_FROM, MAX_MINUTES};
pub use time_of_day::TimeOfDay;
#[cfg(feature = "tz")]
pub use tz::Tz;
pub use zone::{day_span, wall, wall_clock, Local, Resolved, Rfc3339, Utc, Zone};
// Everything a store is made of and what RAM stores share: one list, in `store.rs`.
pub use store::*;
pub use trail::{latest, Actor, Change, Said, Step, Trail, STEP_BYTES};
