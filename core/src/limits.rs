//! Every capacity of the engine, in one place. Each has a typed error where it is enforced.

/// Largest JSON-RPC message the engine accepts, in bytes (transports frame to this).
pub const MAX_MESSAGE: usize = 16 * 1024;
/// Deepest nesting of arrays and objects accepted in a message.
pub const MAX_DEPTH: usize = 24;
/// Longest request id echoed, in raw JSON bytes (quotes and escapes included).
pub const MAX_ID: usize = 128;
/// Scratch for one decoded (unescaped) string: method, version, tool name, hint.
pub const MAX_STR: usize = 256;
/// Smallest output buffer the engine writes into; smaller ones are refused. Every error
/// (id up to [`MAX_ID`], echoes cut to 64 characters) and every booking result fits, but for
/// a full `list_bookings` page ([`LIST_OUT`]).
pub const MIN_OUT: usize = 1024;
/// Recommended output buffer for hosts with memory to spare.
pub const OUT: usize = 8 * 1024;
/// Bytes a tool may carry in its `requestState` payload.
pub const MAX_STATE_PAYLOAD: usize = 48;
/// Longest `requestState` string accepted, in characters.
pub const MAX_STATE_CHARS: usize = 128;
/// Most members of one object the request digest sorts; a larger object is bound by its
/// exact bytes instead (so a retry must repeat them byte for byte), keeping the digest linear.
pub const MAX_DIGEST_MEMBERS: usize = 32;
/// Keys a key ring holds (the current one and those kept for verification).
pub const MAX_KEYS: usize = 4;
/// Rooms in one building (a room set, [`Mask`](crate::booking::Mask), is this many bits): a
/// panel's few (one `u32`).
#[cfg(not(feature = "campus"))]
pub const MAX_ROOMS: usize = 16;
/// Rooms in one building (a room set, [`Mask`](crate::booking::Mask), is this many bits): a
/// desktop's building of a site.
#[cfg(feature = "campus")]
pub const MAX_ROOMS: usize = 512;
/// Buildings of one site (each with its own rooms, zone and hours).
#[cfg(feature = "campus")]
pub const MAX_BUILDINGS: usize = 16;
/// Most rooms one "which room" or "book instead" question offers (the first that fit; the
/// rest are narrowed by a hint, attendees or equipment).
pub const MAX_OFFERED_ROOMS: usize = 16;
/// Most rooms one `list_rooms` answer lists; the rest are counted ("N more: narrow by …").
#[cfg(feature = "campus")]
pub const MAX_LISTED_ROOMS: usize = 24;
/// Most rooms one `day_schedule` answer shows; the rest are counted (narrow by building,
/// level, attendees or equipment). Also what its waiting handling holds a day of each for.
#[cfg(feature = "campus")]
pub const MAX_SCHEDULE_ROOMS: usize = 32;
/// Most rooms one `day_schedule` answer shows: the whole floor.
#[cfg(not(feature = "campus"))]
pub const MAX_SCHEDULE_ROOMS: usize = MAX_ROOMS;
/// Longest `building` argument, in characters (an id or a name).
#[cfg(feature = "campus")]
pub const MAX_BUILDING_ARG: usize = 64;
/// Longest `level` argument, in characters.
#[cfg(feature = "campus")]
pub const MAX_LEVEL_ARG: usize = 32;
/// Longest `equipment` argument, in characters (comma-separated, all required).
#[cfg(feature = "campus")]
pub const MAX_EQUIPMENT_ARG: usize = 128;
/// Longest room id, in bytes.
pub const MAX_ROOM_ID: usize = 24;
/// Longest meeting title, in bytes of UTF-8.
pub const MAX_TITLE: usize = 48;
/// Longest principal a host passes in (the shell bounds its token names by it); the seal binds
/// the whole principal, length-prefixed, whatever its length.
pub const MAX_PRINCIPAL: usize = 64;
/// Most characters of client text any message echoes back (errors, tool errors, red marks),
/// so every error fits [`MIN_OUT`]; a cut is marked "…".
pub const MAX_ECHO: usize = 64;
/// Longest argument name "did you mean" compares (the edit-distance row is this wide).
pub const MAX_ARG_NAME: usize = 32;
/// Most `notifications/progress` one request may send; further reports are dropped.
pub const MAX_PROGRESS: usize = 8;
/// Most values one `completion/complete` result carries (schema `maxItems`); the rest count
/// towards `total` and set `hasMore`.
pub const MAX_COMPLETIONS: u32 = 100;
/// Longest `day` argument the booking tools read, in bytes (`YYYY-MM-DD` is 10).
pub const MAX_DAY_ARG: usize = 16;
/// Longest `room_hint` argument, in characters (the `book_room` schema's `maxLength`); read
/// into [`UTF8_MAX`] times as many bytes.
pub const MAX_ROOM_HINT: usize = 64;
/// Longest `booking_id` argument, in characters (the `cancel_booking` schema's `maxLength`;
/// `bk_` and a `u32` is 13).
pub const MAX_BOOKING_ID_ARG: usize = 16;
/// Most bookings one `list_bookings` page lists (the rest follow with `after`): a working
/// day of one room.
pub const MAX_LISTED: usize = 8;
/// Output buffer a full `list_bookings` page of the default floor fits (with an id of up to
/// [`MAX_ID`] bytes); with a smaller one, a full page is the engine's "does not fit" error.
#[cfg(not(feature = "series"))]
pub const LIST_OUT: usize = 5 * 1024;
/// Output buffer a full `list_bookings` page of the default floor fits (with an id of up to
/// [`MAX_ID`] bytes); with a smaller one, a full page is the engine's "does not fit" error.
/// With `series` a page may hold [`MAX_SERIES_LISTED`] series lines: 6.3 KiB measured with
/// the longest titles and named exceptions (`core/tests/series.rs`).
#[cfg(feature = "series")]
pub const LIST_OUT: usize = 7 * 1024;
/// Most UTF-8 bytes one character takes: a text argument of at most N characters (JSON
/// Schema's `maxLength` counts characters) is read into N × this many bytes.
pub const UTF8_MAX: usize = 4;
/// Bytes [`crate::serve::serve`] reads from its transport at a time.
pub const READ_CHUNK: usize = 64;
/// Bytes of the booking app's handling of one message on a 64-bit host (the future
/// [`Engine::handling`](crate::Engine::handling) returns: all a message waiting for its store
/// keeps, in the caller's frame or box); `core/tests/no_alloc.rs` holds it to this bound. (3.7
/// KiB with every feature: a taken room's offer of what fits instead awaits the store for each
/// room and start it checks; `day_schedule` and `list_rooms` keep the [`MAX_NAMED`] meetings
/// they name.)
#[cfg(not(feature = "campus"))]
pub const MAX_HANDLING: usize = 4 * 1024;
/// Bytes of the booking app's handling of one message on a 64-bit host (the future
/// [`Engine::handling`](crate::Engine::handling) returns); `core/tests/no_alloc.rs` holds it to
/// this bound. With `campus` (6.1 KiB with every feature): each room set a booking holds while
/// it waits is [`MAX_ROOMS`] bits, each copy of the building a building's id and name more, and
/// `list_rooms` across a site keeps up to [`MAX_LISTED_ROOMS`] rooms and [`MAX_NAMED`] meetings
/// in the way while it reads the next building. With `series` (7.9 KiB with every feature): a
/// repeating booking holds its [`MAX_OCCURRENCES`] occurrences and the list of those it books
/// (0.6 KiB each) and the ids the store gives back while it waits.
#[cfg(feature = "campus")]
pub const MAX_HANDLING: usize = 8 * 1024;
/// Most meetings one answer names: `day_schedule`'s (the caller's own, and others' titled ones
/// on a floor with public titles) and `list_rooms`' meetings in the way. Past it a meeting is
/// shown as booked times only, and `day_schedule` says how many it did not name.
pub const MAX_NAMED: usize = 16;
/// Most bookings one read of a room's day (`redmark://rooms/{room}/{day}`) lists, in start
/// order; the JSON counts the rest as `more` (a working day of half-hour meetings; its answer,
/// with the host's calendar slot, fits [`OUT`]).
pub const MAX_ROOM_DAY_BOOKINGS: usize = 16;
/// Days before today (on the floor's clock) a room's day is served for; an earlier day is
/// invalid params.
pub const ROOM_DAY_DAYS_BACK: u32 = 31;
/// Days after today a room's day is served for; a later day is invalid params.
pub const ROOM_DAY_DAYS_AHEAD: u32 = 366;
/// Dates a completion of a room-day's `day` offers: today and the days after it.
pub const ROOM_DAY_COMPLETED_DATES: u32 = 14;

