//! A room's day as an MCP resource on `redmark serve --http` (a floor in Europe/Berlin), read by
//! the official Python SDK 2.3 client: the template is listed, a day Alice booked reads as JSON
//! (times with Berlin's offset, her title) and as an iCalendar the Python `icalendar` package
//! parses, completions name rooms and days, Bob reads the same day as busy without the title,
//! a 2025-11-25 session reads it through the bridge, and a stdio client gets the same two
//! contents (the host fills the calendar on every transport).

use std::net::SocketAddr;
use std::path::Path;

use redmark_core::booking::{minute_of, Day};
use redmark_tests::peers::{ical_python, python_sdk_2_3, run_python};
use redmark_tests::server::{http, meta, post_mcp, tool_call, HttpResponse, Server, TempDir};
use serde_json::{json, Value};

const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-0123456789ab";
const TITLE: &str = "Design review; Q3";

const FLOOR: &str = r#"time_zone = "Europe/Berlin"

[[room]]
id = "atrium"
name = "The Atrium"
seats = 24

[[room]]
id = "nook"
name = "The Nook"
seats = 4
aliases = ["the small room"]
"#;

/// A server of the Berlin floor with Alice and Bob as token principals.
fn serve(data: &Path) -> Server {
    let tokens = data.join("tokens.toml");
    std::fs::write(&tokens, format!("alice = \"{ALICE}\"\nbob = \"{BOB}\"\n")).unwrap();
    let rooms = data.join("rooms.toml");
    std::fs::write(&rooms, FLOOR).unwrap();
    let args = [
        "--http",
        "127.0.0.1:0",
        "--tokens",
        tokens.to_str().unwrap(),
        "--rooms",
        rooms.to_str().unwrap(),
    ];
    Server::start(&args, data)
}

/// The day after tomorrow (UTC), as `YYYY-MM-DD`: the same day on Berlin's clock at 10:00.
fn day_after_tomorrow() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    Day::containing(minute_of(now).unwrap() + 2 * 24 * 60)
        .unwrap()
        .to_string()
}

/// Books the nook on `day` at 10:00 for an hour as Alice, titled [`TITLE`]; its id.
fn book(addr: SocketAddr, day: &str) -> String {
    let args = json!({"day": day, "start": "10:00", "minutes": 60, "room_id": "nook",
        "title": TITLE});
    let auth = format!("Bearer {ALICE}");
    let r = post_mcp(
        addr,
        &tool_call(1, "book_room", args, false),
        &[("Authorization", &auth)],
    );
    let r = r.json()["result"].clone();
    assert_eq!(r["structuredContent"]["booked"], true, "{r}");
    r["structuredContent"]["booking"]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// What the Python SDK 2.3 client reads as the holder of `token`: the templates, `uri`'s
/// contents (the JSON parsed), completions of room `n` and day `t`.
fn sdk_read(py: &Path, addr: SocketAddr, token: &str, uri: &str) -> Value {
    let url = format!("http://{addr}/mcp");
    let mut out = run_python(py, "room_day_client.py", &[&url, token, uri, "n", "t"]);
    let contents = out["contents"].as_array().expect("contents").clone();
    assert_eq!(contents.len(), 2, "{out}");
    let doc: Value = serde_json::from_str(contents[0]["text"].as_str().unwrap()).unwrap();
    out["doc"] = doc;
    out
}

/// The calendar content as `icalendar` parses it (`tests/peers/ical_check.py`), if installed.
fn parsed_calendar(dir: &Path, calendar: &str) -> Option<Value> {
    // Without it, the calendar is checked by its lines.
    let py = ical_python()?;
    let file = dir.join("day.ics");
    std::fs::write(&file, calendar).unwrap();
    let v = run_python(&py, "ical_check.py", &[&file]);
    assert_eq!(v["round_trip"], true, "{v}");
    Some(v)
}

/// Berlin's offset on `day` at 10:00 local, as RFC 3339 writes it.
fn berlin_offset(day: &str) -> &'static str {
    let d = Day::parse(day).unwrap();
    // Summer time from the last Sunday of March to the last Sunday of October (at 10:00 local
    // these days are never the changeover hour).
    let last_sunday = |month: u8| {
        let mut s = Day {
            month,
            day: 31,
            ..d
        };
        while s.weekday() != 6 {
            s.day -= 1;
        }
        s
    };
    if (last_sunday(3)..last_sunday(10)).contains(&d) {
        "+02:00"
    } else {
        "+01:00"
    }
}

