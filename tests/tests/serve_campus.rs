//! A 500-room site through the real `redmark serve`: four buildings in Berlin and New York, five
//! levels of 25 rooms each; rooms found by equipment and seats across the site, a booking in
//! New York read and shown on New York's clock, one level of one building's day.

use std::fmt::Write as _;
use std::net::TcpStream;

use redmark_tests::server::{tool_call, LineClient, Server, TempDir};
use serde_json::{json, Value};

const DAY: &str = "2099-07-16";

/// The floor file: buildings `ber-a`, `ber-b` (Europe/Berlin), `nyc-a`, `nyc-b`
/// (America/New_York); room `{building}-{level}-{n}` has 4 + (n % 5) × 4 seats, video when n
/// is even, a whiteboard when n is a multiple of 3.
fn site() -> String {
    let mut f = String::from("grid_minutes = 15\n");
    for (id, name, zone) in [
        ("ber-a", "Berlin A", "Europe/Berlin"),
        ("ber-b", "Berlin B", "Europe/Berlin"),
        ("nyc-a", "New York A", "America/New_York"),
        ("nyc-b", "New York B", "America/New_York"),
    ] {
        writeln!(f, "\n[[building]]\nid = \"{id}\"\nname = \"{name}\"").unwrap();
        writeln!(f, "time_zone = \"{zone}\"").unwrap();
        for level in 1..=5 {
            for n in 0..25 {
                let mut kit = Vec::new();
                if n % 2 == 0 {
                    kit.push("\"video\"");
                }
                if n % 3 == 0 {
                    kit.push("\"whiteboard\"");
                }
                writeln!(
                    f,
                    "\n[[building.room]]\nid = \"{id}-{level}-{n}\"\nname = \"Room {level}.{n}\"\n\
                     seats = {}\nlevel = \"{level}\"\nequipment = [{}]",
                    4 + (n % 5) * 4,
                    kit.join(", ")
                )
                .unwrap();
            }
        }
    }
    f
}

fn call(c: &mut LineClient<TcpStream, TcpStream>, id: u64, tool: &str, args: Value) -> Value {
    let r = c.request(&tool_call(id, tool, args, false));
    assert_eq!(r["result"]["isError"], false, "{r}");
    r["result"].clone()
}

#[test]
fn a_500_room_site_serves_by_building_level_and_equipment() {
    let data = TempDir::new("campus");
    let rooms = data.path().join("site.toml");
    std::fs::write(&rooms, site()).unwrap();
    let server = Server::start(
        &["--tcp", "127.0.0.1:0", "--rooms", rooms.to_str().unwrap()],
        data.path(),
    );
    let mut c = LineClient::tcp(server.tcp[0]);

    // Across the site: equipment and seats, grouped by building, each on its own clock.
    let args = json!({"day": DAY, "start": "9", "equipment": "Video, whiteboard", "attendees": 20, "level": "5"});
    let r = call(&mut c, 1, "list_rooms", args);
    let listed: Vec<(&str, &str)> = r["structuredContent"]["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["building"].as_str().unwrap(), r["id"].as_str().unwrap()))
        .collect();
    // n % 6 == 0 and n % 5 == 4: 24, on level 5 of each building.
    assert_eq!(
        listed,
        [
            ("ber-a", "ber-a-5-24"),
            ("ber-b", "ber-b-5-24"),
            ("nyc-a", "nyc-a-5-24"),
            ("nyc-b", "nyc-b-5-24")
        ],
        "{r}"
    );
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("nyc-a-5-24 — Room 5.24 (20 seats), free on Thursday 2099-07-16 at 09:00–10:00 (America/New_York)"),
        "{text}"
    );
    // The whole site is more than one answer: the rest counted, with how to narrow.
    let r = call(&mut c, 2, "list_rooms", json!({}));
    let more = r["structuredContent"]["more"].as_u64().unwrap();
    assert_eq!(
        more as usize + r["structuredContent"]["rooms"].as_array().unwrap().len(),
        500
    );

    // An exact room in New York: 09:30 there (EDT in July) is 13:30 UTC.
    let args = json!({"day": DAY, "start": "09:30", "minutes": 45, "room_id": "nyc-b-3-7"});
    let r = call(&mut c, 3, "book_room", args);
    let b = &r["structuredContent"]["booking"];
    assert_eq!(b["start"], "2099-07-16T09:30:00-04:00", "{r}");
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("09:30–10:15 (America/New_York)"),
        "{r}"
    );

    // That level of that building, with the booking at its New York place.
    let args = json!({"day": DAY, "building": "New York B", "level": "3"});
    let r = call(&mut c, 4, "day_schedule", args);
    let s = &r["structuredContent"];
    assert_eq!(s["time_zone"], "America/New_York", "{r}");
    let rooms = s["rooms"].as_array().unwrap();
    assert_eq!(rooms.len(), 25, "{r}");
    assert!(rooms.iter().all(|r| r["level"] == "3"));
    let booked = rooms.iter().find(|r| r["id"] == "nyc-b-3-7").unwrap();
    assert_eq!(
        booked["booked"],
        json!([{"start": "09:30", "end": "10:15"}]),
        "{r}"
    );
    let buildings: Vec<&str> = s["buildings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(buildings, ["ber-a", "ber-b", "nyc-a", "nyc-b"]);
}

#[test]
fn a_building_of_too_many_rooms_stops_the_start_saying_so() {
    let data = TempDir::new("campus-too-big");
    let rooms = data.path().join("site.toml");
    let big: String = (0..=redmark_core::limits::MAX_ROOMS)
        .map(|i| format!("[[room]]\nid = \"r{i}\"\nname = \"R{i}\"\nseats = 4\n"))
        .collect();
    std::fs::write(&rooms, big).unwrap();
    let out = std::process::Command::new(redmark_tests::server::redmark_bin())
        .args(["serve", "--rooms", rooms.to_str().unwrap(), "--data"])
        .arg(data.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a building has 1 to 512 rooms (513)"), "{err}");
}
