//! The iCalendar feeds of `redmark serve --http` on a floor in Europe/Berlin, parsed by the
//! Python `icalendar` package (scripts/ical-peer.sh): bookings made over MCP appear in a room's
//! feed on the floor's wall clock with a VTIMEZONE that agrees with the tz database, others'
//! titles show as "Busy", a cancelled booking leaves the feeds, a series is one recurring event
//! whose rule and exceptions give the occurrences booked, free/busy joins touching
//! bookings; each feed is served for the bearer token and for the feed key in its URL, and a
//! wrong, forged or revoked key gets 403, no credentials 401.

use std::net::SocketAddr;
use std::path::Path;

use redmark_core::booking::{minute_of, Day};
use redmark_tests::peers::{ical_python, run_python};
use redmark_tests::server::{http, post_mcp, tool_call, HttpResponse, Server, TempDir};
use serde_json::{json, Value};

const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-0123456789ab";

const FLOOR: &str = r#"time_zone = "Europe/Berlin"

[[room]]
id = "atrium"
name = "The Atrium"
seats = 24

[[room]]
id = "nook"
name = "The Nook"
seats = 4
"#;

/// A server of the Berlin floor with Alice and Bob as token principals (`tokens` the file's
/// text, so a test can change a token).
fn serve(data: &Path, tokens: &str) -> Server {
    let file = data.join("tokens.toml");
    std::fs::write(&file, tokens).unwrap();
    let rooms = data.join("rooms.toml");
    std::fs::write(&rooms, FLOOR).unwrap();
    let args = [
        "--http",
        "127.0.0.1:0",
        "--tokens",
        file.to_str().unwrap(),
        "--rooms",
        rooms.to_str().unwrap(),
    ];
    Server::start(&args, data)
}

/// The day `days` from today (UTC), as `YYYY-MM-DD`.
fn day(days: u32) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let minute = minute_of(now).unwrap() + days * 24 * 60;
    Day::containing(minute).unwrap().to_string()
}

/// The result of `tool` with `args`, called as the holder of `token`.
fn call(addr: SocketAddr, token: &str, tool: &str, args: Value) -> Value {
    let auth = format!("Bearer {token}");
    let r = post_mcp(
        addr,
        &tool_call(1, tool, args, false),
        &[("Authorization", &auth)],
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["result"].clone()
}

/// Books `room` on `day` at `start` (the floor's clock) for `minutes` as `token`; its id.
fn book(
    addr: SocketAddr,
    token: &str,
    room: &str,
    day: &str,
    start: &str,
    minutes: u32,
    title: &str,
) -> String {
    let args =
        json!({"day": day, "start": start, "minutes": minutes, "room_id": room, "title": title});
    let r = call(addr, token, "book_room", args);
    assert_eq!(r["structuredContent"]["booked"], true, "{r}");
    r["structuredContent"]["booking"]["id"]
        .as_str()
        .expect("booking id")
        .to_owned()
}

/// GET `path` with the bearer `token`, if any.
fn get(addr: SocketAddr, path: &str, token: Option<&str>) -> HttpResponse {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", a.as_str())).collect();
    http(addr, "GET", path, &headers, b"")
}

/// The feed at `path` as `icalendar` reads it (its summary as JSON), after checking it is
/// served as text/calendar.
fn parsed(py: &Path, dir: &Path, r: &HttpResponse) -> Value {
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let ty = r
        .headers
        .iter()
        .find(|(k, _)| k == "content-type")
        .map(|(_, v)| v.as_str());
    assert_eq!(ty, Some("text/calendar; charset=utf-8"));
    let file = dir.join("feed.ics");
    std::fs::write(&file, &r.body).unwrap();
    let v = run_python(py, "ical_check.py", &[&file]);
    assert_eq!(v["version"], "2.0");
    assert_eq!(v["round_trip"], true, "{v}");
    v
}

/// The feed URLs `GET /calendars/` lists to `token`: (what, path with its key).
fn feed_urls(addr: SocketAddr, token: &str) -> Vec<(String, String)> {
    let r = get(addr, "/calendars/", Some(token));
    assert_eq!(r.status, 200);
    let text = String::from_utf8(r.body).unwrap();
    let base = format!("http://{addr}");
    text.lines()
        .filter_map(|l| {
            let (what, url) = l.split_once(": http")?;
            let path = format!("http{url}").strip_prefix(&base)?.to_owned();
            Some((what.to_owned(), path))
        })
        .collect()
}

fn url_of<'a>(urls: &'a [(String, String)], what: &str) -> &'a str {
    &urls
        .iter()
        .find(|(w, _)| w == what)
        .unwrap_or_else(|| panic!("{what}: {urls:?}"))
        .1
}

/// The event with uid prefix `bk_N@` for booking id `bk_N`.
fn event<'a>(feed: &'a Value, id: &str) -> &'a Value {
    let prefix = format!("{id}@");
    let events = feed["events"].as_array().unwrap();
    events
        .iter()
        .find(|e| e["uid"].as_str().unwrap().starts_with(&prefix))
        .unwrap_or_else(|| panic!("{id}: {feed}"))
}

