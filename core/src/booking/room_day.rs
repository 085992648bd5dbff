//! A room's day as an MCP resource (`redmark://rooms/{room}/{day}`): its bookings as JSON, titles as the floor's privacy rule says, and a slot for the host's `text/calendar` (completions of its arguments: `room_complete.rs`).
//!
//! The core reads the store and decides what the caller may read (as `day_schedule` does,
//! `named::readable`); the calendar text is the host's to write from that JSON (the desktop's ICS
//! writer, `shell/src/calendar/room_day.rs`): the core writes [`CALENDAR_SLOT`] in its place.

use core::fmt::{self, Write};

use heapless::Vec;

use super::floor::{Floor, Room};
use super::named::{readable, Reader};
use super::read::{day, today, DayArg};
use super::span::{Day, Minute, Span};
use super::store::{BookingId, Status, Store, Title};
use super::time_of_day::TimeOfDay;
use super::zone::{day_span, wall, Rfc3339};
use crate::engine::{Call, CallError, Done, Reply, TemplateInfo};
use crate::limits::{MAX_ROOM_DAY_BOOKINGS, MAX_STR, ROOM_DAY_DAYS_AHEAD, ROOM_DAY_DAYS_BACK};
use crate::wire::write::Writer;

pub use super::room_day_uri::{RoomDayUri, ROOM_DAY_PREFIX};

/// The URI template of a room's day.
pub const ROOM_DAY_TEMPLATE: &str = "redmark://rooms/{room}/{day}";
/// The MIME type of the day's bookings.
pub const JSON_MIME: &str = "application/json";
/// The MIME type of the day as a calendar.
pub const CALENDAR_MIME: &str = "text/calendar";
/// What the core writes as the calendar's text: a host replaces it (letters and punctuation
/// only, so it is written as it is, never escaped).
pub const CALENDAR_SLOT: &str = "redmark:room-day-calendar";

/// The template as `resources/templates/list` describes it.
pub const ROOM_DAY: TemplateInfo = TemplateInfo {
    uri_template: ROOM_DAY_TEMPLATE,
    name: "room-day",
    title: "A room's day",
    description: "One room's bookings on one day (room: a room id or alias; day: YYYY-MM-DD on \
                  the floor's clock, or today, tomorrow, a weekday), as JSON and as an \
                  iCalendar (text/calendar); others' titles only where the floor makes them \
                  public",
    mime_type: JSON_MIME,
};

/// A day outside [`ROOM_DAY_DAYS_BACK`]..[`ROOM_DAY_DAYS_AHEAD`] of today (`-32602`).
pub const DAY_OUT_OF_RANGE: CallError =
    CallError::InvalidParams("a room's day is served from 31 days back to 366 days ahead");
/// `today`, `tomorrow` or a weekday on a server whose clock is not set (`-32602`).
pub const DAY_NEEDS_CLOCK: CallError = CallError::InvalidParams(
    "today, tomorrow and weekdays need the server's clock: give the day as YYYY-MM-DD",
);

/// The resource templates the booking app serves.
pub const TEMPLATES: &[TemplateInfo] = &[ROOM_DAY];

/// Minutes in a day.
pub(super) const DAY: Minute = 24 * 60;

/// One booking of the day as the caller may read it.
struct Entry {
    id: BookingId,
    span: Span,
    /// Empty unless the caller may read it.
    title: Title,
    /// `Some(yours)` when the caller may read its title; `None`: shown as busy.
    readable: Option<bool>,
    status: Status,
    checked_in: bool,
}

/// The room a URI segment names across `site`: its id exactly, else the one room whose id,
/// name or alias it is (case-insensitive, "the " ignored).
pub(super) fn room_of<'a, 'r>(
    site: &'a [Floor<'r>],
    seg: &str,
) -> Option<(&'a Floor<'r>, &'r Room<'r>)> {
    if let Some(found) = site.iter().find_map(|f| f.by_id(seg).map(|r| (f, r))) {
        return Some(found);
    }
    let mut found = None;
    for f in site {
        for r in f.iter(f.matching(seg)) {
            if found.replace((f, r)).is_some() {
                return None;
            }
        }
    }
    found
}

