//! Operating a floor's server: `/healthz` for a load balancer (also while PostgreSQL is down),
//! `/metrics` read with a Prometheus text-format parser (`prometheus-parse`) around a booking
//! round trip, and `redmark backup` taken during a booking flood, restored and counted.
#![cfg_attr(not(pg_tools), allow(dead_code, unused_imports))]

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use prometheus_parse::{Scrape, Value as Prom};
use redmark_tests::pg::Cluster;
use redmark_tests::server::{
    http, post_mcp, redmark_bin, retry, run_bounded, tool_call, LineClient, Server, TempDir, WAIT,
};
use serde_json::json;

const TOKEN: &str = "ops-token-0123456789";

/// `GET path` with these headers.
fn get(
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
) -> redmark_tests::server::HttpResponse {
    http(addr, "GET", path, headers, b"")
}

/// `/metrics` as the token's principal, parsed.
fn scrape(addr: SocketAddr) -> Scrape {
    let auth = format!("Bearer {TOKEN}");
    let r = get(addr, "/metrics", &[("Authorization", &auth)]);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.header("content-type"),
        Some("text/plain; version=0.0.4"),
        "the text exposition format"
    );
    let text = String::from_utf8(r.body).expect("UTF-8");
    let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("parses");
    // Every family the server declares has samples the parser read.
    for line in text.lines().filter(|l| l.starts_with("# TYPE ")) {
        let family = line.split(' ').nth(2).expect("a family name");
        assert!(
            scrape.samples.iter().any(|s| s.metric.starts_with(family)),
            "no samples read for {family}:\n{text}"
        );
    }
    scrape
}

/// The sum of the samples of `metric` whose labels include `labels` (0 when there are none).
fn value(s: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    s.samples
        .iter()
        .filter(|x| x.metric == metric)
        .filter(|x| labels.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
        .map(|x| match x.value {
            Prom::Counter(v) | Prom::Gauge(v) | Prom::Untyped(v) => v,
            _ => 0.0,
        })
        .sum()
}

/// `/healthz` needs no token and says only "ok"; `/metrics` needs what `/mcp` needs; a booking
/// asked, answered and made moves the counters of each, as a Prometheus parser reads them.
#[test]
fn healthz_answers_anyone_and_metrics_count_a_booking_round_trip() {
    let data = TempDir::new("ops-http");
    let tokens = data.path().join("tokens.toml");
    std::fs::write(&tokens, format!("ops = \"{TOKEN}\"\n")).unwrap();
    let s = Server::start(
        &[
            "--http",
            "127.0.0.1:0",
            "--tokens",
            tokens.to_str().unwrap(),
        ],
        data.path(),
    );
    let a = s.http[0];
    let h = get(a, "/healthz", &[]);
    assert_eq!(h.status, 200, "{}", String::from_utf8_lossy(&h.body));
    assert_eq!(h.json(), json!({"status": "ok"}));
    assert_eq!(h.header("content-type"), Some("application/json"));
    assert_eq!(http(a, "POST", "/healthz", &[], b"").status, 405);
    assert_eq!(get(a, "/metrics", &[]).status, 401, "metrics need a token");
    let wrong = get(
        a,
        "/metrics",
        &[("Authorization", "Bearer wrong-0123456789")],
    );
    assert_eq!(wrong.status, 401);

    let before = scrape(a);
    let auth = format!("Bearer {TOKEN}");
    let extra = [("Authorization", auth.as_str())];
    let ask = tool_call(
        2,
        "book_room",
        json!({"day": "2099-12-21", "hour": 9, "room_hint": "the big room"}),
        true,
    );
    let asked = post_mcp(a, &ask, &extra).json();
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"].as_str().expect("state");
    let answer = json!({"room": {"action": "accept", "content": {"room_id": "atrium"}}});
    let done = post_mcp(a, &retry(&ask, 3, answer, state), &extra).json();
    assert_eq!(done["result"]["isError"], false, "{done}");
    // Which rooms are free then: a read per room.
    let rooms = tool_call(
        4,
        "list_rooms",
        json!({"day": "2099-12-21", "hour": 9}),
        false,
    );
    let listed = post_mcp(a, &rooms, &extra).json();
    assert_eq!(listed["result"]["isError"], false, "{listed}");
    let after = scrape(a);

    let moved = |metric: &str, labels: &[(&str, &str)]| {
        let d = value(&after, metric, labels) - value(&before, metric, labels);
        println!("{metric}{labels:?}: +{d}");
        d
    };
    let call = |outcome| [("method", "tools/call"), ("outcome", outcome)];
    assert_eq!(
        moved("redmark_requests_total", &call("input_required")),
        1.0
    );
    assert_eq!(moved("redmark_requests_total", &call("result")), 2.0);
    assert_eq!(moved("redmark_questions_asked_total", &[]), 1.0);
    let accept = [("action", "accept")];
    assert_eq!(moved("redmark_questions_answered_total", &accept), 1.0);
    let made = [("change", "made")];
    assert_eq!(moved("redmark_bookings_total", &made), 1.0);
    assert_eq!(moved("redmark_group_commit_writes_count", &[]), 1.0);
    assert_eq!(moved("redmark_group_commit_writes_sum", &[]), 1.0);
    let commit = [("op", "commit")];
    assert_eq!(moved("redmark_store_seconds_count", &commit), 1.0);
    assert!(moved("redmark_store_seconds_count", &[("op", "read")]) >= 3.0);
    // The scrape's own connection is open while it is answered.
    let open = value(&after, "redmark_connections_open", &[("transport", "http")]);
    assert!(open >= 1.0, "connections open: {open}");
    // The listener's shares, as counts: with --tokens one principal holds at most half.
    let max = value(&after, "redmark_http_max_connections", &[]);
    assert!(max > 0.0, "max connections: {max}");
    assert_eq!(
        value(&after, "redmark_http_principal_share", &[]),
        max / 2.0
    );
    let largest = value(&after, "redmark_http_largest_principal_connections", &[]);
    assert!((1.0..=max / 2.0).contains(&largest), "largest: {largest}");
    assert!(
        !after
            .samples
            .iter()
            .any(|x| x.labels.values().any(|v| v == "ops")),
        "no principal's name"
    );
    let histogram = after
        .samples
        .iter()
        .find(|x| x.metric == "redmark_group_commit_writes")
        .expect("the group-commit histogram");
    assert!(
        matches!(&histogram.value, Prom::Histogram(b) if b.iter().any(|c| c.less_than == 1.0 && c.count >= 1.0)),
        "{histogram:?}"
    );
    let log = s.stderr();
    assert!(!log.contains(TOKEN), "tokens are never logged");
}

/// The PostgreSQL cluster's processes (the postmaster and its children) stopped with SIGSTOP,
/// as a database host that froze or a network that drops every packet looks to the server;
/// continued when dropped.
struct Frozen(Vec<u32>);

impl Frozen {
    fn new(pg: &Cluster) -> Frozen {
        let postmaster = pg.postmaster_pid().expect("the postmaster runs");
        let mut pids = vec![postmaster];
        for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // pid (comm) state ppid …: the parent is the second field after the name.
            let parent = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
            if parent == Some(postmaster) {
                pids.push(pid);
            }
        }
        signal(&pids, "STOP");
        Frozen(pids)
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        signal(&self.0, "CONT");
    }
}

