//! A damaged or vanished bookings store (issue 10) is refused at start with one line on stderr
//! saying what is wrong and what to do, and a non-zero exit — never a panic, never an empty
//! store in its place. Since issue 41 a start reads every page only where redb says the last
//! shutdown was not clean: damage inside a cleanly shut down store is found by `redmark check`
//! or when a request reads it. Damage met while serving is a `-32603` for that request, and any
//! request that panics is answered `-32603` with its id on every transport (issue 12).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use redmark_tests::server::{
    discover, post_mcp, redmark_bin, run_bounded, tool_call, Run, Server, TempDir, TEST_KEY,
};
use serde_json::{json, Value};

const STORE: &str = "bookings.redb";
const PAGE: usize = 4096;
/// Long enough for any answer, short enough that a missing one fails the test quickly.
const ANSWER: Duration = Duration::from_secs(20);

/// `book_room` of slot `i` (one hour of January 2099) in the atrium.
fn book(i: usize) -> Value {
    let day = format!("2099-01-{:02}", 1 + i / 24);
    tool_call(
        i as u64 + 1,
        "book_room",
        json!({"day": day, "hour": i % 24, "room_id": "atrium"}),
        false,
    )
}

/// Starts a server on `data` (with the test key in the environment, or without it so a key
/// file is created), books `n` slots, and stops it cleanly.
fn fill(data: &Path, n: usize, env_key: bool) {
    let s = fill_open(data, n, env_key);
    stop(s);
}

/// Stops `s` with SIGTERM and expects a clean exit.
fn stop(mut s: Server) {
    s.signal("TERM");
    let st = s.wait_exit().expect("redmark did not exit on SIGTERM");
    assert!(st.success(), "{st:?}\n{}", s.stderr());
}

/// [`fill`], leaving the server running.
fn fill_open(data: &Path, n: usize, env_key: bool) -> Server {
    let env: &[(&str, &str)] = if env_key {
        &[("REDMARK_KEY", TEST_KEY)]
    } else {
        &[]
    };
    let s = Server::start_with(&["--tcp", "127.0.0.1:0"], data, env);
    let mut c = s.tcp_client();
    for i in 0..n {
        let r = c.request(&book(i));
        assert_eq!(r["result"]["isError"], false, "{r}");
    }
    s
}

/// `redmark serve --data DATA ARGS…` on stdio with stdin at EOF: it either refuses to start or
/// serves nothing and exits 0.
fn serve_once(data: &Path, args: &[&str], env_key: bool) -> Run {
    let mut cmd = Command::new(redmark_bin());
    cmd.arg("serve").arg("--data").arg(data).args(args);
    cmd.env_remove("REDMARK_KEY").env_remove("REDMARK_OLD_KEYS");
    if env_key {
        cmd.env("REDMARK_KEY", TEST_KEY);
    }
    run_bounded(cmd)
}

/// `redmark check --data DATA`.
fn check_once(data: &Path) -> Run {
    let mut cmd = Command::new(redmark_bin());
    cmd.arg("check").arg("--data").arg(data);
    run_bounded(cmd)
}

/// Exit status 1 and exactly one line on stderr, `redmark serve: …`, saying each of `says`.
fn assert_refused(run: &Run, says: &[&str]) {
    assert_refused_by(run, "redmark serve: ", says);
}