/// `s` with its `%XX` escapes decoded into `buf`, if they are valid UTF-8.
fn unescape<'b>(s: &str, buf: &'b mut [u8]) -> Option<&'b str> {
    let (mut i, mut n, b) = (0, 0, s.as_bytes());
    while i < b.len() {
        let byte = match b[i] {
            b'%' => {
                let hex = b.get(i + 1..i + 3)?;
                let hex = core::str::from_utf8(hex).ok()?;
                i += 2;
                u8::from_str_radix(hex, 16).ok()?
            }
            c => c,
        };
        *buf.get_mut(n)? = byte;
        (i, n) = (i + 1, n + 1);
    }
    core::str::from_utf8(&buf[..n]).ok()
}

/// Whether `day` is within the days a room's day is served for around `today`.
fn in_range(day: Day, today: Day) -> bool {
    let (d, t) = (day.first_minute(), today.first_minute());
    d + ROOM_DAY_DAYS_BACK * DAY >= t && d <= t + ROOM_DAY_DAYS_AHEAD * DAY
}

/// Reads the room's day `uri` names from `store` for the caller of `call`: not found unless
/// it names a room of `site` and a day; invalid params for a day outside the range.
pub(super) async fn read<S: Store>(
    site: &[Floor<'_>],
    store: &mut S,
    uri: &str,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    let rest = uri
        .strip_prefix(ROOM_DAY_PREFIX)
        .ok_or(CallError::NotFound)?;
    let (seg, day_seg) = rest.split_once('/').ok_or(CallError::NotFound)?;
    // Decoded in a scope of its own: the buffer is not kept while the store is awaited.
    let (floor, room) = {
        let mut buf = [0u8; MAX_STR];
        let seg = unescape(seg, &mut buf).ok_or(CallError::NotFound)?;
        room_of(site, seg).ok_or(CallError::NotFound)?
    };
    let day = match day(day_seg, call.now, floor.zone) {
        DayArg::Day(d) => d,
        DayArg::NeedsClock => return Err(DAY_NEEDS_CLOCK),
        DayArg::Unknown => return Err(CallError::NotFound),
    };
    if today(call.now, floor.zone).is_some_and(|t| !in_range(day, t)) {
        return Err(DAY_OUT_OF_RANGE);
    }
    let whole = day_span(floor.zone, day);
    let me = Reader::of(call);
    let (mut list, mut more) = (Vec::<Entry, MAX_ROOM_DAY_BOOKINGS>::new(), 0u32);
    let mut from = whole.start;
    while let Some(b) = store.next_in_room(room.id, from).await? {
        let s = b.new.span;
        // Only forward, within the day: a store that answered otherwise would walk for ever.
        if s.end <= from || s.start >= whole.end {
            break;
        }
        from = s.end;
        let readable = readable(floor, &b, &me);
        let entry = Entry {
            id: b.id,
            span: s,
            title: readable.map_or_else(Title::new, |_| b.new.title),
            readable,
            status: b.status,
            checked_in: b.checked_in,
        };
        if list.push(entry).is_err() {
            more = more.saturating_add(1);
        }
    }
    let page = Page {
        floor,
        room,
        day,
        whole,
        list: &list,
        more,
    };
    Ok(reply.private_contents(|w| page.write(w)))
}

/// What one read answers.
struct Page<'a, 'r> {
    floor: &'a Floor<'r>,
    room: &'r Room<'r>,
    day: Day,
    whole: Span,
    list: &'a [Entry],
    more: u32,
}

impl Page<'_, '_> {
    /// The two contents: the JSON, then the calendar's slot.
    fn write(&self, w: &mut Writer<'_>) {
        let uri = format_args!("{}", RoomDayUri(self.room.id, self.day));
        w.begin_object().key("uri").string_fmt(uri);
        w.key("mimeType").string(JSON_MIME);
        w.key("text").string_with(|f| self.json(f)).end_object();
        w.begin_object().key("uri").string_fmt(uri);
        w.key("mimeType").string(CALENDAR_MIME);
        w.key("text").string(CALENDAR_SLOT).end_object();
    }

    /// The day as a JSON document (the `application/json` content's text).
    fn json(&self, f: &mut dyn Write) -> fmt::Result {
        let (room, zone) = (self.room, self.floor.zone);
        f.write_str("{\"room\":{\"id\":")?;
        quoted(f, room.id)?;
        f.write_str(",\"name\":")?;
        quoted(f, room.name)?;
        write!(f, ",\"seats\":{}}},\"day\":\"{}\"", room.seats, self.day)?;
        f.write_str(",\"time_zone\":")?;
        quoted(f, zone.name())?;
        f.write_str(",\"bookings\":[")?;
        let at = |m: Minute| {
            let minute = wall(zone, m).saturating_sub(self.day.first_minute());
            TimeOfDay(minute.min(DAY) as u16)
        };
        for (i, e) in self.list.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let (s, w) = (e.span, self.whole);
            write!(f, "{sep}{{\"id\":\"bk_{}\",", e.id)?;
            write!(f, "\"start\":\"{}\",", Rfc3339(s.start, zone))?;
            write!(f, "\"end\":\"{}\",", Rfc3339(s.end, zone))?;
            write!(f, "\"from\":\"{}\",", at(s.start.max(w.start)))?;
            write!(f, "\"to\":\"{}\",", at(s.end.min(w.end)))?;
            write!(f, "\"status\":\"{}\",", status(e))?;
            write!(f, "\"yours\":{}", e.readable == Some(true))?;
            match e.readable {
                None => f.write_str(",\"private\":true")?,
                Some(_) if !e.title.is_empty() => {
                    f.write_str(",\"title\":")?;
                    quoted(f, &e.title)?;
                }
                Some(_) => {}
            }
            f.write_char('}')?;
        }
        f.write_char(']')?;
        if self.more > 0 {
            write!(f, ",\"more\":{}", self.more)?;
        }
        f.write_char('}')
    }
}