fn signal(pids: &[u32], sig: &str) {
    let st = Command::new("kill")
        .arg(format!("-{sig}"))
        .args(pids.iter().map(u32::to_string))
        .status()
        .expect("run kill");
    assert!(st.success(), "kill -{sig} {pids:?}");
}

/// `/healthz` three times, each answered 503 within the check's timeout (2 s) plus a second.
fn unavailable_quickly(a: SocketAddr, what: &str) {
    for _ in 0..3 {
        let began = Instant::now();
        let h = get(a, "/healthz", &[]);
        let took = began.elapsed();
        println!(
            "{what}: {} in {took:?}: {}",
            h.status,
            String::from_utf8_lossy(&h.body)
        );
        assert_eq!(h.status, 503, "{}", String::from_utf8_lossy(&h.body));
        assert_eq!(h.json()["status"], "unavailable");
        assert!(took < Duration::from_secs(3), "answered after {took:?}");
    }
}

/// `/healthz` answers 200 again (bounded wait).
fn healthy_again(a: SocketAddr) {
    let deadline = Instant::now() + WAIT;
    while get(a, "/healthz", &[]).status != 200 {
        assert!(
            Instant::now() < deadline,
            "still 503 after PostgreSQL came back"
        );
        thread::sleep(Duration::from_millis(100));
    }
}

/// While PostgreSQL is stopped, and while it is frozen (connections open, nothing answers),
/// `/healthz` says 503 within its timeout (2 s) plus a second; 200 again once it is back.
#[test]
#[cfg_attr(not(pg_tools), ignore = "PostgreSQL is not installed")]
fn healthz_says_503_quickly_while_postgresql_is_down() {
    let pg = Cluster::start();
    let data = TempDir::new("ops-pg");
    let s = Server::start(
        &["--http", "127.0.0.1:0", "--store", &pg.url()],
        data.path(),
    );
    let a = s.http[0];
    assert_eq!(get(a, "/healthz", &[]).status, 200);
    pg.pg_ctl_stop();
    unavailable_quickly(a, "stopped");
    pg.pg_ctl_start();
    healthy_again(a);
    let frozen = Frozen::new(&pg);
    unavailable_quickly(a, "frozen");
    drop(frozen);
    healthy_again(a);
}

/// A booking as acknowledged: id → (room, day, hour).
type Acked = BTreeMap<u64, (String, String, u8)>;

const ROOMS: [&str; 3] = ["atrium", "studio-b", "nook"];

