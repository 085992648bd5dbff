//! The rmcp peer of `bench/compare.sh`: redmark's three tools (`book_room`, `cancel_booking`,
//! `list_rooms`, with redmark's names, input schemas and text answers) served by rmcp 3.11 over
//! stdio, written the way an rmcp stdio server is written (`ServerHandler`, `#[tokio::main]`,
//! `serve(stdio_pipes())`); with `--http ADDR`, over rmcp's Streamable HTTP server under axum
//! instead (stateless, JSON answers), printing `rmcp-peer: listening http IP:PORT` on stderr.
//! Stateless 2026-07-28 MRTR: an ambiguous `room_hint` answers with an
//! `InputRequiredResult` (an `elicitation/create` form and a requestState sealed with rmcp's own
//! HMAC-SHA256 `RequestStateCodec`, bound to the request); the retry opens it and books, or not.
//! Bookings live in memory (not durable): its booking round trip stores nothing, where redmark's
//! commits each booking to disk before answering.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::transport::io::stdio_pipes;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};

/// redmark's `tools/list` entries, verbatim (core/src/booking/tools.rs).
const TOOLS: &str = r#"[{"name":"book_room","title":"Book a room","description":"Books a meeting room for one hour that has not started yet (server clock, UTC; unchecked if unset). Give an exact room_id, or a room_hint in the user's words; if the hint fits more than one room the user is asked which.","inputSchema":{"type":"object","properties":{"day":{"type":"string","format":"date","description":"Day, YYYY-MM-DD (UTC, the server's clock)"},"hour":{"type":"integer","minimum":0,"maximum":23,"description":"Start hour of the one-hour slot, 0-23 UTC"},"room_hint":{"type":"string","maxLength":64,"description":"The room in the user's words, e.g. \"the big room\""},"room_id":{"type":"string","maxLength":24,"description":"An exact room id from list_rooms"},"attendees":{"type":"integer","minimum":1,"maximum":1000,"description":"People expected; rooms too small are not offered"}},"required":["day","hour"],"additionalProperties":false},"annotations":{"title":"Book a room","readOnlyHint":false,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}},{"name":"cancel_booking","title":"Cancel a booking","description":"Cancels one of your bookings after asking you to confirm.","inputSchema":{"type":"object","properties":{"booking_id":{"type":"string","maxLength":16,"description":"The booking, e.g. \"bk_1\""}},"required":["booking_id"],"additionalProperties":false},"annotations":{"title":"Cancel a booking","readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}},{"name":"list_rooms","title":"List rooms","description":"Lists the rooms with their seats; with day and hour, says which are free (none once that hour has started).","inputSchema":{"type":"object","properties":{"day":{"type":"string","format":"date","description":"Day, YYYY-MM-DD (UTC, the server's clock)"},"hour":{"type":"integer","minimum":0,"maximum":23,"description":"Start hour, 0-23 UTC"},"attendees":{"type":"integer","minimum":1,"maximum":1000,"description":"Only rooms with at least this many seats"}},"additionalProperties":false},"annotations":{"title":"List rooms","readOnlyHint":true,"openWorldHint":false}}]"#;

struct Room {
    id: &'static str,
    name: &'static str,
    seats: u64,
    aliases: &'static [&'static str],
}

const FLOOR: [Room; 3] = [
    Room { id: "atrium", name: "The Atrium", seats: 24, aliases: &["the big room", "big room"] },
    Room { id: "studio-b", name: "Studio B", seats: 12, aliases: &["the big room", "big room"] },
    Room { id: "nook", name: "The Nook", seats: 4, aliases: &["the small room", "small room"] },
];

fn matches(room: &Room, hint: &str) -> bool {
    let norm = |s: &str| {
        let s = s.trim().to_lowercase();
        s.strip_prefix("the ").map(str::to_string).unwrap_or(s)
    };
    let h = norm(hint);
    [room.id, room.name].iter().chain(room.aliases).any(|n| norm(n) == h)
}