/// A booking's status as the JSON says it.
fn status(e: &Entry) -> &'static str {
    match e.status {
        Status::Active if e.checked_in => "checked-in",
        Status::Active => "active",
        Status::Released => "released",
        Status::Cancelled => "cancelled",
    }
}

/// `s` as a JSON string into `f`.
fn quoted(f: &mut dyn Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
    use crate::engine::{Config, Context, ServerInfo};
    use crate::limits::OUT;
    use crate::seal::{Key, KeyRing};
    use crate::{Access, Engine};
    use core::sync::atomic::{AtomicU64, Ordering};
    use serde_json::{json, Value};

    /// A fresh nonce for each message (one operation each).
    static NONCES: AtomicU64 = AtomicU64::new(1);

    /// Monday 2026-09-21 14:13:20 UTC.
    const NOW: u64 = 1_790_000_000;
    const INFO: ServerInfo = ServerInfo {
        name: "redmark",
        version: "test",
        instructions: None,
    };

    type Booking = Engine<BookingApp<'static, MemStore<64>>>;

    fn engine(public_titles: bool) -> Booking {
        let floor = Floor {
            public_titles,
            ..DEFAULT_FLOOR
        };
        let keys = KeyRing::new(Key::new(1, &[0x42; 32]).unwrap());
        Engine::new(
            BookingApp::new(floor, MemStore::new(), INFO),
            keys,
            Config::default(),
        )
    }

    /// The answer to `method` with `params` from `who`.
    fn ask(e: &mut Booking, who: &str, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}});
        let msg = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let cx = Context {
            now: NOW,
            principal: who.as_bytes(),
            entropy: NONCES.fetch_add(1, Ordering::Relaxed).to_be_bytes(),
            access: Access::USER,
        };
        let mut out = vec![0u8; OUT];
        let h = e.handle(msg.to_string().as_bytes(), &cx, &mut out);
        serde_json::from_slice(&out[..h.len]).unwrap()
    }

    fn book(e: &mut Booking, who: &str, room: &str, hour: u8, title: &str) {
        let args = json!({"room_id": room, "day": "2026-09-22", "hour": hour, "title": title});
        let r = ask(
            e,
            who,
            "tools/call",
            json!({"name": "book_room", "arguments": args}),
        );
        assert_eq!(r["result"]["structuredContent"]["booked"], true, "{r}");
    }

    /// A read's two contents: the JSON parsed, and the calendar's.
    fn read(e: &mut Booking, who: &str, uri: &str) -> (Value, Value) {
        let r = ask(e, who, "resources/read", json!({"uri": uri}));
        let contents = r["result"]["contents"]
            .as_array()
            .expect("contents")
            .clone();
        assert_eq!(contents.len(), 2, "{r}");
        let json: Value = serde_json::from_str(contents[0]["text"].as_str().unwrap()).unwrap();
        (
            json!({"uri": contents[0]["uri"], "mime": contents[0]["mimeType"], "doc": json}),
            contents[1].clone(),
        )
    }

    fn error(e: &mut Booking, uri: &str) -> Value {
        ask(e, "alice", "resources/read", json!({"uri": uri}))["error"].clone()
    }

    #[test]
    fn a_room_day_lists_its_bookings_with_offsets_and_a_calendar_slot() {
        let mut e = engine(false);
        book(&mut e, "alice", "nook", 9, "Design review");
        book(&mut e, "alice", "nook", 11, "");
        book(&mut e, "alice", "atrium", 9, "Elsewhere");
        let (json, cal) = read(&mut e, "alice", "redmark://rooms/nook/2026-09-22");
        assert_eq!(json["uri"], "redmark://rooms/nook/2026-09-22");
        assert_eq!(json["mime"], JSON_MIME);
        let doc = &json["doc"];
        assert_eq!(
            doc["room"],
            json!({"id": "nook", "name": "The Nook", "seats": 4})
        );
        assert_eq!(
            (&doc["day"], &doc["time_zone"]),
            (&json!("2026-09-22"), &json!("UTC"))
        );
        let b = doc["bookings"].as_array().unwrap();
        assert_eq!(b.len(), 2, "{doc}");
        assert_eq!(b[0]["start"], "2026-09-22T09:00:00+00:00");
        assert_eq!(b[0]["end"], "2026-09-22T10:00:00+00:00");
        assert_eq!(
            (&b[0]["from"], &b[0]["to"]),
            (&json!("09:00"), &json!("10:00"))
        );
        assert_eq!(b[0]["title"], "Design review");
        assert_eq!(
            (&b[0]["yours"], &b[0]["status"]),
            (&json!(true), &json!("active"))
        );
        assert!(b[0]["id"].as_str().unwrap().starts_with("bk_"));
        assert!(b[1].get("title").is_none(), "an untitled booking has none");
        assert!(doc.get("more").is_none());
        assert_eq!(cal["mimeType"], CALENDAR_MIME);
        assert_eq!(cal["text"], CALENDAR_SLOT);
        assert_eq!(cal["uri"], "redmark://rooms/nook/2026-09-22");
    }

    #[test]
    fn another_reads_busy_without_the_title_unless_titles_are_public() {
        for public in [false, true] {
            let mut e = engine(public);
            book(&mut e, "alice", "nook", 9, "Design review");
            let (json, _) = read(&mut e, "bob", "redmark://rooms/nook/2026-09-22");
            let b = &json["doc"]["bookings"][0];
            assert_eq!(b["yours"], false, "{b}");
            if public {
                assert_eq!(b["title"], "Design review", "{b}");
                assert!(b.get("private").is_none(), "{b}");
            } else {
                assert!(b.get("title").is_none(), "{b}");
                assert_eq!(b["private"], true, "{b}");
            }
            assert!(
                !json.to_string().contains("alice"),
                "the organiser is never named"
            );
        }
    }

    #[test]
    fn aliases_and_day_words_read_as_the_room_id_and_the_iso_day() {
        let mut e = engine(false);
        for (uri, says) in [
            (
                "redmark://rooms/small%20room/tomorrow",
                "redmark://rooms/nook/2026-09-22",
            ),
            (
                "redmark://rooms/The%20Nook/TUESDAY",
                "redmark://rooms/nook/2026-09-22",
            ),
            (
                "redmark://rooms/nook/today",
                "redmark://rooms/nook/2026-09-21",
            ),
            (
                "redmark://rooms/atrium/sunday",
                "redmark://rooms/atrium/2026-09-27",
            ),
        ] {
            let (json, cal) = read(&mut e, "alice", uri);
            assert_eq!(
                (&json["uri"], &cal["uri"]),
                (&json!(says), &json!(says)),
                "{uri}"
            );
        }
    }

    #[test]
    fn unknown_rooms_and_days_are_not_found_and_far_days_invalid() {
        let mut e = engine(false);
        for uri in [
            "redmark://rooms/boardroom/2026-09-22",
            "redmark://rooms/big%20room/2026-09-22",
            "redmark://rooms/nook/2026-02-30",
            "redmark://rooms/nook/yesterday",
            "redmark://rooms/nook",
            "redmark://rooms/%zz/2026-09-22",
            "redmark://floors/nook/2026-09-22",
        ] {
            let err = error(&mut e, uri);
            assert_eq!(err["code"], -32602, "{uri}: {err}");
            assert_eq!(err["data"]["uri"], uri, "{uri}: {err}");
        }
        for uri in [
            "redmark://rooms/nook/2026-08-20",
            "redmark://rooms/nook/2027-09-23",
        ] {
            let err = error(&mut e, uri);
            assert_eq!(err["code"], -32602, "{uri}: {err}");
            assert!(
                err["message"].as_str().unwrap().contains("366 days ahead"),
                "{err}"
            );
        }
        for uri in [
            "redmark://rooms/nook/2026-08-21",
            "redmark://rooms/nook/2027-09-22",
        ] {
            read(&mut e, "alice", uri);
        }
    }

    #[test]
    fn a_full_day_lists_its_first_bookings_counts_the_rest_and_fits_out() {
        let mut e = engine(false);
        // The longest answer: every title all quotes, escaped twice (JSON text in a string).
        let title = "\"".repeat(48);
        for hour in 0..24u8 {
            book(&mut e, "alice", "nook", hour, &title);
        }
        let (json, _) = read(&mut e, "alice", "redmark://rooms/nook/2026-09-22");
        let b = json["doc"]["bookings"].as_array().unwrap();
        assert_eq!(b.len(), MAX_ROOM_DAY_BOOKINGS);
        assert_eq!(json["doc"]["more"], 24 - MAX_ROOM_DAY_BOOKINGS);
        assert_eq!(b[0]["title"], title.as_str());
    }

    #[test]
    fn the_range_error_says_the_constants() {
        let CallError::InvalidParams(said) = DAY_OUT_OF_RANGE else {
            unreachable!()
        };
        let range = std::format!("{ROOM_DAY_DAYS_BACK} days back to {ROOM_DAY_DAYS_AHEAD} days");
        assert!(said.contains(&range), "{said}");
    }

    #[test]
    fn percent_escapes_and_the_range() {
        let mut buf = [0u8; 16];
        assert_eq!(unescape("a%20b", &mut buf), Some("a b"));
        assert_eq!(unescape("%C3%BC", &mut buf), Some("\u{fc}"));
        assert_eq!(unescape("%zz", &mut buf), None);
        assert_eq!(unescape("%2", &mut buf), None);
        assert_eq!(unescape("%FF", &mut buf), None);
        assert_eq!(unescape("seventeen bytes!!", &mut buf), None);
        let today = Day::parse("2026-09-21").unwrap();
        let d = |s| Day::parse(s).unwrap();
        assert!(in_range(d("2026-08-21"), today) && !in_range(d("2026-08-20"), today));
        assert!(in_range(d("2027-09-22"), today) && !in_range(d("2027-09-23"), today));
    }
}
