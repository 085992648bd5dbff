//! Two-way CalDAV against a real server: `redmark serve --caldav` with a throwaway Radicale 3.9 per test, read and written by the Python `caldav` client (scripts/caldav-peer.sh): bookings appear in the room's collection, events others put there hold their slot, a conflict ends with one holder and the other event marked cancelled with the reason, a cancelled booking leaves.

mod caldav_support;

use std::process::Command;

use caldav_support::{
    book, booked_in, cancel, day, find, python, serve, uid_of, until, Radicale, SYNCED_WITHIN,
};
use redmark_tests::server::{redmark_bin, run_bounded, TempDir};
use serde_json::Value;

/// (1) A booking made with `redmark call` appears in the room's collection (made by redmark,
/// named after the room) with its title and its local start on the floor's clock.
#[test]
fn a_booking_made_with_redmark_call_appears_in_radicale() {
    let Some(py) = python() else { return };
    let dir = TempDir::new("caldav-call");
    let radicale = Radicale::start(&py, dir.path());
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let s = serve(&data, &radicale, &[]);
    let d = day(3);
    let mut cmd = Command::new(redmark_bin());
    cmd.args(["call", "--json", "--no-input", "--url"])
        .arg(format!("http://{}/mcp", s.http[0]))
        .args([
            "book_room",
            &format!("day={d}"),
            "start=10:00",
            "minutes=60",
            "room_id=atrium",
            "title=Design review; Q3, \"final\"",
        ]);
    let run = run_bounded(cmd);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result: Value = serde_json::from_str(&run.stdout).expect("call --json");
    let id = booked_in(&result, "atrium").expect("booked");
    let event = until(SYNCED_WITHIN, || {
        find(&radicale.events("atrium"), &uid_of(&id)).cloned()
    })
    .unwrap_or_else(|| panic!("{id} never reached Radicale; redmark:\n{}", s.stderr()));
    assert_eq!(event["summary"], "Design review; Q3, \"final\"");
    assert_eq!(event["tzid"], "Europe/Berlin");
    let start = event["start"].as_str().unwrap();
    assert!(start.starts_with(&format!("{d}T10:00:00+0")), "{start}");
    assert_eq!(event["status"], "CONFIRMED");
    assert_eq!(radicale.list("atrium")["name"], "The Atrium");
    assert_eq!(radicale.list("nook")["name"], "The Nook");
}

/// (2) An event put into a room's collection by a CalDAV client holds its slot in redmark
/// within 10 s: booking it is refused there (another room or time is offered instead), and
/// deleting the event frees it again.
#[test]
fn an_event_put_by_a_caldav_client_blocks_its_slot_within_10_s() {
    let Some(py) = python() else { return };
    let dir = TempDir::new("caldav-inbound");
    let radicale = Radicale::start(&py, dir.path());
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let s = serve(&data, &radicale, &[]);
    let addr = s.http[0];
    let d = day(4);
    // The collection exists once redmark made it.
    caldav_support::made(&radicale, "atrium");
    radicale.add(
        "atrium",
        "standup-1@example.org",
        &format!("{d}T11:00"),
        &format!("{d}T12:00"),
        "Standup (from Thunderbird)",
    );
    // Within 10 s the slot is held: the log says so, and booking it is refused.
    let held = until(SYNCED_WITHIN, || {
        s.stderr().contains("held=1").then_some(())
    });
    assert!(held.is_some(), "not held within 10 s:\n{}", s.stderr());
    let r = book(addr, "atrium", &d, "11:30", 30, "Mine");
    assert_eq!(booked_in(&r, "atrium"), None, "{r}");
    let said = r.to_string();
    assert!(said.contains("Standup (from Thunderbird)"), "{said}");
    // Deleted in the calendar: the slot is free again.
    radicale.delete("atrium", "standup-1@example.org");
    let freed = until(SYNCED_WITHIN, || {
        s.stderr().contains("released=1").then_some(())
    });
    assert!(freed.is_some(), "{}", s.stderr());
    let r = book(addr, "atrium", &d, "11:30", 30, "Mine");
    assert!(booked_in(&r, "atrium").is_some(), "{r}");
}