#[test]
fn the_python_sdk_lists_reads_and_completes_room_days() {
    let Some(py) = python_sdk_2_3("REDMARK_REQUIRE_OAUTH") else {
        return;
    };
    let data = TempDir::new("room-resources");
    let s = serve(data.path());
    let addr = s.http[0];
    let day = day_after_tomorrow();
    let id = book(addr, &day);
    let uri = format!("redmark://rooms/nook/{day}");

    let alice = sdk_read(
        &py,
        addr,
        ALICE,
        &format!("redmark://rooms/the%20small%20room/{day}"),
    );
    assert_eq!(
        alice["templates"][0]["uriTemplate"],
        "redmark://rooms/{room}/{day}"
    );
    assert_eq!(
        alice["contents"][0]["uri"], uri,
        "an alias reads as the room id"
    );
    assert_eq!(alice["contents"][0]["mimeType"], "application/json");
    assert_eq!(alice["contents"][1]["mimeType"], "text/calendar");
    assert_eq!(alice["cache"], json!([0, "private"]), "{alice}");
    let b = &alice["doc"]["bookings"][0];
    let zone = berlin_offset(&day);
    assert_eq!(b["id"], id.as_str());
    assert_eq!(b["start"], format!("{day}T10:00:00{zone}"), "{b}");
    assert_eq!(b["end"], format!("{day}T11:00:00{zone}"), "{b}");
    assert_eq!((&b["from"], &b["to"]), (&json!("10:00"), &json!("11:00")));
    assert_eq!((&b["title"], &b["yours"]), (&json!(TITLE), &json!(true)));
    assert_eq!(b["status"], "active");
    assert_eq!(alice["doc"]["time_zone"], "Europe/Berlin");
    assert_eq!(alice["rooms"], json!(["nook"]), "{alice}");
    // Words first, then the weekdays from today's (no date starts with "t").
    let days: Vec<&str> = alice["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert_eq!(&days[..2], ["today", "tomorrow"], "{alice}");
    let mut weekdays = days[2..].to_vec();
    weekdays.sort_unstable();
    assert_eq!(weekdays, ["thursday", "tuesday"], "{alice}");

    let calendar = alice["contents"][1]["text"].as_str().unwrap();
    assert!(
        calendar.contains("\r\nDTSTART;TZID=Europe/Berlin:"),
        "{calendar}"
    );
    if let Some(cal) = parsed_calendar(data.path(), calendar) {
        assert_eq!(cal["timezones"], json!(["Europe/Berlin"]), "{cal}");
        let ev = &cal["events"][0];
        assert_eq!(ev["summary"], TITLE, "{cal}");
        assert_eq!(ev["local_start"], format!("{day}T10:00:00"), "{cal}");
        assert_eq!(ev["vtimezone_offset"], ev["tzdb_offset"], "{cal}");
        assert!(ev["uid"].as_str().unwrap().starts_with(&format!("{id}@")));
    }

    // Bob reads the same day: busy, without the title (the floor's titles are private).
    let bob = sdk_read(&py, addr, BOB, &uri);
    let b = &bob["doc"]["bookings"][0];
    assert_eq!(
        (&b["yours"], &b["private"]),
        (&json!(false), &json!(true)),
        "{b}"
    );
    assert!(b.get("title").is_none(), "{b}");
    let calendar = bob["contents"][1]["text"].as_str().unwrap();
    assert!(!calendar.contains("Design review"), "{calendar}");
    assert!(calendar.contains("\r\nSUMMARY:Busy\r\n"), "{calendar}");
    if let Some(cal) = parsed_calendar(data.path(), calendar) {
        assert_eq!(cal["events"][0]["summary"], "Busy", "{cal}");
    }
}

/// POST a 2025-11-25 message as Alice, in session `sid` if any.
fn legacy_post(addr: SocketAddr, msg: &Value, sid: Option<&str>) -> HttpResponse {
    let auth = format!("Bearer {ALICE}");
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", auth.as_str()),
    ];
    if let Some(s) = sid {
        h.push(("Mcp-Session-Id", s));
        h.push(("MCP-Protocol-Version", "2025-11-25"));
    }
    http(addr, "POST", "/mcp", &h, &serde_json::to_vec(msg).unwrap())
}

