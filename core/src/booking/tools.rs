//! The booking tools' arguments (the schemas, the checks every call runs first, and the typed
//! reads), on `#[derive(Args)]`; the tools themselves are declared in `app.rs`.

use redmark_macros::Args;

use crate::limits::{MAX_BOOKING_ID_ARG, MAX_ROOM_HINT, MAX_ROOM_ID};

/// `book_room`'s arguments.
#[derive(Args)]
pub(super) struct BookArgs<'s> {
    /// Day, YYYY-MM-DD (UTC, the server's clock)
    #[arg(format = "date")]
    pub(super) day: &'s str,
    /// Start hour of the one-hour slot, 0-23 UTC
    #[arg(min = 0, max = 23)]
    pub(super) hour: i64,
    /// The room in the user's words, e.g. "the big room"
    #[arg(max_len = MAX_ROOM_HINT)]
    pub(super) room_hint: Option<&'s str>,
    /// An exact room id from list_rooms
    #[arg(max_len = MAX_ROOM_ID)]
    pub(super) room_id: Option<&'s str>,
    /// People expected; rooms too small are not offered
    #[arg(min = 1, max = 1000)]
    pub(super) attendees: Option<u16>,
}

/// `cancel_booking`'s arguments.
#[derive(Args)]
pub(super) struct CancelArgs<'s> {
    /// The booking, e.g. "bk_1"
    #[arg(max_len = MAX_BOOKING_ID_ARG)]
    pub(super) booking_id: &'s str,
}

/// `list_rooms`'s arguments.
#[derive(Args)]
pub(super) struct ListArgs<'s> {
    /// Day, YYYY-MM-DD (UTC, the server's clock)
    #[arg(format = "date")]
    pub(super) day: Option<&'s str>,
    /// Start hour, 0-23 UTC
    #[arg(min = 0, max = 23)]
    pub(super) hour: Option<i64>,
    /// Only rooms with at least this many seats
    #[arg(min = 1, max = 1000)]
    pub(super) attendees: Option<u16>,
}

/// `day_schedule`'s arguments.
#[cfg(feature = "day-schedule")]
#[derive(Args)]
pub(super) struct DayArgs<'s> {
    /// Day, YYYY-MM-DD (UTC, the server's clock)
    #[arg(format = "date")]
    pub(super) day: &'s str,
    /// Only rooms with at least this many seats
    #[arg(min = 1, max = 1000)]
    pub(super) attendees: Option<u16>,
}

/// `list_bookings`' arguments.
#[cfg(feature = "list-bookings")]
#[derive(Args)]
pub(super) struct MineArgs<'s> {
    /// Only this day, YYYY-MM-DD (UTC); without it, the bookings still to come
    #[arg(format = "date")]
    pub(super) day: Option<&'s str>,
    /// The next page: the booking the last page ended with (its "next"), e.g. "bk_7"
    #[arg(max_len = MAX_BOOKING_ID_ARG)]
    pub(super) after: Option<&'s str>,
}
