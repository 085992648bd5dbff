//! The booking tools, each declared once: `book_room`, `cancel_booking`, `list_rooms` and
//! `list_bookings` as `tools/list` shows them, and their arguments (the schemas, the checks every call runs
//! first, and the typed reads), on the derives of `redmark-macros`.

use redmark_macros::{Args, Tools};

use crate::engine::ToolEntry;
use crate::limits::{MAX_BOOKING_ID_ARG, MAX_ROOM_HINT, MAX_ROOM_ID};
use crate::typed::Tools as _;

/// One of the booking tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Tools)]
pub enum BookingTool {
    /// Books a meeting room for one hour that has not started yet (server clock, UTC;
    /// unchecked if unset). Give an exact room_id, or a room_hint in the user's words; if the
    /// hint fits more than one room the user is asked which.
    #[tool(name = "book_room", title = "Book a room", args = BookArgs)]
    #[tool(idempotent, salient = all, answers_need_state)]
    BookRoom,
    /// Cancels one of your bookings after asking you to confirm.
    #[tool(name = "cancel_booking", title = "Cancel a booking", args = CancelArgs)]
    #[tool(destructive, idempotent, salient = all, answers_need_state)]
    CancelBooking,
    /// Lists the rooms with their seats; with day and hour, says which are free (none once
    /// that hour has started).
    #[tool(name = "list_rooms", title = "List rooms", args = ListArgs)]
    #[tool(read_only, idempotent)]
    ListRooms,
    /// Lists your bookings, earliest first: those of one day, or those still to come (from
    /// the hour under way on); a long list comes a page at a time.
    #[cfg(feature = "list-bookings")]
    #[tool(name = "list_bookings", title = "List your bookings", args = MineArgs)]
    #[tool(read_only, idempotent)]
    ListBookings,
}

/// The booking tools, in `tools/list` order.
pub const TOOLS: &[ToolEntry<BookingTool>] = BookingTool::TOOLS;

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
    #[arg(max_len = 64)]
    pub(super) room_hint: Option<&'s str>,
    /// An exact room id from list_rooms
    #[arg(max_len = 24)]
    pub(super) room_id: Option<&'s str>,
    /// People expected; rooms too small are not offered
    #[arg(min = 1, max = 1000)]
    pub(super) attendees: Option<u16>,
}

/// `cancel_booking`'s arguments.
#[derive(Args)]
pub(super) struct CancelArgs<'s> {
    /// The booking, e.g. "bk_1"
    #[arg(max_len = 16)]
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

/// `list_bookings`' arguments.
#[cfg(feature = "list-bookings")]
#[derive(Args)]
pub(super) struct MineArgs<'s> {
    /// Only this day, YYYY-MM-DD (UTC); without it, the bookings still to come
    #[arg(format = "date")]
    pub(super) day: Option<&'s str>,
    /// The next page: the booking the last page ended with (its "next"), e.g. "bk_7"
    #[arg(max_len = 16)]
    pub(super) after: Option<&'s str>,
}

// The schemas' lengths are literals (they are written at compile time): they are the limits.
const _: () = assert!(MAX_ROOM_HINT == 64 && MAX_ROOM_ID == 24 && MAX_BOOKING_ID_ARG == 16);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Arg;
    use crate::mrtr::{FieldKind, TextFormat};
    use serde_json::{json, Value};

    /// The schema a field table says, in the shape the tools' `inputSchema` literals use.
    fn schema_of(args: &[Arg]) -> Value {
        let fields: std::vec::Vec<_> = args.iter().map(Arg::field).collect();
        let mut props = serde_json::Map::new();
        for f in &fields {
            let mut p = json!({});
            match f.kind {
                FieldKind::Text {
                    max_len, format, ..
                } => {
                    p["type"] = json!("string");
                    if let Some(n) = max_len {
                        p["maxLength"] = json!(n);
                    }
                    if let Some(TextFormat::Date) = format {
                        p["format"] = json!("date");
                    }
                }
                FieldKind::Integer { min, max, .. } => {
                    p["type"] = json!("integer");
                    p["minimum"] = json!(min.unwrap());
                    p["maximum"] = json!(max.unwrap());
                }
                _ => unreachable!("tools take text and integers"),
            }
            props.insert(f.name.into(), p);
        }
        let required: std::vec::Vec<_> = fields
            .iter()
            .filter(|f| f.required)
            .map(|f| f.name)
            .collect();
        let mut s = json!({"type": "object", "properties": props, "additionalProperties": false});
        if !required.is_empty() {
            s["required"] = json!(required);
        }
        s
    }

    #[test]
    fn each_tool_is_declared_once() {
        let all = [
            BookingTool::BookRoom,
            BookingTool::CancelBooking,
            BookingTool::ListRooms,
            #[cfg(feature = "list-bookings")]
            BookingTool::ListBookings,
        ];
        for t in all {
            assert_eq!(TOOLS.iter().filter(|e| e.tool == t).count(), 1, "{t:?}");
        }
        for (i, e) in TOOLS.iter().enumerate() {
            assert!(TOOLS[..i].iter().all(|o| o.info.name != e.info.name));
        }
    }

    #[test]
    fn param_headers_are_what_the_schemas_mark() {
        for e in TOOLS {
            assert!(e.info.param_headers_match_schema(), "{}", e.info.name);
        }
    }

    #[test]
    fn argument_tables_are_the_input_schemas() {
        for entry in TOOLS {
            let (tool, fields) = (&entry.info, entry.tool.args());
            let mut declared: Value = serde_json::from_str(tool.input_schema).unwrap();
            for p in declared["properties"].as_object_mut().unwrap().values_mut() {
                p.as_object_mut().unwrap().remove("description");
            }
            assert_eq!(declared, schema_of(fields), "{}", tool.name);
        }
    }
}
