//! The booking tools' table: `book_room`, `cancel_booking` and `list_rooms` as `tools/list`
//! shows them, and the argument tables every call is checked against.

use crate::engine::{Arg, ArgKind, ToolEntry, ToolInfo};
use crate::limits::{MAX_BOOKING_ID_ARG, MAX_ROOM_HINT, MAX_ROOM_ID};
use crate::mrtr::TextFormat;

/// One of the booking tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BookingTool {
    /// `book_room`.
    BookRoom,
    /// `cancel_booking`.
    CancelBooking,
    /// `list_rooms`.
    ListRooms,
}

/// The booking tools, in `tools/list` order.
pub const TOOLS: &[ToolEntry<BookingTool>] = &[
    ToolEntry {
        info: ToolInfo {
            name: "book_room",
            title: "Book a room",
            description: "Books a meeting room for one hour that has not started yet (server clock, \
                UTC; unchecked if unset). Give an exact room_id, or a room_hint in the user's words; \
                if the hint fits more than one room the user is asked which.",
            input_schema: r#"{"type":"object","properties":{"day":{"type":"string","format":"date","description":"Day, YYYY-MM-DD (UTC, the server's clock)"},"hour":{"type":"integer","minimum":0,"maximum":23,"description":"Start hour of the one-hour slot, 0-23 UTC"},"room_hint":{"type":"string","maxLength":64,"description":"The room in the user's words, e.g. \"the big room\""},"room_id":{"type":"string","maxLength":24,"description":"An exact room id from list_rooms"},"attendees":{"type":"integer","minimum":1,"maximum":1000,"description":"People expected; rooms too small are not offered"}},"required":["day","hour"],"additionalProperties":false}"#,
            read_only: false,
            destructive: false,
            idempotent: true,
            salient: Some(&["day", "hour", "room_hint", "room_id", "attendees"]),
            answers_need_state: true,
            param_headers: &[],
        },
        tool: BookingTool::BookRoom,
    },
    ToolEntry {
        info: ToolInfo {
            name: "cancel_booking",
            title: "Cancel a booking",
            description: "Cancels one of your bookings after asking you to confirm.",
            input_schema: r#"{"type":"object","properties":{"booking_id":{"type":"string","maxLength":16,"description":"The booking, e.g. \"bk_1\""}},"required":["booking_id"],"additionalProperties":false}"#,
            read_only: false,
            destructive: true,
            idempotent: true,
            salient: Some(&["booking_id"]),
            answers_need_state: true,
            param_headers: &[],
        },
        tool: BookingTool::CancelBooking,
    },
    ToolEntry {
        info: ToolInfo {
            name: "list_rooms",
            title: "List rooms",
            description: "Lists the rooms with their seats; with day and hour, says which are free \
                (none once that hour has started).",
            input_schema: r#"{"type":"object","properties":{"day":{"type":"string","format":"date","description":"Day, YYYY-MM-DD (UTC, the server's clock)"},"hour":{"type":"integer","minimum":0,"maximum":23,"description":"Start hour, 0-23 UTC"},"attendees":{"type":"integer","minimum":1,"maximum":1000,"description":"Only rooms with at least this many seats"}},"additionalProperties":false}"#,
            read_only: true,
            destructive: false,
            idempotent: true,
            salient: None,
            answers_need_state: false,
            param_headers: &[],
        },
        tool: BookingTool::ListRooms,
    },
];

const fn arg(name: &'static str, required: bool, kind: ArgKind) -> Arg {
    Arg {
        name,
        required,
        kind,
    }
}

const DAY: ArgKind = ArgKind::Text(None, Some(TextFormat::Date));
const HOUR: ArgKind = ArgKind::Integer(0, 23);
const PEOPLE: ArgKind = ArgKind::Integer(1, 1000);

impl BookingTool {
    /// The arguments the tool takes, as its `inputSchema` declares them (a test keeps the two
    /// equal; descriptions live only in the schema); every call is checked against them first.
    pub(super) fn args(self) -> &'static [Arg] {
        match self {
            BookingTool::BookRoom => BOOK_ARGS,
            BookingTool::CancelBooking => CANCEL_ARGS,
            BookingTool::ListRooms => LIST_ARGS,
        }
    }
}

pub(super) const BOOK_ARGS: &[Arg] = &[
    arg("day", true, DAY),
    arg("hour", true, HOUR),
    arg(
        "room_hint",
        false,
        ArgKind::Text(Some(MAX_ROOM_HINT as u16), None),
    ),
    arg(
        "room_id",
        false,
        ArgKind::Text(Some(MAX_ROOM_ID as u16), None),
    ),
    arg("attendees", false, PEOPLE),
];
pub(super) const CANCEL_ARGS: &[Arg] = &[arg(
    "booking_id",
    true,
    ArgKind::Text(Some(MAX_BOOKING_ID_ARG as u16), None),
)];
pub(super) const LIST_ARGS: &[Arg] = &[
    arg("day", false, DAY),
    arg("hour", false, HOUR),
    arg("attendees", false, PEOPLE),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrtr::FieldKind;
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
