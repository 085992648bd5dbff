//! Two-way CalDAV through failures: Radicale killed with SIGKILL mid-sync and started again on the same storage loses and duplicates nothing (counted), and three `redmark serve` on one PostgreSQL syncing one calendar write every booking and hold every event once.

mod caldav_support;

use std::collections::BTreeMap;

use caldav_support::{book, booked_in, caldav_args, day, python, until, Radicale, SYNCED_WITHIN};
use redmark_tests::pg::Cluster;
use redmark_tests::server::{Server, TempDir};
use serde_json::Value;

/// How many events of `events` each UID has.
fn uids(events: &[Value]) -> BTreeMap<String, usize> {
    let mut n = BTreeMap::new();
    for e in events {
        *n.entry(e["uid"].as_str().unwrap_or_default().to_owned())
            .or_default() += 1;
    }
    n
}

/// (4) 20 bookings, Radicale killed with SIGKILL after the first 10 (passes under way), the
/// other 10 made while it is down (booking never waits for it), Radicale started again on
/// the same storage: every booking is in the collection exactly once, and the outage was
/// logged once when it started and once when it ended.
#[test]
fn kill_9_of_radicale_mid_sync_loses_and_duplicates_nothing() {
    let Some(py) = python() else { return };
    let dir = TempDir::new("caldav-kill9");
    let mut radicale = Radicale::start(&py, dir.path());
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let s = caldav_support::serve(&data, &radicale, &[]);
    let addr = s.http[0];
    let d = day(7);
    let mut ids = Vec::new();
    for i in 0..20u32 {
        if i == 10 {
            radicale.kill9();
        }
        let start = format!("{:02}:{:02}", 7 + i / 2, (i % 2) * 30);
        let r = book(addr, "atrium", &d, &start, 30, &format!("Meeting {i}"));
        ids.push(booked_in(&r, "atrium").unwrap_or_else(|| panic!("{r}")));
    }
    assert!(
        until(SYNCED_WITHIN, || s
            .stderr()
            .contains("CalDAV sync failing")
            .then_some(()))
        .is_some(),
        "{}",
        s.stderr()
    );
    let port = radicale.port;
    drop(radicale);
    let radicale = Radicale::start_on(&py, dir.path(), port);
    let all = until(SYNCED_WITHIN * 2, || {
        let events = radicale.events("atrium");
        (events.len() >= ids.len()).then_some(events)
    })
    .unwrap_or_else(|| panic!("not caught up: {}", s.stderr()));
    let counts = uids(&all);
    assert_eq!(all.len(), 20, "{counts:?}");
    for id in &ids {
        let mine: Vec<_> = counts
            .iter()
            .filter(|(u, _)| u.starts_with(&format!("{id}@")))
            .collect();
        assert_eq!(mine.len(), 1, "{id}: {counts:?}");
        assert_eq!(*mine[0].1, 1, "{id}: {counts:?}");
    }
    assert!(until(SYNCED_WITHIN, || s
        .stderr()
        .contains("CalDAV sync working again")
        .then_some(()))
    .is_some());
    let log = s.stderr();
    assert_eq!(log.matches("CalDAV sync failing").count(), 1, "{log}");
    assert_eq!(log.matches("CalDAV sync working again").count(), 1, "{log}");
    assert!(!log.contains(caldav_support::PASSWORD));
}

/// (5) Three instances on one PostgreSQL (same keys), all syncing one Radicale: bookings made
/// on each, and events others put into the collection, end up once each: no duplicate event,
/// each event booked once (its slot refused on every instance), nothing refused that should
/// not be.
#[test]
fn three_instances_on_postgresql_sync_one_calendar_without_duplicates() {
    let Some(py) = python() else { return };
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    let dir = TempDir::new("caldav-pg");
    let radicale = Radicale::start(&py, dir.path());
    let url = pg.url();
    let servers: Vec<(Server, TempDir)> = (0..3)
        .map(|i| {
            let data = TempDir::new(&format!("caldav-pg-{i}"));
            let mut args: Vec<String> = vec![
                "--http".into(),
                "127.0.0.1:0".into(),
                "--store".into(),
                url.clone(),
            ];
            args.extend(caldav_args(data.path(), &radicale));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            (Server::start(&args, data.path()), data)
        })
        .collect();
    let d = day(8);
    caldav_support::made(&radicale, "atrium");
    // Three events from a calendar client, nine bookings across the instances.
    for i in 0..3u32 {
        radicale.add(
            "atrium",
            &format!("ext-{i}@example.org"),
            &format!("{d}T{:02}:00", 8 + i),
            &format!("{d}T{:02}:00", 9 + i),
            &format!("External {i}"),
        );
    }
    let mut ids = Vec::new();
    for i in 0..9u32 {
        let (s, _) = &servers[i as usize % 3];
        let r = book(
            s.http[0],
            "atrium",
            &d,
            &format!("{:02}:00", 12 + i),
            60,
            "Ours",
        );
        ids.push(booked_in(&r, "atrium").unwrap_or_else(|| panic!("{r}")));
    }
    let settled = until(SYNCED_WITHIN * 2, || {
        let events = radicale.events("atrium");
        (events.len() >= 12).then_some(events)
    })
    .unwrap_or_else(|| panic!("not synced: {}", servers[0].0.stderr()));
    // A few more passes of all three: still no more.
    std::thread::sleep(std::time::Duration::from_secs(4));
    let events = radicale.events("atrium");
    let counts = uids(&events);
    assert_eq!(
        events.len(),
        12,
        "{counts:?} (first seen {})",
        settled.len()
    );
    assert!(counts.values().all(|n| *n == 1), "{counts:?}");
    assert!(
        events.iter().all(|e| e["status"] != "CANCELLED"),
        "{events:?}"
    );
    for id in &ids {
        assert!(
            counts.keys().any(|u| u.starts_with(&format!("{id}@"))),
            "{id}"
        );
    }
    // Each external event holds its slot, once: refused on every instance, and the store
    // holds exactly one booking for each.
    for (i, (s, _)) in servers.iter().enumerate() {
        let r = book(
            s.http[0],
            "atrium",
            &d,
            &format!("{:02}:00", 8 + i),
            60,
            "Mine",
        );
        assert_eq!(booked_in(&r, "atrium"), None, "{r}");
    }
    let held = pg.psql(&format!(
        "SELECT count(*) FROM redmark_bookings WHERE room = 'atrium' AND NOT cancelled \
         AND day = '{d}'"
    ));
    assert_eq!(held.trim(), "12", "9 bookings and 3 events");
}