/// Exit status 1 and exactly one line on stderr, starting `who`, saying each of `says`.
fn assert_refused_by(run: &Run, who: &str, says: &[&str]) {
    assert_eq!(run.code, 1, "exit status; stderr:\n{}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stderr, got:\n{}", run.stderr);
    assert!(lines[0].starts_with(who), "{}", lines[0]);
    for s in says {
        assert!(lines[0].contains(s), "{s:?} not in: {}", lines[0]);
    }
    assert!(!run.stderr.contains("panicked at"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "stdout: {}", run.stdout);
}

/// The minutes (since 1970, UTC) of the year 2099, where these tests book.
const YEAR_2099: std::ops::Range<u32> = 67_848_480..68_374_080;

/// A u32 little-endian.
fn minute(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// Overwrites with `0xEE` every page holding a booking record (found by the record's first
/// bytes: version 2, status, a start in the year 2099 as UTC minutes, u32 little-endian);
/// returns how many pages.
fn garbage_over_records(store: &Path) -> usize {
    let mut bytes = std::fs::read(store).expect("read store");
    let mut pages = 0;
    for page in bytes.chunks_mut(PAGE).skip(1) {
        let holds_records = page
            .windows(6)
            .any(|w| w[0] == 2 && w[1] <= 1 && YEAR_2099.contains(&minute(&w[2..])));
        if holds_records {
            page.fill(0xEE);
            pages += 1;
        }
    }
    std::fs::write(store, &bytes).expect("write store");
    pages
}

/// Changed on purpose in issue 41 (this test was `garbage_over_data_pages_is_refused_at_start`):
/// a cleanly shut down store is opened without reading every page, so garbage over its records
/// does not stop a start; a request that reads it gets `-32603` and the damage is logged, and
/// `redmark check` reads every page and refuses the store with the sentence a start used to say.
#[test]
fn damage_in_a_cleanly_shut_down_store_is_met_when_read_and_by_check() {
    let data = TempDir::new("dmg-garbage");
    fill(data.path(), 200, true);
    let store = data.path().join(STORE);
    assert!(garbage_over_records(&store) > 0, "no record page found");
    let s = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
    let mut c = s.tcp_client();
    let r = c.request(&describe(100));
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert!(s.wait_stderr("bookings.redb is damaged"), "{}", s.stderr());
    drop(c);
    drop(s);
    let run = check_once(data.path());
    assert_refused_by(
        &run,
        "redmark check: ",
        &[
            "bookings.redb is damaged",
            "restore it from a copy",
            "--repair",
        ],
    );
    // Every record page is garbage, so redb has no intact commit to roll back to.
    let run = serve_once(data.path(), &["--repair"], true);
    assert_refused(
        &run,
        &["--repair", "cannot be repaired", "restore it from a copy"],
    );
}

/// Where redb says the last shutdown was not clean (`kill -9`), a start reads every page as
/// before and refuses the damage.
#[test]
fn damage_after_an_unclean_shutdown_is_refused_at_start() {
    let data = TempDir::new("dmg-unclean");
    let mut s = fill_open(data.path(), 200, true);
    s.kill9();
    assert!(garbage_over_records(&data.path().join(STORE)) > 0);
    let run = serve_once(data.path(), &[], true);
    assert_refused(
        &run,
        &["bookings.redb is damaged", "restore it from a copy"],
    );
}

/// `redmark check` of an intact store says what it checked and exits 0, whether or not the
/// last shutdown was clean; a vanished store is refused as a start refuses it.
#[test]
fn check_passes_an_intact_store_and_refuses_a_vanished_one() {
    let data = TempDir::new("check-ok");
    fill(data.path(), 3, true);
    let run = check_once(data.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with("redmark check: ")
            && run.stdout.contains("passed redb's integrity check")
            && run.stdout.contains("(3 bookings)")
            && run.stdout.contains("\n  bookings: 3 entries on 1 page ")
            && run.stdout.contains("\n  the file: "),
        "{}",
        run.stdout
    );
    let mut s = fill_open(data.path(), 0, true);
    s.kill9();
    let run = check_once(data.path());
    assert_eq!(run.code, 0, "after kill -9: {}", run.stderr);
    std::fs::remove_file(data.path().join(STORE)).unwrap();
    let run = check_once(data.path());
    assert_refused_by(&run, "redmark check: ", &["bookings.redb is missing"]);
}

#[test]
fn truncated_store_is_refused_without_a_panic() {
    let good = TempDir::new("dmg-trunc-src");
    fill(good.path(), 200, true);
    let bytes = std::fs::read(good.path().join(STORE)).expect("read store");
    let marker = std::fs::read(good.path().join("store-id")).ok();
    assert!(bytes.len() > 2 * PAGE, "store of {} bytes", bytes.len());
    for cut in [PAGE, bytes.len() / 2, bytes.len() - PAGE] {
        let data = TempDir::new("dmg-trunc");
        std::fs::write(data.path().join(STORE), &bytes[..cut]).unwrap();
        if let Some(m) = &marker {
            std::fs::write(data.path().join("store-id"), m).unwrap();
        }
        let run = serve_once(data.path(), &[], true);
        assert_refused(
            &run,
            &["bookings.redb is damaged", "restore it from a copy"],
        );
        assert!(!run.stderr.contains("RUST_BACKTRACE"), "{}", run.stderr);
    }
}

#[test]
fn an_emptied_or_deleted_store_is_refused_where_one_was() {
    let data = TempDir::new("dmg-vanished");
    // Without REDMARK_KEY: the folder also gets its key file, as in the issue.
    fill(data.path(), 1, false);
    assert!(data.path().join("sealing-keys").exists());
    let store = data.path().join(STORE);
    std::fs::write(&store, b"").unwrap();
    let run = serve_once(data.path(), &[], false);
    assert_refused(
        &run,
        &[
            "bookings.redb is empty",
            "restore bookings.redb from a copy",
        ],
    );
    std::fs::remove_file(&store).unwrap();
    let run = serve_once(data.path(), &[], false);
    assert_refused(
        &run,
        &[
            "bookings.redb is missing",
            "restore bookings.redb from a copy",
        ],
    );
    assert!(!store.exists(), "a refused start must not create a store");
}

/// Folders from before the `store-id` marker: a 0-byte store next to a key file is refused; a
/// key file alone (e.g. after `--fixtures`) is no evidence of a store, so a store is created.
#[test]
fn folders_without_a_marker() {
    let data = TempDir::new("dmg-legacy");
    let run = serve_once(data.path(), &["--fixtures"], false);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(data.path().join("sealing-keys").exists());
    std::fs::write(data.path().join(STORE), b"").unwrap();
    let run = serve_once(data.path(), &[], false);
    assert_refused(
        &run,
        &["bookings.redb is empty", "sealing keys of an earlier run"],
    );
    std::fs::remove_file(data.path().join(STORE)).unwrap();
    let run = serve_once(data.path(), &[], false);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(data.path().join("store-id").exists());
}

/// A store replaced by another folder's: refused, since it is not the store this folder had.
#[test]
fn another_folders_store_is_refused() {
    let (a, b) = (TempDir::new("dmg-a"), TempDir::new("dmg-b"));
    fill(a.path(), 1, true);
    fill(b.path(), 2, true);
    std::fs::copy(a.path().join(STORE), b.path().join(STORE)).unwrap();
    let run = serve_once(b.path(), &[], true);
    assert_refused(&run, &["belongs to another data folder", "store-id"]);
}

/// A store whose folder's marker names another store since is refused at start, like any
/// store that is not the folder's.
#[test]
fn a_store_under_another_marker_is_refused_at_start() {
    let data = TempDir::new("dmg-marker");
    fill(data.path(), 1, true);
    std::fs::write(
        data.path().join("store-id"),
        format!("{}\n", "ab".repeat(16)),
    )
    .unwrap();
    let run = serve_once(data.path(), &[], false);
    assert_refused(&run, &["belongs to another data folder", "store-id"]);
    assert!(
        !data.path().join("sealing-keys").exists(),
        "refused before the keys"
    );
}

/// Damage that leaves the file's size and modification time as they were (bytes rewritten in
/// place, the time put back) is refused at start all the same: here it is the file's header,
/// which every start reads (no stamp of size or time decides what is read).
#[test]
fn damage_with_the_modification_time_put_back_is_refused_at_start() {
    let data = TempDir::new("dmg-in-place");
    fill(data.path(), 1, true);
    let store = data.path().join(STORE);
    let mtime = std::fs::metadata(&store).unwrap().modified().unwrap();
    {
        use std::io::Write as _;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&store)
            .unwrap();
        f.write_all(&[0xEE; PAGE]).unwrap();
        f.set_modified(mtime).unwrap();
    }
    let run = serve_once(data.path(), &[], true);
    assert_refused(
        &run,
        &["bookings.redb is damaged", "restore it from a copy"],
    );
}

#[test]
fn repair_of_an_intact_store_says_so_and_serves() {
    let data = TempDir::new("dmg-repair-ok");
    fill(data.path(), 3, true);
    let run = serve_once(data.path(), &["--repair"], true);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("passed redb's integrity check; nothing to repair"),
        "{}",
        run.stderr
    );
}