/// Books `room` hour after hour on its own connection until `stop` (or its slots run out),
/// recording each acknowledged booking.
fn flood(addr: SocketAddr, room: &'static str, acked: &Mutex<Acked>, stop: &AtomicBool) {
    let mut c = LineClient::tcp(addr);
    for i in 0..24 * 28 {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let (day, hour) = (format!("2099-03-{:02}", i / 24 + 1), (i % 24) as u8);
        let r = c.request(&tool_call(
            i as u64,
            "book_room",
            json!({"day": day, "hour": hour, "room_id": room}),
            false,
        ));
        assert_eq!(r["result"]["isError"], false, "{r}");
        let id = r["result"]["structuredContent"]["booking"]["id"]
            .as_str()
            .and_then(|s| s.strip_prefix("bk_"))
            .and_then(|n| n.parse().ok())
            .expect("a booking id");
        acked
            .lock()
            .unwrap()
            .insert(id, (room.to_owned(), day, hour));
    }
}

/// The room, day and hour `bk_<id>` holds on the server `c` talks to (asked as a cancellation
/// that is never confirmed), or `None` when there is no such booking.
fn holds(c: &mut LineClient<TcpStream, TcpStream>, id: u64) -> Option<String> {
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
                .to_owned(),
        ),
        _ => None,
    }
}

/// `redmark backup --data DIR OUT`.
fn backup(dir: &std::path::Path, out: &std::path::Path) -> String {
    let mut cmd = Command::new(redmark_bin());
    cmd.arg("backup").arg("--data").arg(dir).arg(out);
    let run = run_bounded(cmd);
    assert_eq!(run.code, 0, "redmark backup failed: {}", run.stderr);
    run.stdout
}

/// The number of bookings a backup's line says it copied.
fn copied(said: &str) -> u64 {
    said.strip_prefix("redmark backup: ")
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected backup output: {said}"))
}

/// A backup taken through the serving process while three connections book: every booking
/// acknowledged before the backup began is in the copy, which another folder serves; with
/// the server stopped, a backup opens the store itself and holds every booking made.
#[test]
fn a_backup_taken_during_a_booking_flood_restores_every_booking_acknowledged_before_it() {
    let data = TempDir::new("ops-backup");
    let mut s = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
    let addr = s.tcp[0];
    let acked = Arc::new(Mutex::new(Acked::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = ROOMS
        .iter()
        .map(|room| {
            let (acked, stop) = (Arc::clone(&acked), Arc::clone(&stop));
            thread::spawn(move || flood(addr, room, &acked, &stop))
        })
        .collect();
    let deadline = Instant::now() + WAIT;
    while acked.lock().unwrap().len() < 60 {
        assert!(
            Instant::now() < deadline,
            "bookings did not flow: {}",
            s.stderr()
        );
        thread::sleep(Duration::from_millis(2));
    }
    let out = TempDir::new("ops-backup-out");
    let copy = out.path().join("floor.redb");
    // Everything acknowledged up to here was acknowledged before the backup began.
    let before = acked.lock().unwrap().clone();
    let said = backup(data.path(), &copy);
    let during = acked.lock().unwrap().len() - before.len();
    assert!(during > 0, "the flood went on while the backup ran");
    // The flood goes on after the backup too, then stops.
    let more = acked.lock().unwrap().len() + 20;
    while acked.lock().unwrap().len() < more {
        assert!(
            Instant::now() < deadline,
            "bookings stopped: {}",
            s.stderr()
        );
        thread::sleep(Duration::from_millis(2));
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().expect("writer");
    }
    print!("{said}");
    assert!(said.contains("from the server serving"), "{said}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the copy is private");
    }
    let leftovers: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .chain(std::fs::read_dir(data.path()).unwrap())
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");

    // Restore into a fresh folder and count.
    let fresh = TempDir::new("ops-restored");
    std::fs::copy(&copy, fresh.path().join("bookings.redb")).unwrap();
    let restored = Server::start(&["--tcp", "127.0.0.1:0"], fresh.path());
    let mut c = restored.tcp_client();
    for (id, (room, day, hour)) in &before {
        let d = holds(&mut c, *id)
            .unwrap_or_else(|| panic!("bk_{id}, acknowledged before the backup, is missing"));
        assert!(
            d.contains(&format!(" {day} at {hour:02}:00")),
            "bk_{id} ({room}): {d}"
        );
    }
    let in_copy = copied(&said);
    assert!(in_copy >= before.len() as u64, "{said}");
    println!(
        "{} bookings acknowledged before the backup began: all {} in the restored copy; {} \
         acknowledged while it ran; the copy holds {in_copy}",
        before.len(),
        before.len(),
        during
    );
    assert!(
        holds(&mut c, in_copy + 1).is_none(),
        "the copy holds no booking past the {in_copy} it said"
    );

    // No server: the backup opens the store itself, and every booking made is in it.
    s.signal("TERM");
    assert!(
        s.wait_exit().is_some_and(|st| st.success()),
        "{}",
        s.stderr()
    );
    let offline = out.path().join("offline.redb");
    let said = backup(data.path(), &offline);
    print!("{said}");
    assert!(said.contains("from the store of"), "{said}");
    let all = acked.lock().unwrap().len() as u64;
    assert_eq!(copied(&said), all, "{said}");
}
