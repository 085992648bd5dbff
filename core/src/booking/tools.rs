//! `book_room`, `cancel_booking` and `list_rooms`: tools that ask only when they must and do
//! the irreversible thing last.

use heapless::{String, Vec};
use sha2::{Digest, Sha256};

use super::floor::{Floor, Mask, Room};
use super::read::{find, int, required, text, Unreadable};
use super::slot::{Day, Slot};
use super::store::{Commit, Holder, NewBooking, Status, Store, StoreError};
use crate::engine::{
    App, Arg, ArgKind, Call, CallError, Done, Elicited, Msg, Reply, Report, ServerInfo, ToolEntry,
    ToolInfo,
};
use crate::limits::{
    MAX_BOOKING_ID_ARG, MAX_DAY_ARG, MAX_ROOMS, MAX_ROOM_HINT, MAX_ROOM_ID, UTF8_MAX,
};
use crate::mrtr::{Choice, Field, FieldKind, Form, Question, TextFormat};
use crate::wire::json::Value;
use crate::wire::write::Num;

use super::report::{
    Booked, BookingRef, Cancelled, Described, Earliest, NotBooked, RoomList, RoomQuestion, Taken,
    TooSmall, UnknownRoom,
};

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
    fn args(self) -> &'static [Arg] {
        match self {
            BookingTool::BookRoom => BOOK_ARGS,
            BookingTool::CancelBooking => CANCEL_ARGS,
            BookingTool::ListRooms => LIST_ARGS,
        }
    }
}

const BOOK_ARGS: &[Arg] = &[
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
const CANCEL_ARGS: &[Arg] = &[arg(
    "booking_id",
    true,
    ArgKind::Text(Some(MAX_BOOKING_ID_ARG as u16), None),
)];
const LIST_ARGS: &[Arg] = &[
    arg("day", false, DAY),
    arg("hour", false, HOUR),
    arg("attendees", false, PEOPLE),
];

/// Arguments that passed the field check but cannot be read (a declared one sent twice).
const UNREADABLE: &str = "Invalid arguments: see the tool's inputSchema.";

/// A complete result through the one `dyn Report` instance of `Reply::complete` rather than
/// one per report type (each instance is 200-500 B of a panel's flash: 3.4 KiB in all).
fn complete(reply: Reply<'_, '_>, r: &dyn Report) -> Done {
    reply.complete(r)
}

/// A failed result, as [`complete`] through `dyn Report`.
fn fail(reply: Reply<'_, '_>, r: &dyn Report) -> Done {
    reply.fail(r)
}

/// A text as a [`Report`] that is `Sized`, so it too goes through `dyn Report`; and as `{}`
/// written with `write_str`, not `str`'s `Display` (which links `Formatter::pad`).
struct Text<'a>(&'a str);

impl Report for Text<'_> {
    fn text(&self, f: &mut dyn core::fmt::Write) -> core::fmt::Result {
        f.write_str(self.0)
    }
}

impl core::fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.0)
    }
}

const ROOM_KEY: &str = "room";
const CONFIRM_KEY: &str = "confirm";

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

    // Out of line (and each tool below): as LTO inlined them into the engine's loop the
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
            BookingTool::BookRoom => self.book_room(call, reply),
            BookingTool::CancelBooking => self.cancel_booking(call, reply),
            BookingTool::ListRooms => self.list_rooms(call, reply),
        }
    }
}

/// `book_room`'s arguments.
struct BookArgs<'s> {
    day: &'s str,
    hour: i64,
    room_hint: Option<&'s str>,
    room_id: Option<&'s str>,
    attendees: Option<u16>,
}

/// Where `book_room`'s string arguments are decoded when they hold escapes.
struct BookBufs {
    day: [u8; MAX_DAY_ARG],
    room_hint: [u8; MAX_ROOM_HINT * UTF8_MAX],
    room_id: [u8; MAX_ROOM_ID * UTF8_MAX],
}

