//! Several `redmark serve` processes on one data folder (issue 34, part 1): four stdio servers,
//! eight clients booking overlapping slots for ten seconds, and `kill -9` of two of the
//! servers (the owner of the store among them) in the middle: every acknowledged booking is
//! there exactly once afterwards, no slot is held twice (read back by a fresh process), and the
//! survivors go on booking through the process that took the store over. Also `redmark call`
//! while a server holds the folder.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Command};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use redmark_tests::server::{redmark_bin, retry, run_bounded, tool_call, Server, TempDir, WAIT};
use serde_json::{json, Value};

const ROOMS: [(&str, &str); 3] = [
    ("atrium", "The Atrium"),
    ("studio-b", "Studio B"),
    ("nook", "The Nook"),
];

/// How long the clients book.
const BURST: Duration = Duration::from_secs(10);
/// When, into the burst, two servers are killed.
const KILL_AT: Duration = Duration::from_secs(3);
/// Days the clients choose among (with 24 hours and 3 rooms: the slots they overlap on), 28
/// a month from January 2099.
const DAYS: u64 = 12 * 28;

/// A slot: (room id, day, hour).
type Slot = (String, String, u64);

/// What every client saw, shared.
#[derive(Default)]
struct Seen {
    /// Acknowledged bookings: id → slot.
    acked: Mutex<BTreeMap<u64, Slot>>,
    /// Acknowledged after the kill.
    acked_after_kill: AtomicU64,
    /// "Already booked" answers.
    taken: AtomicU64,
    /// Requests answered with the relay's "serving process stopped" error.
    lost: AtomicU64,
    /// MRTR retries sent again after such an error.
    resent: AtomicU64,
}

/// The stdio of one server, shared by its clients: answers routed to them by id prefix.
struct Stdio {
    stdin: Mutex<ChildStdin>,
    routes: Arc<Mutex<BTreeMap<String, Sender<Value>>>>,
}

impl Stdio {
    fn new(server: &mut Server) -> Arc<Stdio> {
        let (stdin, stdout) = server.take_stdio();
        let routes: Arc<Mutex<BTreeMap<String, Sender<Value>>>> = Arc::default();
        let r = Arc::clone(&routes);
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("a torn or foreign line ({e}): {line}"));
                let id = v["id"].as_str().unwrap_or("").to_owned();
                let client = id.split('-').next().unwrap_or("").to_owned();
                if let Some(tx) = r.lock().unwrap().get(&client) {
                    let _ = tx.send(v);
                }
            }
            // End of stream: every client's channel closes.
            r.lock().unwrap().clear();
        });
        Arc::new(Stdio {
            stdin: Mutex::new(stdin),
            routes,
        })
    }

    fn client(&self, name: &str) -> Receiver<Value> {
        let (tx, rx) = mpsc::channel();
        self.routes.lock().unwrap().insert(name.to_owned(), tx);
        rx
    }

    fn send(&self, v: &Value) -> bool {
        let mut line = v.to_string().into_bytes();
        line.push(b'\n');
        let mut w = self.stdin.lock().unwrap();
        w.write_all(&line).and_then(|()| w.flush()).is_ok()
    }
}

/// A booking acknowledged in `v`, if it is one.
fn booking(v: &Value) -> Option<(u64, Slot)> {
    let b = &v["result"]["structuredContent"]["booking"];
    let id = b["id"].as_str()?.strip_prefix("bk_")?.parse().ok()?;
    Some((
        id,
        (
            b["room_id"].as_str()?.to_owned(),
            b["day"].as_str()?.to_owned(),
            redmark_tests::start_hour(b)?,
        ),
    ))
}

fn is_lost(v: &Value) -> bool {
    v["error"]["code"] == -32603
        && v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("stopped before answering"))
}

