//! `redmark call` in a real pseudo-terminal: the form is drawn, arrow keys pick a room,
//! `n` (one key, no Enter) declines, Esc cancels, and a bad value is refused at the field
//! before anything is sent; and `redmark serve` started by hand says what it is doing.
//! Every wait is bounded by the session's expect timeout; the child is killed on drop.
//! `XDG_DATA_HOME` is a fresh directory per session: the in-process server's default data
//! folder is never the real user's.

mod client_support;

use std::process::Command;
use std::time::Duration;

use client_support::{bin, TempDir};
use expectrl::{Expect, Session};

const DOWN: &str = "\x1b[B";
const ENTER: &str = "\r";
const ESC: &str = "\x1b";

/// Runs `redmark ARGS` in a pty under `sh`, which prints `EXIT=<status>` when it ends, with
/// `XDG_DATA_HOME` in the returned directory (keep it alive as long as the session).
fn pty(args: &[&str]) -> (expectrl::session::OsSession, TempDir) {
    let home = TempDir::new("pty-xdg");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(r#""$0" "$@"; echo EXIT=$?"#)
        .arg(bin())
        .args(args);
    cmd.env("REDMARK_LOG", "warn")
        .env("TERM", "xterm-256color")
        .env("XDG_DATA_HOME", home.path())
        .env_remove("REDMARK_KEY")
        .env_remove("REDMARK_OLD_KEYS");
    let mut s = Session::spawn(cmd).expect("spawn in a pty");
    s.get_process_mut()
        .set_window_size(120, 40)
        .expect("window size");
    s.set_expect_timeout(Some(Duration::from_secs(30)));
    (s, home)
}

fn expect(s: &mut expectrl::session::OsSession, what: &str) {
    if let Err(e) = s.expect(what) {
        panic!("waiting for {what:?}: {e}");
    }
}

const BOOK: &[&str] = &[
    "call",
    "book_room",
    "day=2099-09-17",
    "hour=9",
    "room_hint=the big room",
];

#[test]
fn arrow_keys_pick_a_room() {
    let (mut s, _home) = pty(BOOK);
    expect(&mut s, "matches more than one room");
    expect(&mut s, "Answer it?");
    s.send(ENTER).unwrap();
    expect(&mut s, "The Atrium (24 seats)");
    expect(&mut s, "Studio B (12 seats)");
    s.send(DOWN).unwrap();
    s.send(ENTER).unwrap();
    expect(&mut s, "Booked Studio B");
    expect(&mut s, "EXIT=0");
}

/// An Enter typed before the prompt is up (so before raw mode: the line discipline turns it
/// into `\n`, which raw mode reads as Ctrl-J) still opens the form.
#[test]
fn an_enter_typed_early_opens_the_form() {
    let (mut s, _home) = pty(BOOK);
    s.send(ENTER).unwrap();
    expect(&mut s, "matches more than one room");
    expect(&mut s, "The Atrium (24 seats)");
    s.send(DOWN).unwrap();
    s.send(ENTER).unwrap();
    expect(&mut s, "Booked Studio B");
    expect(&mut s, "EXIT=0");
}

#[test]
fn n_alone_declines() {
    // One key, no Enter: the footer says `n` declines, so `n` declines.
    let (mut s, _home) = pty(BOOK);
    expect(&mut s, "Answer it?");
    s.send("n").unwrap();
    expect(&mut s, "Not booked: you declined");
    expect(&mut s, "EXIT=3");
}

#[test]
fn y_alone_opens_the_form() {
    let (mut s, _home) = pty(BOOK);
    expect(&mut s, "Answer it?");
    s.send("y").unwrap();
    expect(&mut s, "The Atrium (24 seats)");
    s.send(ENTER).unwrap();
    expect(&mut s, "Booked The Atrium");
    expect(&mut s, "EXIT=0");
}

#[test]
fn esc_at_answer_it_cancels() {
    let (mut s, _home) = pty(BOOK);
    expect(&mut s, "Answer it?");
    s.send(ESC).unwrap();
    expect(&mut s, "Cancelled: nothing was booked");
    expect(&mut s, "EXIT=4");
}

#[test]
fn esc_cancels() {
    let (mut s, _home) = pty(BOOK);
    expect(&mut s, "Answer it?");
    s.send(ENTER).unwrap();
    expect(&mut s, "The Atrium (24 seats)");
    s.send(ESC).unwrap();
    expect(&mut s, "Cancelled: nothing was booked");
    expect(&mut s, "EXIT=4");
}

#[test]
fn ctrl_c_at_the_form_cancels() {
    let (mut s, _home) = pty(BOOK);
    expect(&mut s, "Answer it?");
    s.send("\x03").unwrap();
    expect(&mut s, "Cancelled: nothing was booked");
    expect(&mut s, "EXIT=4");
}

#[test]
fn bad_values_are_refused_at_the_field() {
    // A scripted server asks for an integer 15..=240 and reports what it received.
    let script = r#"read -r l; printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"input_required\",\"inputRequests\":{\"q\":{\"method\":\"elicitation/create\",\"params\":{\"message\":\"How long?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"minutes\":{\"type\":\"integer\",\"title\":\"Minutes\",\"minimum\":15,\"maximum\":240,\"default\":30}},\"required\":[\"minutes\"]}}}}}}"; read -r l; case "$l" in *\"content\":{\"minutes\":45}*) t=got-45;; *) t=wrong;; esac; printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"resultType\":\"complete\",\"content\":[{\"type\":\"text\",\"text\":\"$t\"}]}}""#;
    let server = format!("sh -c '{script}'");
    let (mut s, _home) = pty(&["call", "--stdio", &server, "t"]);
    expect(&mut s, "How long?");
    expect(&mut s, "Answer it?");
    s.send(ENTER).unwrap();
    expect(&mut s, "Minutes");
    // The default 30 is prefilled: erase it, type 5, and the field says no.
    s.send("\x7f\x7f5").unwrap();
    s.send(ENTER).unwrap();
    expect(&mut s, "must be at least 15");
    s.send("\x7f45").unwrap();
    s.send(ENTER).unwrap();
    expect(&mut s, "got-45");
    expect(&mut s, "EXIT=0");
}

#[test]
fn every_field_kind_in_one_form() {
    // A scripted server asks for text (email), a number, a yes/no, a multi-select and an
    // optional note, then reports whether the content it got is exactly what was typed.
    let form = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"f":{"method":"elicitation/create","params":{"mode":"form","message":"Tell me everything","requestedSchema":{"type":"object","properties":{"email":{"type":"string","title":"Email","format":"email"},"share":{"type":"number","title":"Share","minimum":0,"maximum":1},"notify":{"type":"boolean","title":"Notify","default":true},"tags":{"type":"array","title":"Tags","items":{"type":"string","enum":["red","green","blue"]},"maxItems":2,"default":["red"]},"note":{"type":"string","title":"Note"}},"required":["email","tags"]}}}}}}"#;
    let want = r#""inputResponses":{"f":{"action":"accept","content":{"email":"a@b.example","share":0.5,"notify":false,"tags":["red","green"]}}}"#;
    let dir = client_support::TempDir::new("pty-form");
    let path = dir.path().join("server.sh");
    let reply = |t: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"result":{{"resultType":"complete","content":[{{"type":"text","text":"{t}"}}]}}}}"#
        )
    };
    let script = format!(
        "read -r l; printf '%s\\n' '{form}'\nread -r l\ncase \"$l\" in *'{want}'*) printf '%s\\n' '{ok}';; *) printf '%s\\n' '{bad}';; esac\n",
        ok = reply("all-fields-ok"),
        bad = reply("content-differs"),
    );
    std::fs::write(&path, script).unwrap();
    let server = format!("sh {}", path.display());
    let (mut s, _home) = pty(&["call", "--stdio", &server, "t"]);
    expect(&mut s, "Tell me everything");
    expect(&mut s, "Answer it?");
    s.send(ENTER).unwrap();
    expect(&mut s, "Email");
    s.send("bad").unwrap();
    s.send(ENTER).unwrap();
    expect(&mut s, "not a valid email");
    s.send("\x7f\x7f\x7fa@b.example").unwrap();
    s.send(ENTER).unwrap();
    expect(&mut s, "Share");
    s.send("0.5").unwrap();
    s.send(ENTER).unwrap();
    expect(&mut s, "Notify");
    s.send("n").unwrap();
    s.send(ENTER).unwrap();
    expect(&mut s, "Tags");
    // red is preselected; add green and blue: three is one too many.
    s.send(DOWN).unwrap();
    s.send(" ").unwrap();
    s.send(DOWN).unwrap();
    s.send(" ").unwrap();
    s.send(ENTER).unwrap();
    expect(&mut s, "pick at most 2");
    s.send(" ").unwrap();
    s.send(ENTER).unwrap();
    expect(&mut s, "Note");
    s.send(ENTER).unwrap();
    expect(&mut s, "all-fields-ok");
    expect(&mut s, "EXIT=0");
}

#[test]
fn serve_in_a_terminal_says_what_it_is_and_how_to_stop() {
    let data = TempDir::new("pty-serve");
    let d = data.path().to_str().unwrap();
    let (mut s, _home) = pty(&["serve", "--data", d]);
    expect(&mut s, &format!("data folder {d}"));
    expect(&mut s, "on stdin/stdout");
    expect(&mut s, "Ctrl-D");
    // Ctrl-D at the start of a line: end of input, the server stops.
    s.send("\x04").unwrap();
    expect(&mut s, "EXIT=0");
}