#[derive(Default)]
struct Bookings {
    next: u64,
    by_slot: HashMap<(String, String, u64), String>,
    by_nonce: HashMap<Vec<u8>, String>,
}

struct Peer {
    tools: Vec<Tool>,
    codec: RequestStateCodec,
    bookings: Mutex<Bookings>,
    nonces: AtomicU64,
}

fn text(s: String, structured: Value, is_error: bool) -> CallToolResponse {
    let mut r = if is_error {
        CallToolResult::error(vec![ContentBlock::text(s)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(s)])
    };
    r.structured_content = Some(structured);
    r.into()
}

fn fail(s: &str) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(s.to_string())]).into()
}

struct BookArgs {
    day: String,
    hour: u64,
    hint: Option<String>,
    room_id: Option<String>,
    attendees: u64,
}

fn book_args(a: &JsonObject) -> Option<BookArgs> {
    let day = a.get("day")?.as_str()?;
    let b = day.as_bytes();
    let ok = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    let hour = a.get("hour")?.as_u64().filter(|h| *h < 24)?;
    ok.then(|| BookArgs {
        day: day.to_string(),
        hour,
        hint: a.get("room_hint").and_then(Value::as_str).map(str::to_string),
        room_id: a.get("room_id").and_then(Value::as_str).map(str::to_string),
        attendees: a.get("attendees").and_then(Value::as_u64).unwrap_or(1),
    })
}

impl Peer {
    fn book(&self, room: &Room, a: &BookArgs, nonce: Option<Vec<u8>>) -> CallToolResponse {
        let mut b = self.bookings.lock().unwrap();
        if let Some(id) = nonce.as_ref().and_then(|n| b.by_nonce.get(n)) {
            let id = id.clone();
            return self.booked(room, a, &id);
        }
        let slot = (room.id.to_string(), a.day.clone(), a.hour);
        if b.by_slot.contains_key(&slot) {
            return fail("That room is already booked at that hour; try another hour.");
        }
        b.next += 1;
        let id = format!("bk_{}", b.next);
        b.by_slot.insert(slot, id.clone());
        if let Some(n) = nonce {
            b.by_nonce.insert(n, id.clone());
        }
        drop(b);
        self.booked(room, a, &id)
    }

    fn booked(&self, room: &Room, a: &BookArgs, id: &str) -> CallToolResponse {
        text(
            format!(
                "Booked {} ({} seats) on {} at {:02}:00–{:02}:00 — booking {id}.",
                room.name, room.seats, a.day, a.hour, a.hour + 1
            ),
            json!({"booked": true, "booking": {"id": id, "room_id": room.id, "room_name": room.name,
                   "day": a.day, "hour": a.hour, "status": "active"}}),
            false,
        )
    }