/// One client: books pseudo-random slots on `io` until `stop`, a third of them through the
/// MRTR round of "the big room" (its retry sent again when the owner died under it).
fn client(
    name: String,
    io: Arc<Stdio>,
    seen: Arc<Seen>,
    stop: Arc<AtomicBool>,
    killed: Arc<AtomicBool>,
) {
    let rx = io.client(&name);
    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15 ^ name.bytes().fold(7, |h, b| h * 31 + u64::from(b));
    let mut next = || {
        rng = rng
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        rng >> 33
    };
    let mut n = 0u64;
    let ask = |v: Value| -> Option<Value> {
        if !io.send(&v) {
            return None;
        }
        rx.recv_timeout(WAIT).ok()
    };
    while !stop.load(Ordering::Relaxed) {
        let d = next() % DAYS;
        let day = format!("2099-{:02}-{:02}", 1 + d / 28, 1 + d % 28);
        let hour = next() % 24;
        let r = next();
        let hinted = r % 3 == 0;
        n += 1;
        let id = format!("{name}-{n}");
        let args = if hinted {
            json!({"day": day, "hour": hour, "room_hint": "the big room"})
        } else {
            json!({"day": day, "hour": hour, "room_id": ROOMS[(next() % 3) as usize].0})
        };
        let first = tool_call(0, "book_room", args, hinted);
        let mut req = first.clone();
        req["id"] = json!(id);
        let Some(mut answer) = ask(req) else { return };
        if hinted && answer["result"]["resultType"] == "input_required" {
            let state = answer["result"]["requestState"]
                .as_str()
                .expect("state")
                .to_owned();
            let room = if next() % 2 == 0 {
                "studio-b"
            } else {
                "atrium"
            };
            let responses = json!({"room": {"action": "accept", "content": {"room_id": room}}});
            loop {
                n += 1;
                let again = retry(&first, 0, responses.clone(), &state);
                let mut again = again;
                again["id"] = json!(format!("{name}-{n}"));
                let Some(a) = ask(again) else { return };
                if is_lost(&a) {
                    // Never acknowledged: the same round again is safe (at most once).
                    seen.resent.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                answer = a;
                break;
            }
        }
        if let Some((id, slot)) = booking(&answer) {
            let mut acked = seen.acked.lock().unwrap();
            if let Some(before) = acked.insert(id, slot.clone()) {
                assert_eq!(before, slot, "bk_{id} acknowledged for two slots");
            }
            if killed.load(Ordering::Relaxed) {
                seen.acked_after_kill.fetch_add(1, Ordering::Relaxed);
            }
        } else if is_lost(&answer) {
            seen.lost.fetch_add(1, Ordering::Relaxed);
        } else if answer["result"]["isError"] == true
            || answer["result"]["inputRequests"]["instead"].is_object()
        {
            // Taken: a tool error, or (to a client that can be asked) what fits instead.
            let text = answer["result"]["content"][0]["text"]
                .as_str()
                .or(answer["result"]["inputRequests"]["instead"]["params"]["message"].as_str())
                .unwrap_or("");
            assert!(
                text.contains("already booked"),
                "unexpected tool error: {answer}"
            );
            seen.taken.fetch_add(1, Ordering::Relaxed);
        } else {
            panic!("unexpected answer: {answer}");
        }
    }
}

/// The slot of `bk_<id>` as a fresh process reads it (cancel_booking's question, unconfirmed),
/// or `None` if there is no such booking.
fn read_back(
    c: &mut redmark_tests::server::LineClient<std::process::ChildStdout, ChildStdin>,
    id: u64,
) -> Option<Slot> {
    let r = c.request(&tool_call(
        id,
        "cancel_booking",
        json!({"booking_id": format!("bk_{id}")}),
        true,
    ));
    match r["result"]["resultType"].as_str() {
        Some("input_required") => {
            let m = r["result"]["inputRequests"]["confirm"]["params"]["message"].as_str()?;
            // "Cancel bk_N: Studio B on Friday 2099-01-02 at 09:00–10:00 (UTC)?"
            let rest = m.strip_prefix(&format!("Cancel bk_{id}: "))?;
            let (name, rest) = rest.split_once(" on ")?;
            let (day, rest) = rest.split_once(" at ")?;
            let day = day.rsplit(' ').next()?;
            let hour = rest.get(..2)?.parse().ok()?;
            let room = ROOMS.iter().find(|r| r.1 == name)?.0;
            Some((room.to_owned(), day.to_owned(), hour))
        }
        Some("complete") if r["result"]["isError"] == true => None,
        _ => panic!("unexpected answer: {r}"),
    }
}

#[test]
fn four_stdio_servers_share_a_folder_through_kill_9_of_two() {
    let data = TempDir::new("shared");
    // No REDMARK_KEY: the folder's key file, as a desktop user has it.
    let mut servers = vec![Server::start_with(&[], data.path(), &[])];
    assert!(
        servers[0].wait_stderr("reach this one through"),
        "{}",
        servers[0].stderr()
    );
    for _ in 1..4 {
        let s = Server::start_with(&[], data.path(), &[]);
        assert!(
            s.wait_stderr("passing this one's messages"),
            "{}",
            s.stderr()
        );
        servers.push(s);
    }
    let stdio: Vec<_> = servers.iter_mut().map(Stdio::new).collect();
    let seen = Arc::new(Seen::default());
    let stop = Arc::new(AtomicBool::new(false));
    let killed = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..8)
        .map(|i| {
            let (io, seen, stop, killed) = (
                Arc::clone(&stdio[i % 4]),
                Arc::clone(&seen),
                Arc::clone(&stop),
                Arc::clone(&killed),
            );
            thread::spawn(move || client(format!("c{i}"), io, seen, stop, killed))
        })
        .collect();
    let start = Instant::now();
    thread::sleep(KILL_AT);
    let before_kill = seen.acked.lock().unwrap().len();
    // The owner (the first) and one relay, mid-burst.
    killed.store(true, Ordering::Relaxed);
    servers[0].kill9();
    servers[2].kill9();
    thread::sleep(BURST.saturating_sub(start.elapsed()));
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().expect("a client failed");
    }
    let took_over: Vec<usize> = [1, 3]
        .into_iter()
        .filter(|i| servers[*i].stderr().contains("this one serves it now"))
        .collect();
    assert_eq!(
        took_over.len(),
        1,
        "one survivor takes the store over:\n{}\n{}",
        servers[1].stderr(),
        servers[3].stderr()
    );
    drop(stdio);
    for i in [1, 3] {
        assert!(
            servers[i].wait_exit().is_some_and(|s| s.success()),
            "{}",
            servers[i].stderr()
        );
    }
    let acked = seen.acked.lock().unwrap().clone();
    let after = seen.acked_after_kill.load(Ordering::Relaxed);
    eprintln!(
        "acknowledged {} bookings ({before_kill} before the kill, {after} after), {} slots \
         taken, {} requests lost with their owner, {} MRTR rounds sent again",
        acked.len(),
        seen.taken.load(Ordering::Relaxed),
        seen.lost.load(Ordering::Relaxed),
        seen.resent.load(Ordering::Relaxed),
    );
    assert!(
        before_kill > 0 && after > 0,
        "bookings flowed before and after the kill"
    );
    assert!(
        seen.taken.load(Ordering::Relaxed) > 0,
        "the clients overlapped"
    );

    // Read back with a fresh process on the folder.
    let mut fresh = Server::start_with(&[], data.path(), &[]);
    assert!(
        fresh.wait_stderr("reach this one through"),
        "{}",
        fresh.stderr()
    );
    let mut c = fresh.stdio();
    for (id, slot) in &acked {
        assert_eq!(
            read_back(&mut c, *id).as_ref(),
            Some(slot),
            "acknowledged bk_{id}"
        );
    }
    // Every stored booking (acknowledged or not): no slot twice.
    let mut slots = BTreeSet::new();
    let (mut id, mut absent) = (1, 0);
    while absent < 50 {
        match read_back(&mut c, id) {
            Some(slot) => {
                absent = 0;
                assert!(
                    slots.insert(slot.clone()),
                    "{slot:?} held twice (again by bk_{id})"
                );
            }
            None => absent += 1,
        }
        id += 1;
    }
    assert!(slots.len() >= acked.len());
}