#[test]
fn feeds_parse_with_icalendar_for_the_bearer_and_the_feed_key() {
    let Some(py) = ical_python() else { return };
    let data = TempDir::new("calendar-feed");
    let tokens = format!("alice = \"{ALICE}\"\nbob = \"{BOB}\"\n");
    let s = serve(data.path(), &tokens);
    let addr = s.http[0];
    let (soon, later) = (day(2), day(200));
    let design = book(
        addr,
        ALICE,
        "atrium",
        &soon,
        "10:00",
        60,
        "Design review; Q3, \"final\"",
    );
    let bobs = book(addr, BOB, "atrium", &soon, "11:00", 60, "Bob's one-to-one");
    let summer = book(addr, ALICE, "nook", &later, "10:00", 30, "Planning");
    let gone = book(addr, ALICE, "nook", &soon, "15:00", 30, "Cancelled sync");
    let r = call(addr, ALICE, "cancel_booking", json!({"booking_id": gone}));
    assert_eq!(r["isError"], false, "{r}");

    // Alice's view of the atrium, by her bearer token.
    let atrium = parsed(
        &py,
        data.path(),
        &get(addr, "/calendars/rooms/atrium.ics", Some(ALICE)),
    );
    assert_eq!(atrium["name"], "The Atrium");
    assert_eq!(atrium["timezones"], json!(["Europe/Berlin"]));
    let mine = event(&atrium, &design);
    assert_eq!(mine["summary"], "Design review; Q3, \"final\"");
    assert_eq!(mine["tzid"], "Europe/Berlin");
    assert_eq!(mine["local_start"], format!("{soon}T10:00:00"));
    assert_eq!(mine["local_end"], format!("{soon}T11:00:00"));
    assert_eq!(mine["status"], "CONFIRMED");
    assert_eq!(mine["organizer"], "", "the floor never names an organiser");
    // The feed's own VTIMEZONE gives the offset the tz database gives, in winter and summer.
    assert!(mine["vtimezone_offset"].is_i64(), "{mine}");
    assert_eq!(mine["vtimezone_offset"], mine["tzdb_offset"], "{mine}");
    let other = event(&atrium, &bobs);
    assert_eq!(
        other["summary"], "Busy",
        "Bob's title is private on this floor"
    );
    assert_eq!(atrium["events"].as_array().unwrap().len(), 2, "{atrium}");

    // Alice's own bookings, by the key of her feed URL (no bearer token): the cancelled one
    // has left, the summer one is on summer time.
    let urls = feed_urls(addr, ALICE);
    let mine_url = url_of(&urls, "Your bookings");
    assert!(
        mine_url.starts_with("/calendars/mine.ics?key="),
        "{mine_url}"
    );
    let own = parsed(&py, data.path(), &get(addr, mine_url, None));
    let titles: Vec<&str> = own["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["summary"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        ["Design review; Q3, \"final\"", "Planning"],
        "{own}"
    );
    let planning = event(&own, &summer);
    assert_eq!(planning["local_start"], format!("{later}T10:00:00"));
    assert_eq!(
        planning["vtimezone_offset"], planning["tzdb_offset"],
        "{planning}"
    );
    assert_eq!(planning["location"], "The Nook");
    assert!(!own.to_string().contains("Cancelled sync"), "{own}");

    // Bob's key reads the atrium as Bob: Alice's title is "Busy" to him.
    let bob_urls = feed_urls(addr, BOB);
    let bob_atrium = parsed(
        &py,
        data.path(),
        &get(addr, url_of(&bob_urls, "The Atrium"), None),
    );
    assert_eq!(event(&bob_atrium, &design)["summary"], "Busy");
    assert_eq!(event(&bob_atrium, &bobs)["summary"], "Bob's one-to-one");

    // Free/busy: the two touching bookings are one period, in UTC; no titles.
    let fb_url = url_of(&bob_urls, "The Atrium (free/busy)");
    let fb = parsed(&py, data.path(), &get(addr, fb_url, None));
    let start = mine["utc_start"].as_str().unwrap().to_owned();
    let periods = fb["freebusy"].as_array().unwrap();
    assert_eq!(periods.len(), 1, "{fb}");
    assert_eq!(periods[0][0], start.as_str());
    assert!(fb["events"].as_array().unwrap().is_empty());

    // Each feed is the same for Bob's bearer token and his key (the same ETag), and an
    // unchanged feed asked again with its ETag is 304.
    for (what, path) in [
        ("The Atrium", "/calendars/rooms/atrium.ics"),
        ("Your bookings", "/calendars/mine.ics"),
        (
            "The Atrium (free/busy)",
            "/calendars/rooms/atrium/freebusy.ics",
        ),
    ] {
        let by_bearer = get(addr, path, Some(BOB));
        let by_key = get(addr, url_of(&bob_urls, what), None);
        assert_eq!((by_bearer.status, by_key.status), (200, 200), "{what}");
        let etag = |r: &HttpResponse| {
            r.headers
                .iter()
                .find(|(k, _)| k == "etag")
                .map(|(_, v)| v.clone())
        };
        assert_eq!(etag(&by_bearer), etag(&by_key), "{what}");
        let tag = etag(&by_key).expect("an ETag");
        let auth = format!("Bearer {BOB}");
        let again = http(
            addr,
            "GET",
            path,
            &[("Authorization", &auth), ("If-None-Match", &tag)],
            b"",
        );
        assert_eq!(again.status, 304, "{what}");
    }

    // A wrong, forged or foreign-principal key: 403; no credentials at all: 401.
    let forged = mine_url.replace("key=", "key=x");
    assert_eq!(get(addr, &forged, None).status, 403);
    let (_, tag) = mine_url.split_once('.').unwrap();
    let bob_b64 = url_of(&bob_urls, "Your bookings")
        .split_once("key=")
        .unwrap()
        .1
        .split_once('.')
        .unwrap()
        .0
        .to_owned();
    let swapped = format!("/calendars/mine.ics?key={bob_b64}.{tag}");
    assert_eq!(get(addr, &swapped, None).status, 403);
    assert_eq!(get(addr, "/calendars/mine.ics", None).status, 401);
    assert_eq!(
        get(addr, "/calendars/rooms/attic.ics", Some(ALICE)).status,
        404
    );
}

