//! One person, one identity on their own machine, in real headless Chromium: on a loopback
//! server without tokens the bookings `redmark call` made (through the serve's data folder, and
//! over `--url`) are the page's user's own and are cancelled there; with `--tokens` they are not
//! a token holder's.

#![cfg_attr(not(browser_tools), allow(dead_code, unused_imports))]

use redmark_tests::browser::Browser;
use redmark_tests::page::{wait_cell, wait_question, wait_says};
use redmark_tests::server::{post_mcp, redmark_bin, tool_call, Server, TempDir};
use serde_json::json;

/// The day the test books on: far enough ahead never to have started.
const DAY: &str = "2099-09-17";

/// Runs `redmark call` with `args` (`--data DIR`: through the data folder of the serve there;
/// or `--url`), answering nothing; its stdout.
fn redmark_call(args: &[&str]) -> String {
    let out = std::process::Command::new(redmark_bin())
        .arg("call")
        .args(["--no-input", "--timeout", "20"])
        .args(args)
        .output()
        .expect("run redmark call");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "redmark call {args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// One person, one identity on their own machine: on a loopback server without tokens, the
/// bookings `redmark call` made (through the serve's data folder, and over `--url`) are the
/// page's user's own, and cancelled there; on a server with tokens they are not.
#[test]
#[cfg_attr(not(browser_tools), ignore = "chromium/chromedriver are not installed")]
fn a_booking_made_by_redmark_call_is_yours_on_the_page_and_cancelled_there() {
    let data = TempDir::new("web-one-identity");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let addr = s.http[0];
    let day = format!("day={DAY}");
    let folder = data.path().to_str().unwrap();
    let said = redmark_call(&[
        "--data",
        folder,
        "book_room",
        &day,
        "start=09:30",
        "minutes=45",
        "room_id=nook",
    ]);
    assert!(said.contains("Booked The Nook"), "{said}");
    let url = format!("http://{addr}/mcp");
    let said = redmark_call(&[
        "--url",
        &url,
        "book_room",
        &day,
        "start=13:00",
        "room_id=atrium",
    ]);
    assert!(said.contains("Booked The Atrium"), "{said}");

    let b = Browser::start(1000, 1300);
    b.goto(&format!("http://{addr}/?day={DAY}"));
    wait_cell(&b, "nook", "09:30", "own");
    wait_cell(&b, "atrium", "13:00", "own");
    b.click(&b.find("td[data-room=nook][data-start='09:30'] button"));
    wait_question(&b, "confirm");
    b.click(&b.find("#ask button[data-action=accept]"));
    wait_says(
        &b,
        "status",
        "bk_1 (The Nook on Thursday 2099-09-17 at 09:30–10:15",
    );
    wait_cell(&b, "nook", "09:30", "free");
    let left = redmark_call(&["--data", folder, "list_bookings", &day]);
    assert!(
        !left.contains("bk_1") && left.contains("bk_2"),
        "cancelled on the page, for the terminal too: {left}"
    );
    drop(b);
    drop(s);

    // With tokens, the terminal's bookings are not a token holder's.
    let strict = TempDir::new("web-one-identity-tokens");
    let file = strict.path().join("tokens.toml");
    std::fs::write(&file, "alice = \"alice-token-0123456789\"\n").unwrap();
    let s = Server::start(
        &["--http", "127.0.0.1:0", "--tokens", file.to_str().unwrap()],
        strict.path(),
    );
    let folder = strict.path().to_str().unwrap();
    redmark_call(&[
        "--data",
        folder,
        "book_room",
        &day,
        "start=09:30",
        "room_id=nook",
    ]);
    let mine = post_mcp(
        s.http[0],
        &tool_call(1, "list_bookings", json!({"day": DAY}), true),
        &[("Authorization", "Bearer alice-token-0123456789")],
    );
    let text = mine.json()["result"]["content"][0]["text"].clone();
    assert_eq!(text, format!("You have no bookings on {DAY}."), "{text}");
}
