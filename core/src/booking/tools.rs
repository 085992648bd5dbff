//! The booking tools' arguments (the schemas, the checks every call runs first, and the typed
//! reads), on `#[derive(Args)]`; the tools themselves are declared in `app.rs`.

use redmark_macros::Args;

use crate::limits::{MAX_BOOKING_ID_ARG, MAX_DAY_ARG, MAX_ROOM_HINT, MAX_ROOM_ID, MAX_TITLE};
#[cfg(feature = "campus")]
use crate::limits::{MAX_BUILDING_ARG, MAX_EQUIPMENT_ARG, MAX_LEVEL_ARG};

/// `book_room`'s arguments.
#[derive(Args)]
pub(super) struct BookArgs<'s> {
    /// Day: YYYY-MM-DD, today, tomorrow or a weekday (the next one)
    #[arg(max_len = MAX_DAY_ARG)]
    pub(super) day: &'s str,
    /// Start time, e.g. 9, 09:30 or 14:45
    #[arg(max_len = 5)]
    pub(super) start: Option<&'s str>,
    /// Start hour, 0-23, instead of start
    #[arg(min = 0, max = 23)]
    pub(super) hour: Option<i64>,
    /// How long, in minutes (default 60)
    #[arg(min = 1, max = 1440)]
    pub(super) minutes: Option<u16>,
    /// What the meeting is called, e.g. "Design review"
    #[arg(max_len = MAX_TITLE)]
    pub(super) title: Option<&'s str>,
    /// The room in the user's words, e.g. "the big room"
    #[arg(max_len = MAX_ROOM_HINT)]
    pub(super) room_hint: Option<&'s str>,
    /// An exact room id from list_rooms
    #[arg(max_len = MAX_ROOM_ID)]
    pub(super) room_id: Option<&'s str>,
    /// People expected; rooms too small are not offered
    #[arg(min = 1, max = 1000)]
    pub(super) attendees: Option<u16>,
    #[cfg(feature = "campus")]
    /// Building id or name (default: the room_id's, else the one whose rooms fit room_hint, else the first)
    #[arg(max_len = MAX_BUILDING_ARG)]
    pub(super) building: Option<&'s str>,
    #[cfg(feature = "campus")]
    /// Equipment the room must have, comma-separated, e.g. "video, whiteboard"
    #[arg(max_len = MAX_EQUIPMENT_ARG)]
    pub(super) equipment: Option<&'s str>,
    #[cfg(feature = "series")]
    /// Repeat the booking: daily or weekly (at most 52 times), with until or count
    #[arg(max_len = 8)]
    pub(super) repeat: Option<&'s str>,
    #[cfg(feature = "series")]
    /// Weekly on these weekdays, comma-separated, e.g. "mon,thu" (default: the day's)
    #[arg(max_len = 64)]
    pub(super) weekdays: Option<&'s str>,
    #[cfg(feature = "series")]
    /// Every how many days or weeks (default 1)
    #[arg(min = 1, max = 52)]
    pub(super) every: Option<u16>,
    #[cfg(feature = "series")]
    /// The last day of the series, YYYY-MM-DD (or count)
    #[arg(max_len = MAX_DAY_ARG)]
    pub(super) until: Option<&'s str>,
    #[cfg(feature = "series")]
    /// How many times in all (or until)
    #[arg(min = 1, max = 1000)]
    pub(super) count: Option<u16>,
}

/// The arguments of a tool that acts on one booking: `cancel_booking`, `end_booking`,
/// `check_in`, `booking_trail`.
#[cfg(any(feature = "meeting-life", feature = "operators"))]
#[derive(Args)]
pub(super) struct BookingArgs<'s> {
    /// The booking, e.g. "bk_1"
    #[arg(max_len = MAX_BOOKING_ID_ARG)]
    pub(super) booking_id: &'s str,
}

