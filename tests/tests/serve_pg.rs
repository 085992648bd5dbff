//! Many instances, one floor: three `redmark serve --http` on one PostgreSQL (a throwaway
//! cluster, `redmark_tests::pg`) with the same sealing key. Any instance serves the retry; the
//! database, not an instance, decides who wins a slot; faults answer `-32603` and heal.
#![cfg_attr(not(pg_tools), allow(dead_code, unused_imports))]

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use redmark_tests::pg::{Cluster, PASSWORD};
use redmark_tests::server::{
    post_mcp, redmark_bin, retry, run_bounded, tool_call, Server, TempDir, TEST_KEY,
};
use serde_json::{json, Value};

const NO_PG: &str = "PostgreSQL is not installed (scripts/test-all.sh installs postgresql)";

/// `n` instances on the cluster's database, each with its own data folder (keys: the tests'
/// shared `REDMARK_KEY`).
fn instances(pg: &Cluster, n: usize) -> Vec<(Server, TempDir)> {
    let url = pg.url();
    (0..n)
        .map(|i| {
            let data = TempDir::new(&format!("pg-instance-{i}"));
            let s = Server::start(&["--http", "127.0.0.1:0", "--store", &url], data.path());
            assert!(!s.stderr().contains(PASSWORD), "password logged");
            (s, data)
        })
        .collect()
}

fn post(addr: SocketAddr, msg: &Value) -> Value {
    post_mcp(addr, msg, &[]).json()
}

/// The booking a result reports: (id, room, day, hour).
fn booking(r: &Value) -> (String, String, String, u64) {
    assert_eq!(r["result"]["isError"], false, "{r}");
    let b = &r["result"]["structuredContent"]["booking"];
    (
        b["id"].as_str().expect("id").to_string(),
        b["room_id"].as_str().expect("room").to_string(),
        b["day"].as_str().expect("day").to_string(),
        redmark_tests::start_hour(b).expect("hour"),
    )
}

fn book(id: u64, day: &str, hour: u64, room: &str) -> Value {
    tool_call(
        id,
        "book_room",
        json!({"day": day, "hour": hour, "room_id": room}),
        false,
    )
}

/// No database listening: the start fails with one line naming the store, never the password.
#[test]
fn an_unreachable_store_is_refused_at_start_without_its_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let data = TempDir::new("pg-unreachable");
    let url = format!("postgres://redmark:{PASSWORD}@127.0.0.1:{port}/db");
    let mut cmd = std::process::Command::new(redmark_bin());
    cmd.args(["serve", "--http", "127.0.0.1:0", "--data"])
        .arg(data.path())
        .env("REDMARK_STORE", &url)
        .env("REDMARK_KEY", TEST_KEY);
    let run = run_bounded(cmd);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "booking store postgres://redmark@127.0.0.1:{port}/db"
        )),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains(PASSWORD), "{}", run.stderr);
    assert!(
        !data.path().join("sealing-keys").exists(),
        "a refused store leaves no key file"
    );
}

#[test]
#[cfg_attr(not(pg_tools), ignore = "PostgreSQL is not installed")]
fn asked_on_one_answered_on_two_replayed_on_three() {
    let pg = Cluster::start();
    let s = instances(&pg, 3);
    let ask = tool_call(
        1,
        "book_room",
        json!({"day":"2099-12-21","hour":9,"room_hint":"the big room"}),
        true,
    );
    let r = post(s[0].0.http[0], &ask);
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let state = r["result"]["requestState"].as_str().expect("state");
    let answer = json!({"room": {"action":"accept","content":{"room_id":"atrium"}}});
    let last = retry(&ask, 2, answer, state);
    let first = booking(&post(s[1].0.http[0], &last));
    for i in 0..20 {
        let again = booking(&post(s[2].0.http[0], &last));
        assert_eq!(again, first, "replay {i} on instance 3");
    }
    assert_eq!(
        pg.psql("SELECT count(*) FROM redmark_bookings"),
        "1",
        "{NO_PG}"
    );
}