/// Changes of one booking the trail tool shows (the latest; a store may keep more).
pub const TRAIL_SHOWN: usize = 8;

/// Most occurrences one repeating booking (`book_room` with `repeat`) books: a weekly meeting
/// for a year. A rule that names more is refused, saying so (`series::SeriesError::TooMany`).
pub const MAX_OCCURRENCES: usize = 52;

/// Most series one `list_bookings` page lists, each one line for all its occurrences (about
/// twice a booking's bytes): the page ends before another (`after` goes on), so a full page
/// still fits [`OUT`].
pub const MAX_SERIES_LISTED: usize = 4;

/// Exceptions of a series (an occurrence cancelled, released or in another room) that
/// `list_bookings` names on the series' one line; past them it says how many more.
pub const MAX_EXCEPTIONS_NAMED: usize = 4;

/// Runs of consecutive booking ids `list_bookings` keeps of a listed series (its occurrences'
/// ids: one run in a store that numbers a series at once); ids past them are counted as
/// `more_occurrences`, not named.
pub const MAX_ID_RUNS: usize = 4;

/// Most resource URIs one `subscriptions/listen` stream names in `resourceSubscriptions`: a
/// week of days for four rooms. More are refused with `-32602` "Too many
/// resourceSubscriptions" (`RpcError::TooManySubscriptions`, `data.max`); open another stream.
pub const MAX_LISTEN_URIS: usize = 32;
