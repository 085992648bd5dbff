//! The booking tools as an [`App`]: a floor and the store it books, and each tool declared
//! once (`#[app]` checks and reads a call's arguments and hands them to the tool).

use super::book::book_room;
#[cfg(feature = "campus")]
use super::campus::{building_for, list_site};
use super::cancel::cancel_booking;
#[cfg(feature = "meeting-life")]
use super::checkin::check_in;
use super::floor::Floor;
#[cfg(not(feature = "campus"))]
use super::list::list_rooms;
#[cfg(feature = "meeting-life")]
use super::meeting::{end_booking, extend_booking};
#[cfg(feature = "list-bookings")]
use super::mine::list_bookings;
#[cfg(feature = "day-schedule")]
use super::schedule::day_schedule;
use super::store::Store;
#[cfg(any(feature = "meeting-life", feature = "operators"))]
use super::tools::BookingArgs;
#[cfg(feature = "day-schedule")]
use super::tools::DayArgs;
#[cfg(feature = "meeting-life")]
use super::tools::ExtendArgs;
#[cfg(feature = "list-bookings")]
use super::tools::MineArgs;
use super::tools::{BookArgs, CancelArgs, ListArgs};
#[cfg(feature = "operators")]
use super::trail_tool::booking_trail;
#[cfg(feature = "day-schedule")]
use super::{mcp_app, room_complete, room_day};
use crate::engine::{App, Call, Replied, Reply, ServerInfo, ToolEntry};
#[cfg(feature = "day-schedule")]
use crate::engine::{CallError, CompletionRequest, Completions, Done, ResourceInfo, TemplateInfo};
use crate::typed::Tools as _;
use redmark_macros::app;

/// A floor of rooms (or, feature `campus`, a site of buildings) and the store that keeps their
/// bookings, as an [`App`].
pub struct BookingApp<'r, S> {
    floor: Floor<'r>,
    /// The site's buildings, when it has more than `floor` (the first of them).
    #[cfg(feature = "campus")]
    site: &'r [Floor<'r>],
    store: S,
    info: ServerInfo,
}

/// The buildings served: the site's, else the one floor.
#[cfg(any(
    feature = "campus",
    feature = "list-bookings",
    feature = "day-schedule",
    feature = "meeting-life"
))]
fn buildings<'a, 'r>(floor: &'a Floor<'r>, _site: &'a [Floor<'r>]) -> &'a [Floor<'r>] {
    #[cfg(feature = "campus")]
    if !_site.is_empty() {
        return _site;
    }
    core::slice::from_ref(floor)
}

impl<'r, S: Store> BookingApp<'r, S> {
    /// The booking tools over `floor`, keeping bookings in `store`. A store whose operations
    /// are ready at once is served by [`Engine::handle`](crate::Engine::handle); one that
    /// waits (across a network or a bus) by [`Engine::handling`](crate::Engine::handling).
    pub const fn new(floor: Floor<'r>, store: S, info: ServerInfo) -> Self {
        BookingApp {
            floor,
            #[cfg(feature = "campus")]
            site: &[],
            store,
            info,
        }
    }

    /// The booking tools over a site of buildings (each a [`Floor`] with its own id, name,
    /// zone and hours; room ids unique across the site): a call works inside one building, the
    /// one it names or its room is in (asked when a hint fits rooms in several), else the
    /// first. An empty site serves [`DEFAULT_FLOOR`](super::DEFAULT_FLOOR).
    #[cfg(feature = "campus")]
    pub fn site(site: &'r [Floor<'r>], store: S, info: ServerInfo) -> Self {
        let floor = site.first().copied().unwrap_or(super::DEFAULT_FLOOR);
        BookingApp {
            floor,
            site,
            store,
            info,
        }
    }

    /// The site's buildings (none for one floor, and always none without `campus`).
    #[cfg(any(
        feature = "list-bookings",
        feature = "day-schedule",
        feature = "meeting-life"
    ))]
    fn site_buildings(&self) -> &'r [Floor<'r>] {
        #[cfg(feature = "campus")]
        return self.site;
        #[cfg(not(feature = "campus"))]
        &[]
    }

    /// The buildings served (one for a floor).
    #[cfg(feature = "campus")]
    pub fn buildings(&self) -> &[Floor<'r>] {
        buildings(&self.floor, self.site)
    }

    /// The store (e.g. to read its bookings between messages).
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The store, mutably.
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }
}