#[test]
fn changing_a_token_revokes_its_feed_urls() {
    let data = TempDir::new("calendar-revoke");
    let tokens = format!("alice = \"{ALICE}\"\nbob = \"{BOB}\"\n");
    let s = serve(data.path(), &tokens);
    let urls = feed_urls(s.http[0], ALICE);
    let mine = url_of(&urls, "Your bookings").to_owned();
    assert_eq!(get(s.http[0], &mine, None).status, 200);
    drop(s);
    // Alice's token is replaced: her old feed URL is refused, a new one works.
    let tokens = format!("alice = \"{ALICE}-new\"\nbob = \"{BOB}\"\n");
    let s = serve(data.path(), &tokens);
    assert_eq!(get(s.http[0], &mine, None).status, 403);
    let fresh = feed_urls(s.http[0], &format!("{ALICE}-new"));
    assert_eq!(
        get(s.http[0], url_of(&fresh, "Your bookings"), None).status,
        200
    );
}

#[test]
fn a_series_is_one_recurring_event_with_its_exceptions() {
    let Some(py) = ical_python() else { return };
    let data = TempDir::new("calendar-feed-series");
    let tokens = format!("alice = \"{ALICE}\"\nbob = \"{BOB}\"\n");
    let s = serve(data.path(), &tokens);
    let addr = s.http[0];
    // Six weeks from about 100 days ahead: in winter, across the spring clock change.
    let first = day(100);
    let args = json!({"day": first, "start": "9:30", "minutes": 45, "room_id": "atrium",
                      "title": "Weekly sync", "repeat": "weekly", "count": 6});
    let r = call(addr, ALICE, "book_room", args);
    let ids: Vec<String> = r["structuredContent"]["bookings"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 6, "{r}");
    let r = call(addr, ALICE, "cancel_booking", json!({"booking_id": ids[2]}));
    assert_eq!(r["isError"], false, "{r}");
    let alone = book(addr, ALICE, "atrium", &day(101), "14:00", 30, "Alone");

    let feed = parsed(
        &py,
        data.path(),
        &get(addr, "/calendars/rooms/atrium.ics", Some(ALICE)),
    );
    let events = feed["events"].as_array().unwrap();
    assert_eq!(
        events.len(),
        2,
        "the series once, and the booking alone: {feed}"
    );
    let series = events
        .iter()
        .find(|e| e["uid"].as_str().unwrap().starts_with("series-"))
        .unwrap_or_else(|| panic!("{feed}"));
    assert_eq!(series["summary"], "Weekly sync");
    assert_eq!(series["status"], "CONFIRMED");
    let weekly = series["rrule"].as_str().unwrap();
    for part in ["FREQ=WEEKLY", "INTERVAL=1", "BYDAY="] {
        assert!(weekly.split(';').any(|p| p.starts_with(part)), "{weekly}");
    }
    // What icalendar's rule and exceptions give is what is booked: every week at 09:30 on the
    // floor's clock but the cancelled one.
    let week = |i: u32| format!("{}T09:30:00", day(100 + 7 * i));
    let expected: Vec<String> = [0, 1, 3, 4, 5].into_iter().map(week).collect();
    assert_eq!(series["expanded"], json!(expected), "{series}");
    assert_eq!(series["exdates"], json!([week(2)]), "{series}");
    assert_eq!(event(&feed, &alone)["summary"], "Alone");
}