    fn book_room(&self, p: &CallToolRequestParams) -> Result<CallToolResponse, ErrorData> {
        let Some(a) = p.arguments.as_ref().and_then(book_args) else {
            return Ok(fail("Invalid arguments: expected day (YYYY-MM-DD), hour (0-23), and optionally room_id or room_hint, attendees."));
        };
        if let Some(id) = &a.room_id {
            return Ok(match FLOOR.iter().find(|r| r.id == id) {
                Some(room) => self.book(room, &a, None),
                None => fail(&format!("There is no room '{id}'.")),
            });
        }
        let hint = a.hint.clone().unwrap_or_default();
        let fits: Vec<&Room> = FLOOR
            .iter()
            .filter(|r| r.seats >= a.attendees && (hint.is_empty() || matches(r, &hint)))
            .collect();
        if fits.len() == 1 {
            return Ok(self.book(fits[0], &a, None));
        }
        // The request the state is bound to (as redmark binds its digest): tool + arguments.
        let bound = format!("book_room|{}|{}|{}|{}", a.day, a.hour, hint, a.attendees);
        if let Some(state) = &p.request_state {
            let nonce = self
                .codec
                .open_with(state, bound.as_bytes())
                .map_err(|_| ErrorData::invalid_params("Invalid requestState", None))?;
            let answer = p.input_responses.as_ref().and_then(|r| r.get("room"));
            return Ok(match answer.and_then(|v| v["action"].as_str()) {
                Some("accept") => {
                    let want = answer.and_then(|v| v["content"]["room_id"].as_str()).unwrap_or("");
                    match fits.iter().find(|r| r.id == want) {
                        Some(room) => self.book(room, &a, Some(nonce)),
                        None => fail("That room is not one of the choices."),
                    }
                }
                Some("decline") => text(
                    "Not booked: you declined to choose a room.".into(),
                    json!({"booked": false}),
                    false,
                ),
                Some("cancel") => text(
                    "Cancelled: nothing was booked.".into(),
                    json!({"booked": false}),
                    false,
                ),
                _ => return Err(ErrorData::invalid_params("Missing inputResponses.room", None)),
            });
        }
        let one_of: Vec<Value> = fits
            .iter()
            .map(|r| json!({"const": r.id, "title": format!("{} ({} seats)", r.name, r.seats)}))
            .collect();
        let schema = serde_json::from_value(json!({
            "type": "object",
            "properties": {"room_id": {"type": "string", "title": "Room",
                           "description": "The room to book", "oneOf": one_of}},
            "required": ["room_id"]
        }))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let message = if hint.is_empty() {
            "Which room should be booked?".to_string()
        } else {
            format!("'{hint}' matches more than one room. Which did you mean?")
        };
        let ask = InputRequest::Elicitation(ElicitRequest::new(
            ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema: schema },
        ));
        let mut requests = InputRequests::new();
        requests.insert("room".to_string(), ask);
        // A fresh value per question keys the booking, so a replayed retry books at most once.
        let nonce = format!("{:016x}", self.nonces.fetch_add(1, Ordering::Relaxed));
        let state = self
            .codec
            .seal_with(nonce.as_bytes(), &SealOptions::new().associated_data(bound.as_bytes()));
        Ok(InputRequiredResult::new(Some(requests), Some(state)).into())
    }

    fn cancel_booking(&self, p: &CallToolRequestParams) -> Result<CallToolResponse, ErrorData> {
        let Some(id) = p.arguments.as_ref().and_then(|a| a.get("booking_id")?.as_str().map(str::to_string)) else {
            return Ok(fail("Invalid arguments: expected booking_id, e.g. \"bk_1\"."));
        };
        let found = self.bookings.lock().unwrap().by_slot.iter().find(|(_, v)| **v == id).map(|(k, _)| k.clone());
        let Some(slot) = found else {
            return Ok(fail(&format!("There is no booking '{id}' of yours to cancel.")));
        };
        let bound = format!("cancel_booking|{id}");
        match &p.request_state {
            None => {
                let schema = serde_json::from_value(json!({"type": "object", "properties": {
                    "confirm": {"type": "boolean", "title": "Yes, cancel it"}}, "required": ["confirm"]}))
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                let ask = InputRequest::Elicitation(ElicitRequest::new(
                    ElicitRequestParams::FormElicitationParams {
                        meta: None,
                        message: format!("Cancel {id}: {} on {} at {:02}:00?", slot.0, slot.1, slot.2),
                        requested_schema: schema,
                    },
                ));
                let mut requests = InputRequests::new();
                requests.insert("confirm".to_string(), ask);
                let state = self.codec.seal_with(b"cancel", &SealOptions::new().associated_data(bound.as_bytes()));
                Ok(InputRequiredResult::new(Some(requests), Some(state)).into())
            }
            Some(state) => {
                self.codec
                    .open_with(state, bound.as_bytes())
                    .map_err(|_| ErrorData::invalid_params("Invalid requestState", None))?;
                let answer = p.input_responses.as_ref().and_then(|r| r.get("confirm"));
                let yes = answer.map(|v| v["action"] == "accept" && v["content"]["confirm"] == true).unwrap_or(false);
                if yes {
                    self.bookings.lock().unwrap().by_slot.remove(&slot);
                    Ok(text(format!("Cancelled {id}."), json!({"cancelled": true}), false))
                } else {
                    Ok(text(format!("Kept {id}: nothing was cancelled."), json!({"cancelled": false}), false))
                }
            }
        }
    }

    fn list_rooms(&self, p: &CallToolRequestParams) -> Result<CallToolResponse, ErrorData> {
        let a = p.arguments.clone().unwrap_or_default();
        let day = a.get("day").and_then(Value::as_str);
        let hour = a.get("hour").and_then(Value::as_u64);
        let min = a.get("attendees").and_then(Value::as_u64).unwrap_or(1);
        let b = self.bookings.lock().unwrap();
        let mut out = String::new();
        let mut rooms = Vec::new();
        for r in FLOOR.iter().filter(|r| r.seats >= min) {
            match (day, hour) {
                (Some(d), Some(h)) => {
                    let free = !b.by_slot.contains_key(&(r.id.to_string(), d.to_string(), h));
                    out += &format!(
                        "{} — {} ({} seats), {} on {d} at {h:02}:00–{:02}:00\n",
                        r.id, r.name, r.seats, if free { "free" } else { "booked" }, h + 1
                    );
                    rooms.push(json!({"id": r.id, "name": r.name, "seats": r.seats, "free": free}));
                }
                (None, None) => {
                    out += &format!("{} — {} ({} seats)\n", r.id, r.name, r.seats);
                    rooms.push(json!({"id": r.id, "name": r.name, "seats": r.seats}));
                }
                _ => return Ok(fail("Give both day and hour to see which rooms are free.")),
            }
        }
        Ok(text(out, json!({"rooms": rooms}), false))
    }
}

impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.protocol_version = ProtocolVersion::V_2026_07_28;
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match request.name.as_ref() {
            "book_room" => self.book_room(&request),
            "cancel_booking" => self.cancel_booking(&request),
            "list_rooms" => self.list_rooms(&request),
            _ => Err(ErrorData::invalid_params(format!("Unknown tool: {}", request.name), None)),
        }
    }
}

fn peer() -> Peer {
    let key = std::env::var("REDMARK_KEY").unwrap_or_else(|_| "00".repeat(32));
    Peer {
        tools: serde_json::from_str(TOOLS).expect("redmark's tool list"),
        codec: RequestStateCodec::try_new(key.into_bytes()).expect("a 32-byte key"),
        bookings: Mutex::new(Bookings::default()),
        // Seeded from the clock so a restarted peer does not reissue old nonces.
        nonces: AtomicU64::new(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0),
        ),
    }
}

/// Serves one `Peer` (one booking table, shared by the handler rmcp makes per request) over
/// Streamable HTTP at `addr`, path `/mcp`.
async fn serve_http(addr: &str) {
    use rmcp::transport::streamable_http_server::{
        session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
    };
    let peer = std::sync::Arc::new(peer());
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let service = StreamableHttpService::new(
        move || Ok(peer.clone()),
        std::sync::Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => return eprintln!("rmcp-peer: {addr}: {e}"),
    };
    if let Ok(at) = listener.local_addr() {
        eprintln!("rmcp-peer: listening http {at}");
    }
    if let Err(e) = axum::serve(listener, router).await {
        eprintln!("rmcp-peer: {e}");
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, addr] = args.as_slice() {
        if flag == "--http" {
            return serve_http(addr).await;
        }
    }
    match peer().serve(stdio_pipes()).await {
        Ok(running) => {
            let _ = running.waiting().await;
        }
        Err(e) => eprintln!("rmcp-peer: {e}"),
    }
}