/// The booking tools, each declared once: its description, annotations and argument type here,
/// its logic in its own file.
#[app(tools = BookingTool)]
impl<S: Store> App for BookingApp<'_, S> {
    fn info(&self) -> ServerInfo {
        self.info
    }

    /// The floor as an MCP App ([`mcp_app`]).
    #[cfg(feature = "day-schedule")]
    fn resources(&self) -> &[ResourceInfo] {
        mcp_app::RESOURCES
    }

    /// A room's day (`redmark://rooms/{room}/{day}`, [`watched`](super::watched)) is
    /// followed on a `subscriptions/listen` stream: the host reports its bookings' changes.
    #[cfg(feature = "day-schedule")]
    fn serves_subscriptions(&self) -> bool {
        true
    }

    #[cfg(feature = "day-schedule")]
    fn subscribable(&self, uri: &str) -> bool {
        let floors = buildings(&self.floor, self.site_buildings());
        super::watched(floors, uri).is_some()
    }

    /// A room's day ([`mod@room_day`]).
    #[cfg(feature = "day-schedule")]
    fn resource_templates(&self) -> &[TemplateInfo] {
        room_day::TEMPLATES
    }

    /// The MCP App's document, or a room's day read from the store.
    #[cfg(feature = "day-schedule")]
    async fn read_resource(
        &mut self,
        uri: &str,
        call: &Call<'_>,
        reply: Reply<'_, '_>,
    ) -> Result<Done, CallError> {
        if uri == mcp_app::APP_URI {
            return mcp_app::read(uri, call, reply);
        }
        let site = buildings(&self.floor, self.site_buildings());
        room_day::read(site, &mut self.store, uri, call, reply).await
    }

    /// The room-day template's `room` and `day` ([`mod@room_day`]).
    #[cfg(feature = "day-schedule")]
    fn serves_completions(&self) -> bool {
        true
    }

    #[cfg(feature = "day-schedule")]
    fn complete(
        &mut self,
        request: &CompletionRequest<'_>,
        out: &mut Completions<'_, '_>,
    ) -> Result<(), CallError> {
        room_complete::complete(buildings(&self.floor, self.site_buildings()), request, out)
    }

    /// Books a meeting room (for an hour unless minutes says otherwise) on the floor's clock.
    /// Give an exact room_id, or a room_hint in the user's words; if it fits more than one room
    /// the user is asked which.
    #[tool(title = "Book a room", idempotent, salient = all, answers_need_state)]
    async fn book_room(&mut self, args: BookArgs<'_>, call: &Call, reply: Reply) -> Replied {
        // The building first (no await: the handling keeps only the booking's own state).
        #[cfg(feature = "campus")]
        let (floor, reply, here) = match building_for(self.buildings(), &args, call, reply)? {
            Ok(chosen) => chosen,
            Err(done) => return Ok(done),
        };
        #[cfg(feature = "campus")]
        return book_room(floor, &mut self.store, args, call, reply, here).await;
        #[cfg(not(feature = "campus"))]
        book_room(self.floor, &mut self.store, args, call, reply, ()).await
    }

    /// Cancels one of your bookings, asking you to confirm first when your client can show a form.
    #[tool(title = "Cancel a booking", answers_need_state)]
    #[tool(destructive, idempotent, salient = all)]
    async fn cancel_booking(&mut self, args: CancelArgs<'_>, call: &Call, reply: Reply) -> Replied {
        #[cfg(feature = "campus")]
        return cancel_booking(
            buildings(&self.floor, self.site),
            &mut self.store,
            args,
            call,
            reply,
        )
        .await;
        #[cfg(not(feature = "campus"))]
        cancel_booking(&self.floor, &mut self.store, args, call, reply).await
    }

    /// Extends one of your bookings by some minutes, while its room is free then (a meeting
    /// that runs on); if it is not, says until when it is and which rooms are free instead.
    #[cfg(feature = "meeting-life")]
    #[tool(title = "Extend a booking")]
    async fn extend_booking(&mut self, args: ExtendArgs<'_>, call: &Call, reply: Reply) -> Replied {
        let floors = buildings(&self.floor, self.site_buildings());
        extend_booking(floors, &mut self.store, args, call, reply).await
    }

    /// Ends one of your bookings now (at the floor's next step), giving the rest of its time
    /// back: a meeting that ended early.
    #[cfg(feature = "meeting-life")]
    #[tool(title = "End a booking early", destructive, idempotent)]
    async fn end_booking(&mut self, args: BookingArgs<'_>, call: &Call, reply: Reply) -> Replied {
        let floors = buildings(&self.floor, self.site_buildings());
        end_booking(floors, &mut self.store, args, call, reply).await
    }

    /// Checks you in to one of your bookings, from 10 minutes before its start until the
    /// floor's check-in window ends: on a floor with check-in, a booking nobody checks in to
    /// is released when its window passes.
    #[cfg(feature = "meeting-life")]
    #[tool(title = "Check in", idempotent)]
    async fn check_in(&mut self, args: BookingArgs<'_>, call: &Call, reply: Reply) -> Replied {
        let floors = buildings(&self.floor, self.site_buildings());
        check_in(floors, &mut self.store, args, call, reply).await
    }

    /// For the floor's operators: who made and changed a booking, when, how and where.
    #[cfg(feature = "operators")]
    #[tool(title = "A booking's trail", read_only, idempotent)]
    async fn booking_trail(&mut self, args: BookingArgs<'_>, call: &Call, reply: Reply) -> Replied {
        booking_trail(&mut self.store, args, call, reply).await
    }

    /// Lists the rooms with their seats; with a day and a start (and minutes), says which are
    /// free all that time (none once it has started).
    #[tool(title = "List rooms", read_only, idempotent)]
    async fn list_rooms(&mut self, args: ListArgs<'_>, call: &Call, reply: Reply) -> Replied {
        #[cfg(feature = "campus")]
        return list_site(
            buildings(&self.floor, self.site),
            &mut self.store,
            args,
            call,
            reply,
        )
        .await;
        #[cfg(not(feature = "campus"))]
        list_rooms(self.floor, &mut self.store, args, call, reply).await
    }

    /// Shows one day of the floor: each room with its seats and the times it is booked that
    /// day (the floor's time zone), so a free time is seen at a glance.
    #[cfg(feature = "day-schedule")]
    #[tool(title = "Day schedule", read_only, idempotent, meta = mcp_app::TOOL_META)]
    async fn day_schedule(&mut self, args: DayArgs<'_>, call: &Call, reply: Reply) -> Replied {
        day_schedule(
            buildings(&self.floor, self.site_buildings()),
            &mut self.store,
            args,
            call,
            reply,
        )
        .await
    }

    /// Lists your bookings, earliest first: those of one day, or those still to come (from
    /// the one under way on); a long list comes a page at a time.
    #[cfg(feature = "list-bookings")]
    #[tool(title = "List your bookings", read_only, idempotent)]
    async fn list_bookings(&mut self, args: MineArgs<'_>, call: &Call, reply: Reply) -> Replied {
        list_bookings(
            buildings(&self.floor, self.site_buildings()),
            &mut self.store,
            args,
            call,
            reply,
        )
        .await
    }
}