/// Asks to cancel `bk_<id>` without confirming: a read of that booking.
fn describe(id: u64) -> Value {
    tool_call(
        id,
        "cancel_booking",
        json!({"booking_id": format!("bk_{id}")}),
        true,
    )
}

#[test]
fn a_record_damaged_while_serving_gets_32603_and_serving_goes_on() {
    let data = TempDir::new("dmg-serving");
    fill(data.path(), 200, true);
    // A fresh server (nothing read yet), then the damage under it.
    let s = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
    assert!(garbage_over_records(&data.path().join(STORE)) > 0);
    let mut c = s.tcp_client();
    let mut errors = 0;
    for id in [1, 100, 200] {
        c.send(&describe(id));
        let line = c
            .try_recv_line(ANSWER)
            .unwrap_or_else(|_| panic!("no answer for bk_{id}; stderr:\n{}", s.stderr()))
            .expect("connection closed");
        let r: Value = serde_json::from_slice(&line).expect("JSON");
        assert_eq!(r["id"], id, "{r}");
        if r["error"]["code"] == -32603 {
            errors += 1;
            assert!(
                r["error"]["message"].as_str().unwrap().contains("damaged"),
                "{r}"
            );
        }
    }
    assert_eq!(errors, 3, "every read of a damaged page fails");
    // A booking touches the store too: an error, not a second booking of a slot.
    let r = c.request(&book(0));
    assert_eq!(r["error"]["code"], -32603, "{r}");
    // What needs no store still works.
    let r = c.request(&discover(7));
    assert!(r["result"].is_object(), "{r}");
    assert!(s.wait_stderr("bookings.redb is damaged"), "{}", s.stderr());
    assert!(!s.stderr().contains("panicked at"), "{}", s.stderr());
}