#[test]
#[cfg_attr(not(pg_tools), ignore = "PostgreSQL is not installed")]
fn three_instances_eight_clients_each_one_winner_per_slot() {
    const SLOTS: u64 = 50;
    const CLIENTS: usize = 8;
    let pg = Cluster::start();
    let s = instances(&pg, 3);
    let addrs: Vec<SocketAddr> = s.iter().map(|(x, _)| x.http[0]).collect();
    let outcomes: Vec<(u64, Value)> = thread::scope(|sc| {
        let handles: Vec<_> = (0..addrs.len() * CLIENTS)
            .map(|c| {
                let a = addrs[c % addrs.len()];
                sc.spawn(move || {
                    (0..SLOTS)
                        .map(|h| {
                            let (day, hour) = (format!("2099-11-{:02}", 1 + h / 24), h % 24);
                            (h, post(a, &book(h, &day, hour, "nook")))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("client"))
            .collect()
    });
    let mut winners: HashMap<u64, String> = HashMap::new();
    let mut taken = 0;
    for (h, r) in &outcomes {
        if r["result"]["isError"] == false {
            let (id, ..) = booking(r);
            assert!(winners.insert(*h, id).is_none(), "two winners of slot {h}");
        } else {
            let text = r["result"]["content"][0]["text"].as_str().unwrap_or("");
            assert!(text.contains("already booked"), "a loser is told: {r}");
            taken += 1;
        }
    }
    assert_eq!(winners.len() as u64, SLOTS);
    assert_eq!(taken, outcomes.len() as u64 - SLOTS);
    assert_eq!(
        pg.psql("SELECT count(*) FROM redmark_bookings"),
        SLOTS.to_string()
    );
}

#[test]
#[cfg_attr(not(pg_tools), ignore = "PostgreSQL is not installed")]
fn cancelled_on_one_replayed_on_another_is_one_cancellation() {
    let pg = Cluster::start();
    let s = instances(&pg, 2);
    let (id, ..) = booking(&post(s[0].0.http[0], &book(1, "2099-10-01", 9, "atrium")));
    let ask = tool_call(2, "cancel_booking", json!({"booking_id": id}), true);
    let r = post(s[0].0.http[0], &ask);
    let state = r["result"]["requestState"].as_str().expect("state");
    let yes = json!({"confirm": {"action":"accept","content":{"confirm":true}}});
    let last = retry(&ask, 3, yes, state);
    let first = post(s[0].0.http[0], &last);
    assert!(
        first["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("is cancelled")),
        "{first}"
    );
    let again = post(s[1].0.http[0], &last);
    assert!(
        again["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("was already cancelled")),
        "{again}"
    );
    assert_eq!(
        pg.psql("SELECT count(*) FILTER (WHERE cancelled), count(*) FROM redmark_bookings"),
        "1|1"
    );
}

/// Bookings made on two instances are listed on the third, earliest first, each page asked
/// of another instance (the database's order, room ids byte by byte).
#[test]
#[cfg_attr(not(pg_tools), ignore = "PostgreSQL is not installed")]
fn your_bookings_are_listed_page_by_page_on_any_instance() {
    let pg = Cluster::start();
    let s = instances(&pg, 3);
    let mut booked = Vec::new();
    for (i, (hour, room)) in [(9, "atrium"), (9, "nook"), (10, "atrium")]
        .into_iter()
        .cycle()
        .take(3)
        .chain((11..21).map(|h| (h, "studio-b")))
        .enumerate()
    {
        let on = s[i % 2].0.http[0];
        let (id, ..) = booking(&post(on, &book(i as u64, "2099-09-01", hour, room)));
        booked.push(id);
    }
    let mut seen = Vec::new();
    let mut args = json!({"day": "2099-09-01"});
    for page in 0..booked.len() {
        let r = post(
            s[page % 3].0.http[0],
            &tool_call(1, "list_bookings", args.clone(), false),
        );
        let got = &r["result"]["structuredContent"];
        let ids = got["bookings"].as_array().unwrap_or_else(|| panic!("{r}"));
        seen.extend(ids.iter().map(|b| b["id"].as_str().unwrap().to_owned()));
        let Some(next) = got["next"].as_str() else {
            break;
        };
        args["after"] = json!(next);
    }
    assert_eq!(seen, booked, "{NO_PG}");
}

/// Acknowledged bookings: id → (room, day, hour).
type Acked = BTreeMap<String, (String, String, u64)>;

/// Books hour after hour of `room` in `year` on `addr` until `until`; records what was
/// acknowledged and returns the JSON-RPC errors seen. A connection that fails (instance
/// killed) ends it.
fn load(addr: SocketAddr, year: u64, until: Instant, acked: &Mutex<Acked>) -> Vec<Value> {
    let room = "atrium";
    let mut errors = Vec::new();
    let mut n = 0u64;
    while Instant::now() < until {
        let (day, hour) = (
            format!("{year}-{:02}-{:02}", 1 + n / (24 * 28), 1 + n / 24 % 28),
            n % 24,
        );
        n += 1;
        let Ok(r) = std::panic::catch_unwind(|| post(addr, &book(n, &day, hour, room))) else {
            break;
        };
        if r.get("error").is_some() {
            errors.push(r);
            thread::sleep(Duration::from_millis(20));
            continue;
        }
        let b = booking(&r);
        acked.lock().unwrap().insert(b.0, (b.1, b.2, b.3));
    }
    errors
}

/// Every acknowledged booking is stored as acknowledged and active.
fn all_stored(pg: &Cluster, acked: &Acked) {
    let rows = pg.psql(
        "SELECT 'bk_' || id, room, to_char(day, 'YYYY-MM-DD'), hour, cancelled \
         FROM redmark_bookings",
    );
    let stored: HashMap<&str, &str> = rows.lines().filter_map(|l| l.split_once('|')).collect();
    for (id, (room, day, hour)) in acked {
        assert_eq!(
            stored.get(id.as_str()).copied(),
            Some(&*format!("{room}|{day}|{hour}|f")),
            "acknowledged {id}"
        );
    }
}

#[test]
#[cfg_attr(not(pg_tools), ignore = "PostgreSQL is not installed")]
fn kill_9_of_one_instance_under_load_loses_no_acknowledged_booking() {
    let pg = Cluster::start();
    let mut s = instances(&pg, 3);
    let addrs: Vec<SocketAddr> = s.iter().map(|(x, _)| x.http[0]).collect();
    let acked = Arc::new(Mutex::new(Acked::new()));
    let until = Instant::now() + Duration::from_secs(4);
    let handles: Vec<_> = (0..6)
        .map(|c| {
            let (a, acked) = (addrs[c % 3], Arc::clone(&acked));
            // Each client books its own year: no slot is contested.
            thread::spawn(move || load(a, 2090 + c as u64, until, &acked))
        })
        .collect();
    thread::sleep(Duration::from_millis(1500));
    s[0].0.kill9();
    for h in handles {
        let errors = h.join().expect("client");
        assert!(errors.is_empty(), "{errors:?}");
    }
    let acked = acked.lock().unwrap();
    assert!(acked.len() > 20, "too little load: {}", acked.len());
    all_stored(&pg, &acked);
}

#[test]
#[cfg_attr(not(pg_tools), ignore = "PostgreSQL is not installed")]
fn database_restart_under_load_gives_clear_errors_then_service_resumes() {
    let pg = Cluster::start();
    let s = instances(&pg, 1);
    let a = s[0].0.http[0];
    let acked = Mutex::new(Acked::new());
    let until = Instant::now() + Duration::from_secs(6);
    let errors = thread::scope(|sc| {
        let h = sc.spawn(|| load(a, 2098, until, &acked));
        thread::sleep(Duration::from_millis(1000));
        pg.pg_ctl_stop();
        thread::sleep(Duration::from_millis(1500));
        pg.pg_ctl_start();
        h.join().expect("client")
    });
    assert!(!errors.is_empty(), "the outage was not seen");
    for e in &errors {
        assert_eq!(e["error"]["code"], -32603, "{e}");
        let m = e["error"]["message"].as_str().unwrap_or_default();
        assert!(m.contains("booking store failed"), "{e}");
    }
    // Service resumed without a restart of redmark.
    let r = post(a, &book(9, "2097-01-01", 9, "nook"));
    booking(&r);
    all_stored(&pg, &acked.lock().unwrap());
    assert!(
        s[0].0.wait_stderr("booking store reachable again"),
        "recovery is logged: {}",
        s[0].0.stderr()
    );
    let stderr = s[0].0.stderr();
    assert!(!stderr.contains(PASSWORD), "password logged: {stderr}");
}

/// `--store PATH` keeps redb, in that folder (keys stay in `--data`).
#[test]
fn a_store_path_keeps_redb_there() {
    let data = TempDir::new("store-path-data");
    let store = TempDir::new("store-path-redb");
    let s = Server::start(
        &[
            "--http",
            "127.0.0.1:0",
            "--store",
            store.path().to_str().expect("utf-8 path"),
        ],
        data.path(),
    );
    booking(&post(s.http[0], &book(1, "2099-09-01", 9, "atrium")));
    assert!(store.path().join("bookings.redb").is_file());
    assert!(!data.path().join("bookings.redb").exists());
}