/// The booking tools, in `tools/list` order.
pub const TOOLS: &[ToolEntry<BookingTool>] = BookingTool::TOOLS;

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(any(feature = "meeting-life", feature = "operators"))]
    use crate::booking::tools::BookingArgs;
    #[cfg(feature = "day-schedule")]
    use crate::booking::tools::DayArgs;
    #[cfg(feature = "list-bookings")]
    use crate::booking::tools::MineArgs;
    use crate::booking::tools::{BookArgs, CancelArgs, ListArgs};
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
                FieldKind::Boolean { .. } => p["type"] = json!("boolean"),
                _ => unreachable!("tools take text, integers and booleans"),
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
            #[cfg(feature = "day-schedule")]
            BookingTool::DaySchedule,
            #[cfg(feature = "list-bookings")]
            BookingTool::ListBookings,
            #[cfg(feature = "meeting-life")]
            BookingTool::ExtendBooking,
            #[cfg(feature = "meeting-life")]
            BookingTool::EndBooking,
            #[cfg(feature = "meeting-life")]
            BookingTool::CheckIn,
        ];
        for t in all {
            assert_eq!(TOOLS.iter().filter(|e| e.tool == t).count(), 1, "{t:?}");
        }
        for (i, e) in TOOLS.iter().enumerate() {
            assert!(TOOLS[..i].iter().all(|o| o.info.name != e.info.name));
        }
    }

    /// Each tool's argument table, by its name.
    fn args_of(tool: &str) -> &'static [Arg] {
        use crate::typed::Args as _;
        match tool {
            "book_room" => BookArgs::ARGS,
            "cancel_booking" => CancelArgs::ARGS,
            "list_rooms" => ListArgs::ARGS,
            #[cfg(feature = "day-schedule")]
            "day_schedule" => DayArgs::ARGS,
            #[cfg(feature = "list-bookings")]
            "list_bookings" => MineArgs::ARGS,
            #[cfg(feature = "meeting-life")]
            "extend_booking" => ExtendArgs::ARGS,
            #[cfg(feature = "meeting-life")]
            "end_booking" => BookingArgs::ARGS,
            #[cfg(feature = "meeting-life")]
            "check_in" => BookingArgs::ARGS,
            #[cfg(feature = "operators")]
            "booking_trail" => BookingArgs::ARGS,
            _ => unreachable!("{tool}"),
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
            let (tool, fields) = (&entry.info, args_of(entry.info.name));
            let mut declared: Value = serde_json::from_str(tool.input_schema).unwrap();
            for p in declared["properties"].as_object_mut().unwrap().values_mut() {
                p.as_object_mut().unwrap().remove("description");
            }
            assert_eq!(declared, schema_of(fields), "{}", tool.name);
        }
    }
}
