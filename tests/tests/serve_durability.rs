//! Nothing lost: bookings acknowledged before a `kill -9` are all there after a restart on the
//! same `--data`, and nothing half-made is. SIGTERM under load finishes what is in flight and
//! exits cleanly.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use redmark_tests::server::{tool_call, LineClient, Server, TempDir, WAIT};
use serde_json::{json, Value};

const ROOMS: [(&str, &str); 3] = [
    ("atrium", "The Atrium"),
    ("studio-b", "Studio B"),
    ("nook", "The Nook"),
];

/// A booking as acknowledged: id → (room, day, hour).
type Acked = BTreeMap<u64, (String, String, u8)>;

/// Slot number `i` of a round: one hour of January/February 2099.
fn slot(round: usize, i: usize) -> (String, u8) {
    let n = round * 24 * 28 + i;
    let (day, hour) = (n / 24, (n % 24) as u8);
    let (month, dom) = if day < 31 {
        (1, day + 1)
    } else {
        (2, day - 31 + 1)
    };
    (format!("2099-{month:02}-{dom:02}"), hour)
}

/// Streams bookings of `room` on its own connection until the server goes away; records what
/// was acknowledged and what was attempted.
fn stream_bookings(
    addr: std::net::SocketAddr,
    round: usize,
    room: usize,
    acked: Arc<Mutex<Acked>>,
    tried: Arc<Mutex<BTreeSet<(String, String, u8)>>>,
) {
    let mut c = LineClient::tcp(addr);
    for i in 0..24 * 28 {
        let (day, hour) = slot(round, i);
        let room_id = ROOMS[room].0;
        tried
            .lock()
            .unwrap()
            .insert((room_id.to_string(), day.clone(), hour));
        let req = tool_call(
            i as u64,
            "book_room",
            json!({"day": day, "hour": hour, "room_id": room_id}),
            false,
        );
        if c.send_raw(format!("{req}\n").as_bytes()).is_err() {
            return;
        }
        let Ok(Some(line)) = c.try_recv_line(WAIT) else {
            return;
        };
        let v: Value = serde_json::from_slice(&line).expect("a whole JSON line, never a torn one");
        let b = &v["result"]["structuredContent"]["booking"];
        assert_eq!(v["result"]["isError"], false, "{v}");
        let id: u64 = b["id"]
            .as_str()
            .and_then(|s| s.strip_prefix("bk_"))
            .and_then(|n| n.parse().ok())
            .expect("id");
        assert_eq!(
            (
                b["room_id"].as_str(),
                b["day"].as_str(),
                redmark_tests::start_hour(b)
            ),
            (Some(room_id), Some(&*day), Some(hour as u64))
        );
        acked
            .lock()
            .unwrap()
            .insert(id, (room_id.to_string(), day, hour));
    }
}

/// Asks to cancel `bk_<id>` without confirming (read-only): the booking's description, or
/// `None` if there is no such booking.
fn describe(
    c: &mut LineClient<std::net::TcpStream, std::net::TcpStream>,
    id: u64,
) -> Option<String> {
    let r = c.request(&tool_call(
        id,
        "cancel_booking",
        json!({"booking_id": format!("bk_{id}")}),
        true,
    ));
    match r["result"]["resultType"].as_str() {
        Some("input_required") => Some(
            r["result"]["inputRequests"]["confirm"]["params"]["message"]
                .as_str()?
                .to_string(),
        ),
        Some("complete") if r["result"]["isError"] == true => None,
        _ => panic!("unexpected answer: {r}"),
    }
}

/// The weekday of a `YYYY-MM-DD` day, as the tools name it (Monday … Sunday).
fn weekday_of(day: &str) -> &'static str {
    let n = |r: std::ops::Range<usize>| day[r].parse::<i64>().unwrap();
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    // Zeller-style count of days since 1970-01-01 (a Thursday), by days from civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    [
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
    ][days.rem_euclid(7) as usize]
}

fn expected(id: u64, room: &str, day: &str, hour: u8) -> String {
    let name = ROOMS
        .iter()
        .find(|r| r.0 == room)
        .map(|r| r.1)
        .unwrap_or(room);
    let weekday = weekday_of(day);
    format!("Cancel bk_{id}: {name} on {weekday} {day} at {hour:02}:00")
}

/// What a restart must find.
#[derive(Clone, Copy, PartialEq)]
enum Expect {
    /// After `kill -9`: a booking may be stored whose answer never left (it must be whole).
    MaybeUnanswered,
    /// After SIGTERM: what is in flight finishes, so what is stored is exactly what was
    /// acknowledged.
    ExactlyAcked,
}

/// Every acknowledged booking is stored as acknowledged; the stored ids are exactly 1..=m; a
/// stored booking nobody saw acknowledged is a whole booking of a slot that was asked for (and
/// there is none with [`Expect::ExactlyAcked`]).
fn verify(server: &Server, acked: &Acked, tried: &BTreeSet<(String, String, u8)>, expect: Expect) {
    let mut c = server.tcp_client();
    for (id, (room, day, hour)) in acked {
        let d = describe(&mut c, *id).unwrap_or_else(|| panic!("acknowledged bk_{id} is gone"));
        assert!(
            d.starts_with(&expected(*id, room, day, *hour)),
            "bk_{id}: {d}"
        );
    }
    let max_acked = acked.keys().max().copied().unwrap_or(0);
    let mut id = max_acked + 1;
    while let Some(d) = describe(&mut c, id) {
        assert!(
            expect == Expect::MaybeUnanswered,
            "bk_{id} is stored but its request was never answered: {d}"
        );
        let whole = tried
            .iter()
            .any(|(room, day, hour)| d.starts_with(&expected(id, room, day, *hour)));
        assert!(
            whole,
            "unacknowledged bk_{id} is not a whole booking of a requested slot: {d}"
        );
        id += 1;
        assert!(
            id <= max_acked + 1 + ROOMS.len() as u64,
            "more unacknowledged bookings than requests in flight"
        );
    }
    for probe in [id, id + 1, id + 100] {
        assert_eq!(describe(&mut c, probe), None, "bk_{probe} after a gap");
    }
}