impl<'s> BookArgs<'s> {
    /// Reads checked arguments.
    fn read(sent: Option<Value<'s>>, b: &'s mut BookBufs) -> Result<Self, Unreadable> {
        let mut found = [None; BOOK_ARGS.len()];
        find(sent, BOOK_ARGS, &mut found)?;
        // In BOOK_ARGS' order.
        let [day, hour, room_hint, room_id, attendees] = found;
        Ok(BookArgs {
            day: required(text(day, &mut b.day))?,
            hour: required(int(hour))?,
            room_hint: text(room_hint, &mut b.room_hint)?,
            room_id: text(room_id, &mut b.room_id)?,
            attendees: int(attendees)?,
        })
    }
}

/// `list_rooms`'s arguments.
struct ListArgs<'s> {
    day: Option<&'s str>,
    hour: Option<i64>,
    attendees: Option<u16>,
}

impl<'s> ListArgs<'s> {
    /// Reads checked arguments (`day` decoded into `buf` when it holds escapes).
    fn read(sent: Option<Value<'s>>, buf: &'s mut [u8; MAX_DAY_ARG]) -> Result<Self, Unreadable> {
        let mut found = [None; LIST_ARGS.len()];
        find(sent, LIST_ARGS, &mut found)?;
        // In LIST_ARGS' order.
        let [day, hour, attendees] = found;
        Ok(ListArgs {
            day: text(day, buf)?,
            hour: int(hour)?,
            attendees: int(attendees)?,
        })
    }
}