#[test]
fn redmark_call_books_through_the_server_holding_the_folder() {
    let data = TempDir::new("call-through");
    let mut server = Server::start_with(&[], data.path(), &[]);
    assert!(
        server.wait_stderr("reach this one through"),
        "{}",
        server.stderr()
    );
    let mut cmd = Command::new(redmark_bin());
    cmd.args(["call", "--data"]).arg(data.path()).args([
        "book_room",
        "day=2099-06-01",
        "hour=9",
        "room_id=nook",
    ]);
    let run = run_bounded(cmd);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("Booked The Nook"), "{run:?}");
    // The server's own client sees it: the slot is taken.
    let mut c = server.stdio();
    let r = c.request(&tool_call(
        1,
        "book_room",
        json!({"day": "2099-06-01", "hour": 9, "room_id": "nook"}),
        false,
    ));
    assert_eq!(r["result"]["isError"], true, "{r}");
}

/// The pieces of a handover one at a time: a request the owner never answered (stopped, then
/// killed) gets the relay's error with its id; half a line sent meanwhile reaches the relay's
/// own engine whole once it has taken the store over (past the dead owner's socket file).
#[test]
fn a_request_in_flight_when_the_owner_dies_gets_an_error_and_the_relay_takes_over() {
    let data = TempDir::new("handover");
    let mut owner = Server::start_with(&[], data.path(), &[]);
    assert!(
        owner.wait_stderr("reach this one through"),
        "{}",
        owner.stderr()
    );
    let mut relay = Server::start_with(&[], data.path(), &[]);
    assert!(
        relay.wait_stderr("passing this one's messages"),
        "{}",
        relay.stderr()
    );
    let mut c = relay.stdio();
    let book = |id: &str, hour: u64| {
        let mut r = tool_call(
            0,
            "book_room",
            json!({"day": "2099-07-01", "hour": hour, "room_id": "atrium"}),
            false,
        );
        r["id"] = json!(id);
        r
    };
    let r = c.request(&book("through", 9));
    assert!(booking(&r).is_some(), "booked through the owner: {r}");
    // The owner stops reading; a request and half of the next go to the relay.
    owner.signal("STOP");
    c.send(&book("in-flight", 10));
    let next = format!("{}\n", book("after", 11));
    let (head, tail) = next.split_at(next.len() / 2);
    c.send_raw(head.as_bytes()).unwrap();
    thread::sleep(Duration::from_millis(200));
    let kill = Instant::now();
    owner.kill9();
    let lost = c.recv();
    let told = kill.elapsed();
    assert_eq!(lost["id"], "in-flight", "{lost}");
    assert!(is_lost(&lost), "{lost}");
    c.send_raw(tail.as_bytes()).unwrap();
    let r = c.recv();
    eprintln!(
        "after kill -9 of the owner: the lost request answered in {told:?}, the next booked by \
         the relay become owner {:?} after the kill",
        kill.elapsed()
    );
    assert_eq!(r["id"], "after", "{r}");
    assert!(
        booking(&r).is_some(),
        "booked by the relay become owner: {r}"
    );
    assert!(
        relay.stderr().contains("this one serves it now"),
        "{}",
        relay.stderr()
    );
    // The first booking is still there, once: its slot is taken.
    let r = c.request(&book("again", 9));
    assert_eq!(r["result"]["isError"], true, "{r}");
}