/// `cancel_booking`'s arguments.
#[derive(Args)]
pub(super) struct CancelArgs<'s> {
    /// The booking, e.g. "bk_1"
    #[arg(max_len = MAX_BOOKING_ID_ARG)]
    pub(super) booking_id: &'s str,
    #[cfg(feature = "series")]
    /// true: cancel every occurrence still to come of the series this booking is part of
    pub(super) series: Option<bool>,
}

/// `extend_booking`'s arguments.
#[cfg(feature = "meeting-life")]
#[derive(Args)]
pub(super) struct ExtendArgs<'s> {
    /// The booking, e.g. "bk_1"
    #[arg(max_len = MAX_BOOKING_ID_ARG)]
    pub(super) booking_id: &'s str,
    /// By how many minutes, on the floor's grid (e.g. 15 or 30)
    #[arg(min = 1, max = 1440)]
    pub(super) minutes: u16,
}

/// `list_rooms`'s arguments.
#[derive(Args)]
pub(super) struct ListArgs<'s> {
    /// Day: YYYY-MM-DD, today, tomorrow or a weekday (the next one)
    #[arg(max_len = MAX_DAY_ARG)]
    pub(super) day: Option<&'s str>,
    /// From when, e.g. 9 or 14:30
    #[arg(max_len = 5)]
    pub(super) start: Option<&'s str>,
    /// Whole hour, 0-23, instead of start
    #[arg(min = 0, max = 23)]
    pub(super) hour: Option<i64>,
    /// For how long, in minutes (default 60)
    #[arg(min = 1, max = 1440)]
    pub(super) minutes: Option<u16>,
    /// Only rooms with at least this many seats
    #[arg(min = 1, max = 1000)]
    pub(super) attendees: Option<u16>,
    #[cfg(feature = "campus")]
    /// Building id or name (default: every building)
    #[arg(max_len = MAX_BUILDING_ARG)]
    pub(super) building: Option<&'s str>,
    #[cfg(feature = "campus")]
    /// Only rooms on this level (storey), e.g. "3" or "Ground"
    #[arg(max_len = MAX_LEVEL_ARG)]
    pub(super) level: Option<&'s str>,
    #[cfg(feature = "campus")]
    /// Equipment the room must have, comma-separated, e.g. "video, whiteboard"
    #[arg(max_len = MAX_EQUIPMENT_ARG)]
    pub(super) equipment: Option<&'s str>,
}

/// `day_schedule`'s arguments.
#[cfg(feature = "day-schedule")]
#[derive(Args)]
pub(super) struct DayArgs<'s> {
    /// Day: YYYY-MM-DD, today, tomorrow or a weekday (the next one)
    #[arg(max_len = MAX_DAY_ARG)]
    pub(super) day: &'s str,
    /// Only rooms with at least this many seats
    #[arg(min = 1, max = 1000)]
    pub(super) attendees: Option<u16>,
    #[cfg(feature = "campus")]
    /// Building id or name (default: the first)
    #[arg(max_len = MAX_BUILDING_ARG)]
    pub(super) building: Option<&'s str>,
    #[cfg(feature = "campus")]
    /// Only rooms on this level (storey), e.g. "3" or "Ground"
    #[arg(max_len = MAX_LEVEL_ARG)]
    pub(super) level: Option<&'s str>,
    #[cfg(feature = "campus")]
    /// Equipment the room must have, comma-separated, e.g. "video, whiteboard"
    #[arg(max_len = MAX_EQUIPMENT_ARG)]
    pub(super) equipment: Option<&'s str>,
}

/// `list_bookings`' arguments.
#[cfg(feature = "list-bookings")]
#[derive(Args)]
pub(super) struct MineArgs<'s> {
    /// Only this day (YYYY-MM-DD, today, tomorrow or a weekday); without it, the
    /// bookings still to come
    #[arg(max_len = MAX_DAY_ARG)]
    pub(super) day: Option<&'s str>,
    /// The next page: the booking the last page ended with (its "next"), e.g. "bk_7"
    #[arg(max_len = MAX_BOOKING_ID_ARG)]
    pub(super) after: Option<&'s str>,
}