/// A request that panics inside the engine (injected in test builds with
/// `REDMARK_TEST_PANIC=<method>`) gets `-32603` with its id on stdio, TCP and HTTP, and the
/// next request is served.
#[test]
fn a_panicking_request_is_answered_on_stdio_tcp_and_http() {
    let data = TempDir::new("panic-all");
    let mut s = Server::start_with(
        &["--stdio", "--tcp", "127.0.0.1:0", "--http", "127.0.0.1:0"],
        data.path(),
        &[
            ("REDMARK_KEY", TEST_KEY),
            ("REDMARK_TEST_PANIC", "tools/call"),
        ],
    );
    let call = |id: Value| {
        let mut m = tool_call(0, "list_rooms", json!({}), false);
        m["id"] = id;
        m
    };
    let check = |r: &Value, id: Value| {
        assert_eq!(r["id"], id, "{r}");
        assert_eq!(r["error"]["code"], -32603, "{r}");
    };
    let mut tcp = s.tcp_client();
    tcp.send(&call(json!(11)));
    let line = tcp.try_recv_line(ANSWER).expect("tcp answer").unwrap();
    check(&serde_json::from_slice(&line).unwrap(), json!(11));
    assert!(tcp.request(&discover(12))["result"].is_object());

    let mut stdio = s.stdio();
    stdio.send(&call(json!("s-1")));
    let line = stdio.try_recv_line(ANSWER).expect("stdio answer").unwrap();
    check(&serde_json::from_slice(&line).unwrap(), json!("s-1"));
    assert!(stdio.request(&discover(13))["result"].is_object());

    let r = post_mcp(s.http[0], &call(json!(14)), &[]);
    assert_eq!(r.status, 500);
    assert_eq!(r.header("content-type"), Some("application/json"));
    check(&r.json(), json!(14));
    let r = post_mcp(s.http[0], &discover(15), &[]);
    assert_eq!(r.status, 200, "{:?}", String::from_utf8_lossy(&r.body));
    assert!(s.wait_stderr("REDMARK_TEST_PANIC"), "{}", s.stderr());
}