/// 2025-11-25 clients (most installed hosts) keep their sessions across a handover: the
/// relays open them again at the next owner, whichever of them it is, and the clients see no
/// second `initialize` answer.
#[test]
fn legacy_sessions_survive_the_owner() {
    let data = TempDir::new("legacy-handover");
    let mut owner = Server::start_with(&[], data.path(), &[]);
    assert!(
        owner.wait_stderr("reach this one through"),
        "{}",
        owner.stderr()
    );
    let mut relays: Vec<_> = (0..2)
        .map(|_| {
            let s = Server::start_with(&[], data.path(), &[]);
            assert!(
                s.wait_stderr("passing this one's messages"),
                "{}",
                s.stderr()
            );
            s
        })
        .collect();
    let mut clients: Vec<_> = relays.iter_mut().map(Server::stdio).collect();
    for c in &mut clients {
        let init = c.request(&json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hand","version":"1"}}}));
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        c.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        let list = c.request(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
        assert!(list["result"]["tools"].is_array(), "{list}");
    }
    owner.kill9();
    for (i, c) in clients.iter_mut().enumerate() {
        // Without its session this would be a 2026-07-28 request missing its _meta (-32602).
        let id = 10 + i as u64;
        let r = c.request(
            &json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
            "name":"book_room","arguments":{"day":"2099-08-01","hour":9 + i,"room_id":"nook"}}}),
        );
        assert_eq!(r["id"], id, "no stray initialize answer first: {r}");
        assert_eq!(
            r["result"]["structuredContent"]["booking"]["room_id"], "nook",
            "{r}"
        );
        assert!(
            r["result"].get("resultType").is_none(),
            "2025-11-25 shape: {r}"
        );
    }
    let took_over = relays
        .iter()
        .filter(|s| s.stderr().contains("this one serves it now"))
        .count();
    assert_eq!(took_over, 1);
}

/// Started at the same instant on a folder that does not exist yet (a host opening several
/// windows at once): one creates the store and owns it, the others relay, all of them book.
#[test]
fn servers_started_at_once_on_a_new_folder_agree_on_one_owner() {
    let parent = TempDir::new("at-once");
    let data = parent.path().join("new");
    let starting: Vec<_> = (0..4)
        .map(|_| {
            let d = data.clone();
            thread::spawn(move || Server::start_with(&[], &d, &[]))
        })
        .collect();
    let mut servers: Vec<Server> = starting.into_iter().map(|t| t.join().unwrap()).collect();
    let mut clients: Vec<_> = servers.iter_mut().map(Server::stdio).collect();
    for (i, c) in clients.iter_mut().enumerate() {
        let r = c.request(&tool_call(
            i as u64,
            "book_room",
            json!({"day": "2099-09-01", "hour": 9 + i, "room_id": "atrium"}),
            false,
        ));
        assert!(
            booking(&r).is_some(),
            "server {i}: {r}\n{}",
            servers[i].stderr()
        );
    }
    // (stderr is read on threads: give the last lines a moment to arrive.)
    let count = |what: &str| servers.iter().filter(|s| s.stderr().contains(what)).count();
    let deadline = Instant::now() + WAIT;
    while count("reach this one through") + count("passing this one's messages") < 4
        && Instant::now() < deadline
    {
        thread::sleep(Duration::from_millis(20));
    }
    let owners = count("reach this one through");
    let relays = count("passing this one's messages");
    assert_eq!((owners, relays), (1, 3));
    drop(clients);
    for s in &mut servers {
        assert!(
            s.wait_exit().is_some_and(|st| st.success()),
            "{}",
            s.stderr()
        );
    }
}