/// (3) A race: a booking and an event for the same slot at once end with one holder; when
/// redmark acknowledged the booking, the event is marked cancelled with the reason (never
/// dropped), and the booking keeps the room.
#[test]
fn a_race_ends_with_one_holder_and_the_other_event_marked_cancelled() {
    let Some(py) = python() else { return };
    let dir = TempDir::new("caldav-race");
    let radicale = Radicale::start(&py, dir.path());
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let s = serve(&data, &radicale, &[]);
    let addr = s.http[0];
    let d = day(5);
    caldav_support::made(&radicale, "atrium");
    // Both at once.
    let (start, end) = (format!("{d}T14:00"), format!("{d}T15:00"));
    let booking = std::thread::scope(|t| {
        let remote = t.spawn(|| radicale.add("atrium", "race@example.org", &start, &end, "Theirs"));
        let r = book(addr, "atrium", &d, "14:00", 60, "Ours");
        remote.join().unwrap();
        booked_in(&r, "atrium")
    });
    // Settled: exactly one holder.
    let settled = until(SYNCED_WITHIN, || {
        let events = radicale.events("atrium");
        let theirs = find(&events, "race@example.org")?.clone();
        match &booking {
            // Ours was acknowledged: theirs is refused, ours is written.
            Some(id) => {
                find(&events, &uid_of(id))?;
                (theirs["status"] == "CANCELLED").then_some(theirs)
            }
            // Theirs was first: it stands.
            None => (theirs["status"] != "CANCELLED").then_some(theirs),
        }
    });
    let theirs = settled.unwrap_or_else(|| {
        panic!(
            "not settled: {:?}\n{}",
            radicale.events("atrium"),
            s.stderr()
        )
    });
    if booking.is_some() {
        let why = theirs["comment"].as_str().unwrap();
        assert!(
            why.starts_with("Not booked: The Atrium is booked from"),
            "{why}"
        );
    }
    // The same again in order: acknowledged first, then the event: always refused.
    let r = book(addr, "atrium", &d, "16:00", 60, "Acknowledged");
    let id = booked_in(&r, "atrium").expect("booked");
    radicale.add(
        "atrium",
        "late@example.org",
        &format!("{d}T16:30"),
        &format!("{d}T17:30"),
        "Too late",
    );
    let refused = until(SYNCED_WITHIN, || {
        let e = find(&radicale.events("atrium"), "late@example.org")?.clone();
        (e["status"] == "CANCELLED").then_some(e)
    })
    .unwrap_or_else(|| panic!("not refused: {}", s.stderr()));
    let why = refused["comment"].as_str().unwrap();
    assert!(
        why.contains("The Atrium is booked from") && why.contains("Europe/Berlin"),
        "{why}"
    );
    assert!(find(&radicale.events("atrium"), &uid_of(&id)).is_some());
    // redmark still has the booking: the slot stays refused to others.
    let r = book(addr, "atrium", &d, "16:00", 60, "Again");
    assert_eq!(booked_in(&r, "atrium"), None, "{r}");
}

/// (6) A cancelled booking leaves the collection.
#[test]
fn a_cancelled_booking_leaves_the_collection() {
    let Some(py) = python() else { return };
    let dir = TempDir::new("caldav-cancel");
    let radicale = Radicale::start(&py, dir.path());
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let s = serve(&data, &radicale, &[]);
    let addr = s.http[0];
    let d = day(6);
    let keep = booked_in(&book(addr, "nook", &d, "09:00", 30, "Keep"), "nook").unwrap();
    let gone = booked_in(&book(addr, "nook", &d, "10:00", 30, "Gone"), "nook").unwrap();
    until(SYNCED_WITHIN, || {
        let events = radicale.events("nook");
        (find(&events, &uid_of(&keep)).is_some() && find(&events, &uid_of(&gone)).is_some())
            .then_some(())
    })
    .unwrap_or_else(|| panic!("not written: {}", s.stderr()));
    cancel(addr, &gone);
    until(SYNCED_WITHIN, || {
        find(&radicale.events("nook"), &uid_of(&gone))
            .is_none()
            .then_some(())
    })
    .unwrap_or_else(|| panic!("still there: {}", s.stderr()));
    assert!(find(&radicale.events("nook"), &uid_of(&keep)).is_some());
}

/// (7) An event of redmark's retitled in a calendar app (its marker kept, as apps keep unknown
/// properties) is written back as its booking says: redmark is the authority for its rooms.
#[test]
fn an_event_of_ours_edited_in_a_calendar_is_written_back() {
    let Some(py) = python() else { return };
    let dir = TempDir::new("caldav-edit");
    let radicale = Radicale::start(&py, dir.path());
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let s = serve(&data, &radicale, &[]);
    let id = booked_in(
        &book(s.http[0], "nook", &day(5), "11:00", 30, "Retro"),
        "nook",
    )
    .unwrap();
    let summary = |want: &str| {
        let events = radicale.events("nook");
        let ev = find(&events, &uid_of(&id))?;
        (ev["summary"] == want).then(|| ev["uid"].as_str().unwrap_or_default().to_owned())
    };
    let uid = until(SYNCED_WITHIN, || summary("Retro"))
        .unwrap_or_else(|| panic!("not written: {}", s.stderr()));
    radicale.retitle("nook", &uid, "Hijacked");
    until(SYNCED_WITHIN, || summary("Retro"))
        .unwrap_or_else(|| panic!("the edit stayed: {}", s.stderr()));
}

/// `redmark serve --help` explains the flags; a credentials file others may read, or a URL
/// that is not HTTP, is refused at start with the reason and without the password (no
/// server needed).
#[test]
fn caldav_flags_are_explained_and_a_readable_credentials_file_is_refused() {
    let serve = |args: &[&str]| {
        let mut cmd = Command::new(redmark_bin());
        cmd.arg("serve").args(args);
        run_bounded(cmd)
    };
    let help = serve(&["--help"]);
    assert_eq!(help.code, 0);
    for said in [
        "--caldav <URL>",
        "--caldav-credentials <FILE>",
        "user:password",
    ] {
        assert!(help.stdout.contains(said), "{said}:\n{}", help.stdout);
    }
    let dir = TempDir::new("caldav-flags");
    let cred = dir.path().join("cred");
    std::fs::write(&cred, "redmark:do-not-print-me\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cred, std::fs::Permissions::from_mode(0o644)).unwrap();
        let data = dir.path().join("data");
        let run = serve(&[
            "--data",
            data.to_str().unwrap(),
            "--caldav",
            "http://127.0.0.1:9/rooms/",
            "--caldav-credentials",
            cred.to_str().unwrap(),
        ]);
        assert_ne!(run.code, 0);
        assert!(run.stderr.contains("chmod 600"), "{}", run.stderr);
        assert!(!run.stderr.contains("do-not-print-me"));
        assert!(!data.exists(), "refused before the data folder is made");
    }
    let data = dir.path().join("data2");
    let data = data.to_str().unwrap();
    let run = serve(&["--data", data, "--caldav", "ftp://example.org/rooms/"]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("http:// or https://"), "{}", run.stderr);
}