impl<'r, S: Store> BookingApp<'r, S> {
    #[inline(never)]
    fn book_room(&mut self, call: &Call<'_>, reply: Reply<'_, '_>) -> Result<Done, CallError> {
        let mut bufs = BookBufs {
            day: [0; MAX_DAY_ARG],
            room_hint: [0; MAX_ROOM_HINT * UTF8_MAX],
            room_id: [0; MAX_ROOM_ID * UTF8_MAX],
        };
        let Ok(args) = BookArgs::read(call.args, &mut bufs) else {
            return Ok(fail(reply, &Text(UNREADABLE)));
        };
        let Some(slot) = slot(args.day, args.hour) else {
            return Ok(fail(
                reply,
                &Msg(format_args!(
                "'{}' at hour {} is not a bookable slot: give day as YYYY-MM-DD and hour as 0-23.",
                Text(args.day),
                Num(args.hour)
            )),
            ));
        };
        if slot.is_past(call.now) {
            // A replayed final retry of a booking this operation made is reported, even once
            // its hour has started: at most once means the same answer every time.
            if let Some(b) = self
                .store
                .made_by(&holder(call.principal), &call.operation())?
            {
                let room = self
                    .floor
                    .by_id(&b.new.room)
                    .ok_or(CallError::Internal("booked room not on the floor"))?;
                return Ok(complete(reply, &Booked { room, booking: &b }));
            }
            return Ok(fail(
                reply,
                &Msg(format_args!(
                    "Not booked: {slot} has already started. {}",
                    Earliest(call.now)
                )),
            ));
        }
        let people = args.attendees.unwrap_or(0);
        let fits = self.floor.mask(|r| r.seats >= people);
        let (room, reply) = match (args.room_id, args.room_hint) {
            (Some(id), _) => match self.floor.by_id(id) {
                Some(room) => (room, reply),
                None => {
                    return Ok(fail(
                        reply,
                        &UnknownRoom {
                            floor: self.floor,
                            id,
                        },
                    ))
                }
            },
            (None, hint) => {
                let named = hint.map_or(0, |h| self.floor.matching(h));
                // An unknown hint, or none, offers every room that fits.
                let pool = if named == 0 {
                    self.floor.mask(|_| true)
                } else {
                    named
                };
                let candidates = pool & fits;
                match candidates.count_ones() {
                    0 => {
                        return Ok(fail(
                            reply,
                            &TooSmall {
                                floor: self.floor,
                                pool,
                                people,
                            },
                        ))
                    }
                    1 => match self.floor.iter(candidates).next() {
                        Some(room) => (room, reply),
                        None => return Err(CallError::Internal("empty candidate set")),
                    },
                    _ => match self.choose_room(call, reply, hint, named != 0, candidates)? {
                        Chosen::Room(room, reply) => (room, reply),
                        Chosen::Answered(done) => return Ok(done),
                    },
                }
            }
        };
        if room.seats < people {
            let pool = self.floor.mask(|r| r.id == room.id);
            return Ok(fail(
                reply,
                &TooSmall {
                    floor: self.floor,
                    pool,
                    people,
                },
            ));
        }
        let new = NewBooking {
            room: String::try_from(room.id).map_err(|_| CallError::Internal("room id too long"))?,
            slot,
            attendees: people,
            holder: holder(call.principal),
            nonce: call.operation(),
        };
        match self.store.commit(&new) {
            Ok(Commit::Created(b)) => Ok(complete(reply, &Booked { room, booking: &b })),
            // The operation had already booked: report that booking, whatever room this
            // replay names.
            Ok(Commit::Replayed(b)) => {
                let room = self.floor.by_id(&b.new.room).unwrap_or(room);
                Ok(complete(reply, &Booked { room, booking: &b }))
            }
            Ok(Commit::Taken(_)) => {
                let free = self.free_at(slot, people)?;
                Ok(fail(
                    reply,
                    &Taken {
                        floor: self.floor,
                        room,
                        slot,
                        free,
                    },
                ))
            }
            Err(StoreError::Full) => Ok(fail(
                reply,
                &Text("The booking store is full: cancel a booking first."),
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// Asks which room, or reads the answer. The form lists exactly `candidates`.
    #[inline(never)]
    fn choose_room<'w, 'b>(
        &self,
        call: &Call<'_>,
        reply: Reply<'w, 'b>,
        hint: Option<&str>,
        named: bool,
        candidates: Mask,
    ) -> Result<Chosen<'r, 'w, 'b>, CallError> {
        let choices: Vec<Choice<'_>, MAX_ROOMS> = self
            .floor
            .iter(candidates)
            .map(|r| Choice {
                value: r.id,
                title: r,
            })
            .collect();
        let message = RoomQuestion { hint, named };
        let fields = [Field {
            name: "room_id",
            title: "Room",
            description: Some("The room to book"),
            required: true,
            kind: FieldKind::Choice {
                options: &choices,
                default: None,
            },
        }];
        let question = Question {
            key: ROOM_KEY,
            form: Form {
                message: &message,
                fields: &fields,
                mark: None,
            },
        };
        let (content, reply) = match reply.elicit(call, &question, &[])? {
            Elicited::Accepted(content, reply) => (content, reply),
            Elicited::Declined(reply) => {
                return Ok(Chosen::Answered(complete(reply, &NotBooked::Declined)))
            }
            Elicited::Cancelled(reply) => {
                return Ok(Chosen::Answered(complete(reply, &NotBooked::Cancelled)))
            }
            Elicited::Asked(done) => return Ok(Chosen::Answered(done)),
        };
        let room = self
            .floor
            .iter(candidates)
            .find(|r| content.get("room_id").is_some_and(|v| v.eq_str(r.id)));
        match room {
            Some(room) => Ok(Chosen::Room(room, reply)),
            None => Err(CallError::Internal("validated answer names no candidate")),
        }
    }

    #[inline(never)]
    fn free_at(&self, slot: Slot, people: u16) -> Result<Mask, CallError> {
        let mut free = 0;
        for (i, r) in self.floor.rooms.iter().take(MAX_ROOMS).enumerate() {
            let taken = self.store.occupant(r.id, slot)?;
            if taken.is_none() && r.seats >= people {
                free |= 1 << i;
            }
        }
        Ok(free)
    }

    #[inline(never)]
    fn cancel_booking(&mut self, call: &Call<'_>, reply: Reply<'_, '_>) -> Result<Done, CallError> {
        let mut buf = [0; MAX_BOOKING_ID_ARG * UTF8_MAX];
        let mut found = [None; CANCEL_ARGS.len()];
        let read = find(call.args, CANCEL_ARGS, &mut found).and_then(|()| {
            let [booking_id] = found;
            required(text(booking_id, &mut buf))
        });
        let Ok(booking_id) = read else {
            return Ok(fail(reply, &Text(UNREADABLE)));
        };
        let id = booking_id.strip_prefix("bk_").and_then(|n| n.parse().ok());
        let booking = match id {
            Some(id) => self.store.get(id)?,
            None => None,
        };
        let Some(booking) = booking.filter(|b| b.new.holder == holder(call.principal)) else {
            return Ok(fail(
                reply,
                &Msg(format_args!(
                    "There is no booking '{}' of yours to cancel.",
                    Text(booking_id)
                )),
            ));
        };
        let room = self.floor.by_id(&booking.new.room);
        if booking.status == Status::Cancelled {
            return Ok(complete(
                reply,
                &Cancelled {
                    booking: &booking,
                    room,
                    already: true,
                },
            ));
        }
        let message = Msg(format_args!(
            "Cancel {}: {}?",
            BookingRef(&booking),
            Described(&booking, room)
        ));
        let fields = [Field {
            name: "confirm",
            title: "Yes, cancel it",
            description: None,
            required: true,
            kind: FieldKind::Boolean {
                default: Some(true),
            },
        }];
        let question = Question {
            key: CONFIRM_KEY,
            form: Form {
                message: &message,
                fields: &fields,
                mark: None,
            },
        };
        match reply.elicit(call, &question, &[])? {
            Elicited::Accepted(c, reply)
                if c.get("confirm").and_then(|v| v.as_bool()) == Some(true) =>
            {
                let b = self.store.cancel(booking.id, &booking.new.holder)?;
                let b = b.ok_or(CallError::Internal("booking vanished"))?;
                Ok(complete(
                    reply,
                    &Cancelled {
                        booking: &b,
                        room,
                        already: false,
                    },
                ))
            }
            Elicited::Accepted(_, reply)
            | Elicited::Declined(reply)
            | Elicited::Cancelled(reply) => Ok(complete(
                reply,
                &Msg(format_args!(
                    "Kept {}: nothing was cancelled.",
                    BookingRef(&booking)
                )),
            )),
            Elicited::Asked(done) => Ok(done),
        }
    }

    #[inline(never)]
    fn list_rooms(&mut self, call: &Call<'_>, reply: Reply<'_, '_>) -> Result<Done, CallError> {
        let mut buf = [0; MAX_DAY_ARG];
        let Ok(args) = ListArgs::read(call.args, &mut buf) else {
            return Ok(fail(reply, &Text(UNREADABLE)));
        };
        let people = args.attendees.unwrap_or(0);
        let slot = match (args.day, args.hour) {
            (None, None) => None,
            (Some(d), Some(h)) => match slot(d, h) {
                Some(s) => Some(s),
                None => {
                    return Ok(fail(
                        reply,
                        &Text("Not a bookable slot: day is YYYY-MM-DD, hour 0-23."),
                    ))
                }
            },
            _ => {
                return Ok(fail(
                    reply,
                    &Text("Give both day and hour to see which rooms are free."),
                ))
            }
        };
        let shown = self.floor.mask(|r| r.seats >= people);
        let past = slot.is_some_and(|s| s.is_past(call.now));
        let free = match slot {
            // Only hours still to come are free: a past hour shows every room as not free.
            Some(_) if past => 0,
            Some(s) => self.free_at(s, people)?,
            None => shown,
        };
        Ok(complete(
            reply,
            &RoomList {
                floor: self.floor,
                shown,
                free,
                slot,
                past: past.then_some(call.now),
            },
        ))
    }
}

enum Chosen<'r, 'w, 'b> {
    Room(&'r Room<'r>, Reply<'w, 'b>),
    Answered(Done),
}

fn slot(day: &str, hour: i64) -> Option<Slot> {
    let day = Day::parse(day)?;
    let hour = u8::try_from(hour).ok().filter(|h| *h < 24)?;
    Some(Slot { day, hour })
}

fn holder(principal: &[u8]) -> Holder {
    let d = Sha256::digest(principal);
    let mut h = [0; 8];
    h.copy_from_slice(&d[..8]);
    h
}

#[cfg(test)]
mod tests {
    use super::*;
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