#[test]
fn a_2025_11_25_session_reads_and_completes_a_room_day_through_the_bridge() {
    let data = TempDir::new("room-resources-legacy");
    let s = serve(data.path());
    let addr = s.http[0];
    let day = day_after_tomorrow();
    let id = book(addr, &day);
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hand","version":"1"}}});
    let init = legacy_post(addr, &init, None);
    assert_eq!(init.json()["result"]["protocolVersion"], "2025-11-25");
    let sid = init.header("mcp-session-id").unwrap().to_owned();
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    assert_eq!(legacy_post(addr, &note, Some(&sid)).status, 202);
    let templates = json!({"jsonrpc":"2.0","id":1,"method":"resources/templates/list"});
    let r = legacy_post(addr, &templates, Some(&sid)).json();
    assert_eq!(
        r["result"]["resourceTemplates"][0]["uriTemplate"], "redmark://rooms/{room}/{day}",
        "{r}"
    );
    let read = json!({"jsonrpc":"2.0","id":2,"method":"resources/read",
        "params":{"uri": format!("redmark://rooms/nook/{day}")}});
    let r = legacy_post(addr, &read, Some(&sid)).json();
    let contents = &r["result"]["contents"];
    let doc: Value = serde_json::from_str(contents[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(doc["bookings"][0]["id"], id.as_str(), "{r}");
    assert_eq!(doc["bookings"][0]["title"], TITLE, "{r}");
    let calendar = contents[1]["text"].as_str().unwrap();
    assert!(calendar.starts_with("BEGIN:VCALENDAR\r\n"), "{r}");
    assert!(calendar.contains(&format!("UID:{id}@")), "{calendar}");
    assert!(
        r["result"].get("resultType").is_none(),
        "2025-11-25 shape: {r}"
    );
    let complete = json!({"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{
        "ref":{"type":"ref/resource","uri":"redmark://rooms/{room}/{day}"},
        "argument":{"name":"room","value":"AT"}}});
    let r = legacy_post(addr, &complete, Some(&sid)).json();
    assert_eq!(
        r["result"]["completion"]["values"],
        json!(["atrium"]),
        "{r}"
    );
    let unknown = json!({"jsonrpc":"2.0","id":4,"method":"resources/read",
        "params":{"uri":"redmark://rooms/boardroom/today"}});
    let r = legacy_post(addr, &unknown, Some(&sid)).json();
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[test]
fn stdio_reads_a_room_day_with_its_calendar() {
    let data = TempDir::new("room-resources-stdio");
    let rooms = data.path().join("rooms.toml");
    std::fs::write(&rooms, FLOOR).unwrap();
    let mut s = Server::start(&["--rooms", rooms.to_str().unwrap()], data.path());
    let mut c = s.stdio();
    let day = day_after_tomorrow();
    let book = tool_call(
        1,
        "book_room",
        json!({"day": day, "start": "10:00", "minutes": 30, "room_id": "nook", "title": TITLE}),
        false,
    );
    let r = c.request(&book);
    assert_eq!(r["result"]["structuredContent"]["booked"], true, "{r}");
    let read = json!({"jsonrpc":"2.0","id":2,"method":"resources/read",
        "params":{"uri": format!("redmark://rooms/nook/{day}"), "_meta": meta(json!({}))}});
    let r = c.request(&read);
    let contents = &r["result"]["contents"];
    let doc: Value = serde_json::from_str(contents[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(doc["bookings"][0]["title"], TITLE, "{r}");
    let calendar = contents[1]["text"].as_str().unwrap();
    assert!(
        calendar.contains("\r\nSUMMARY:Design review\\; Q3\r\n"),
        "{calendar}"
    );
    assert_eq!(
        (&r["result"]["ttlMs"], &r["result"]["cacheScope"]),
        (&json!(0), &json!("private"))
    );
}
