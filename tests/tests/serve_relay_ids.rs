//! A relay pairs its client's requests with the owner's answers by id as the owner reads the
//! ids (issue 40, item 5): a float id (`1.0`, which the core refuses and answers with id `null`)
//! and a line with two `id` keys (the core reads the first) each get exactly one answer, through
//! the owner, at a handover and across one; thousands of them leave nothing behind in the relay,
//! which keeps reading its client.

use std::io::Write;
use std::thread;
use std::time::Duration;

use redmark_tests::server::{discover, LineClient, Server, TempDir, WAIT};
use serde_json::{json, Value};

/// A request whose id is the float `1.0`: the core answers `-32600` with id `null`.
const FLOAT_ID: &str = r#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#;

/// A request with two `id` keys: the core reads the first, `first`.
fn two_ids(first: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":"{first}","id":"second","method":"ping"}}"#)
}

/// An owner on `data`, and a stdio server relaying to it.
fn owner_and_relay(data: &TempDir) -> (Server, Server) {
    let owner = Server::start_with(&[], data.path(), &[]);
    assert!(
        owner.wait_stderr("reach this one through"),
        "{}",
        owner.stderr()
    );
    let relay = relay_to(data);
    (owner, relay)
}

/// A stdio server on `data` that relays to the process owning it.
fn relay_to(data: &TempDir) -> Server {
    let relay = Server::start_with(&[], data.path(), &[]);
    assert!(
        relay.wait_stderr("passing this one's messages"),
        "{}",
        relay.stderr()
    );
    relay
}

fn send_line<R: std::io::Read + Send + 'static, W: Write>(c: &mut LineClient<R, W>, line: &str) {
    c.send_raw(format!("{line}\n").as_bytes()).expect("write");
}

/// Nothing more arrives for a moment (an extra answer would come at once).
fn nothing_more<R: std::io::Read + Send + 'static, W: Write>(c: &mut LineClient<R, W>) {
    if let Ok(Some(extra)) = c.try_recv_line(Duration::from_millis(500)) {
        panic!("a second answer: {}", String::from_utf8_lossy(&extra));
    }
}

#[test]
fn odd_ids_get_one_answer_each_through_a_relay_and_across_handovers() {
    let data = TempDir::new("relay-ids");
    let (mut owner, mut relay) = owner_and_relay(&data);
    let mut c = relay.stdio();
    send_line(&mut c, FLOAT_ID);
    let r = c.recv();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (Value::Null, json!(-32600)),
        "{r}"
    );
    send_line(&mut c, &two_ids("first"));
    let r = c.recv();
    assert_eq!(r["id"], "first", "the owner reads the first id: {r}");
    nothing_more(&mut c);

    // The owner goes: both were answered, so the relay has nothing to call lost.
    owner.kill9();
    assert!(
        relay.wait_stderr("this one serves it now"),
        "{}",
        relay.stderr()
    );
    let r = c.request(&discover(7));
    assert_eq!(r["id"], 7, "no second, contradictory answer first: {r}");
    nothing_more(&mut c);

    // A second relay whose owner (the first relay) stops with both lines in flight: each is
    // answered once, lost, with the id the owner would have answered with.
    let mut relay2 = relay_to(&data);
    let mut c2 = relay2.stdio();
    relay.signal("STOP");
    send_line(&mut c2, FLOAT_ID);
    send_line(&mut c2, &two_ids("first2"));
    thread::sleep(Duration::from_millis(200));
    relay.kill9();
    let lost: Vec<Value> = (0..2).map(|_| c2.recv()).collect();
    for l in &lost {
        assert_eq!(l["error"]["code"], -32603, "{l}");
    }
    assert_eq!(lost[0]["id"], Value::Null, "{}", lost[0]);
    assert_eq!(lost[1]["id"], "first2", "{}", lost[1]);
    assert!(
        relay2.wait_stderr("this one serves it now"),
        "{}",
        relay2.stderr()
    );
    let r = c2.request(&discover(8));
    assert_eq!(r["id"], 8, "{r}");
    nothing_more(&mut c2);
}

/// Requests the relay once read differently from the owner stayed "in flight" for ever; after
/// 4 096 of them it stopped reading its client.
#[test]
fn five_thousand_odd_ids_keep_the_relay_reading() {
    const LINES: usize = 5_000;
    let data = TempDir::new("relay-ids-many");
    let (_owner, mut relay) = owner_and_relay(&data);
    let (mut stdin, stdout) = relay.take_stdio();
    let writer = thread::spawn(move || {
        let mut blob = String::new();
        for i in 0..LINES {
            if i % 2 == 0 {
                blob.push_str(FLOAT_ID);
            } else {
                blob.push_str(&two_ids(&format!("n{i}")));
            }
            blob.push('\n');
        }
        stdin.write_all(blob.as_bytes()).expect("write");
        stdin
    });
    let mut c = LineClient::new(stdout, std::io::sink());
    let (mut nulls, mut named) = (0, 0);
    for i in 0..LINES {
        let line = match c.try_recv_line(WAIT) {
            Ok(Some(line)) => line,
            Ok(None) => panic!("the stream ended after {i} answers"),
            Err(_) => panic!("the relay stopped answering after {i} answers"),
        };
        let v: Value = serde_json::from_slice(&line).expect("json");
        match &v["id"] {
            Value::Null => nulls += 1,
            Value::String(s) if s.starts_with('n') => named += 1,
            _ => panic!("answer {i}: {v}"),
        }
    }
    assert_eq!((nulls, named), (LINES / 2, LINES / 2));
    let _stdin = writer.join().expect("writer");
}