#[test]
fn kill_9_under_a_stream_of_bookings_loses_nothing_acknowledged() {
    let data = TempDir::new("kill9");
    let acked = Arc::new(Mutex::new(Acked::new()));
    let tried = Arc::new(Mutex::new(BTreeSet::new()));
    for round in 0..3 {
        let mut server = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
        let addr = server.tcp[0];
        let before = acked.lock().unwrap().len();
        let writers: Vec<_> = (0..ROOMS.len())
            .map(|room| {
                let (a, t) = (Arc::clone(&acked), Arc::clone(&tried));
                thread::spawn(move || stream_bookings(addr, round, room, a, t))
            })
            .collect();
        // Kill once a few bookings per round are acknowledged, while the rest stream on.
        let target = before + 20 + 7 * round;
        let deadline = Instant::now() + WAIT;
        while acked.lock().unwrap().len() < target {
            assert!(
                Instant::now() < deadline,
                "bookings did not flow; stderr:\n{}",
                server.stderr()
            );
            thread::sleep(Duration::from_millis(1));
        }
        server.kill9();
        for w in writers {
            w.join().expect("writer");
        }
        let restarted = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
        verify(
            &restarted,
            &acked.lock().unwrap(),
            &tried.lock().unwrap(),
            Expect::MaybeUnanswered,
        );
    }
}

#[test]
fn sigterm_finishes_in_flight_requests_and_exits_cleanly() {
    let data = TempDir::new("sigterm");
    let acked = Arc::new(Mutex::new(Acked::new()));
    let tried = Arc::new(Mutex::new(BTreeSet::new()));
    let mut server = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
    let addr = server.tcp[0];
    let writers: Vec<_> = (0..ROOMS.len())
        .map(|room| {
            let (a, t) = (Arc::clone(&acked), Arc::clone(&tried));
            thread::spawn(move || stream_bookings(addr, 0, room, a, t))
        })
        .collect();
    let deadline = Instant::now() + WAIT;
    while acked.lock().unwrap().len() < 15 {
        assert!(Instant::now() < deadline, "bookings did not flow");
        thread::sleep(Duration::from_millis(1));
    }
    server.signal("TERM");
    let status = server
        .wait_exit()
        .expect("redmark did not exit after SIGTERM");
    assert!(
        status.success(),
        "exit status {status:?}; stderr:\n{}",
        server.stderr()
    );
    for w in writers {
        w.join().expect("writer");
    }
    let restarted = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
    verify(
        &restarted,
        &acked.lock().unwrap(),
        &tried.lock().unwrap(),
        Expect::ExactlyAcked,
    );
}

/// The same over stdio: many pipelined `book_room` lines, SIGTERM, stdout read to EOF; every
/// stored booking was answered and every answer is stored.
#[test]
fn sigterm_on_stdio_answers_every_booking_it_commits() {
    let data = TempDir::new("sigterm-stdio");
    let mut server = Server::start(&[], data.path());
    let (mut stdin, stdout) = server.take_stdio();
    let tried = Arc::new(Mutex::new(BTreeSet::new()));
    let t = Arc::clone(&tried);
    // Pipelined: stdio answers in order, the writer never waits for an answer.
    let writer = thread::spawn(move || {
        for i in 0..24 * 28 * 2 {
            let (day, hour) = slot(0, i);
            t.lock()
                .unwrap()
                .insert(("nook".to_string(), day.clone(), hour));
            let req = tool_call(
                i as u64 + 1,
                "book_room",
                json!({"day": day, "hour": hour, "room_id": "nook"}),
                false,
            );
            if stdin.write_all(format!("{req}\n").as_bytes()).is_err() {
                return;
            }
        }
    });
    let acked = Arc::new(Mutex::new(Acked::new()));
    let a = Arc::clone(&acked);
    let reader = thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            let v: Value = serde_json::from_str(&line).expect("a whole JSON line");
            assert_eq!(v["result"]["isError"], false, "{v}");
            let b = &v["result"]["structuredContent"]["booking"];
            let id: u64 = b["id"]
                .as_str()
                .and_then(|s| s.strip_prefix("bk_"))
                .and_then(|n| n.parse().ok())
                .expect("id");
            let room = b["room_id"].as_str().expect("room").to_string();
            let day = b["day"].as_str().expect("day").to_string();
            let hour = redmark_tests::start_hour(b).expect("hour") as u8;
            a.lock().unwrap().insert(id, (room, day, hour));
        }
    });
    let deadline = Instant::now() + WAIT;
    while acked.lock().unwrap().len() < 15 {
        assert!(
            Instant::now() < deadline,
            "bookings did not flow; stderr:\n{}",
            server.stderr()
        );
        thread::sleep(Duration::from_millis(1));
    }
    server.signal("TERM");
    let status = server
        .wait_exit()
        .expect("redmark did not exit after SIGTERM");
    assert!(
        status.success(),
        "exit status {status:?}; stderr:\n{}",
        server.stderr()
    );
    // The process is gone: stdout is at EOF and stdin is broken, so both threads end.
    reader.join().expect("reader");
    writer.join().expect("writer");
    let restarted = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
    verify(
        &restarted,
        &acked.lock().unwrap(),
        &tried.lock().unwrap(),
        Expect::ExactlyAcked,
    );
}
