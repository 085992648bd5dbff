//! The host's time on a UART panel under QEMU (docs/panel.md "The UART panel's time"): what
//! an attacker on the line can try, each refused or bounded. One board: the code is the shared
//! panel's.
//!
//! Needs `qemu-system-arm` and the `thumbv7m-none-eabi` target; fails (does not skip) without
//! them. Every wait is bounded; every QEMU started is killed by its `Panel`.

use std::thread;
use std::time::Duration;

use redmark_tests::qemu::rpc::{book_exact, parse, rpc};
use redmark_tests::qemu::{
    firmware, time_answer, Build, Panel, LM3S6965EVB, TEST_TIME, TEST_TIME_KEY,
};

const CHALLENGE: &str = r#"{"jsonrpc":"2.0","id":"c","method":"redmark/timeChallenge"}"#;

fn boot() -> Panel {
    Panel::boot_on(LM3S6965EVB, &firmware(Build::STANDARD))
}

/// A fresh challenge's nonce.
fn challenge(p: &mut Panel) -> String {
    let r = parse(&p.exchange(CHALLENGE));
    let nonce = r["result"]["nonce"].as_str().unwrap_or_default().to_owned();
    assert_eq!(nonce.len(), 16, "{r}");
    nonce
}

/// The error message of an answer, failing the test if it was taken.
fn refused(line: &str) -> String {
    let r = parse(line);
    assert_eq!(r["error"]["code"], -32000, "{r}");
    r["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The clock an answer set, failing the test if it was refused.
fn taken(line: &str) -> u64 {
    let r = parse(line);
    r["result"]["clock"]
        .as_u64()
        .unwrap_or_else(|| panic!("time not taken: {r}"))
}

fn assert_no_time(p: &mut Panel, id: i64) {
    let r = rpc(p, id, &book_exact(id, "2026-09-22", 9, "nook"));
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("the panel has no time yet"), "{r}");
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn a_forged_tag_is_refused_and_spends_the_challenge() {
    let mut p = boot();
    let nonce = challenge(&mut p);
    // The right nonce and time, another key: an attacker without the time key.
    let forged = time_answer(&nonce, TEST_TIME, &"ab".repeat(32));
    assert_eq!(refused(&p.exchange(&forged)), "Time refused: bad tag");
    // One guess per challenge: even the right answer to it is refused now.
    let right = time_answer(&nonce, TEST_TIME, TEST_TIME_KEY);
    assert_eq!(
        refused(&p.exchange(&right)),
        "Time refused: no challenge outstanding"
    );
    // A tag that is not 64 hex digits.
    challenge(&mut p);
    let bad = r#"{"jsonrpc":"2.0","id":"t","method":"redmark/time","params":{"t":1788220800,"tag":"zz"}}"#;
    assert!(refused(&p.exchange(bad)).starts_with("Time refused: params"));
    assert_no_time(&mut p, 1);
    assert!(p
        .finish()
        .contains("clock: host time with a bad tag refused"));
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn a_replayed_or_unasked_or_late_answer_is_refused() {
    let mut p = boot();
    // No challenge asked: an answer (to a nonce made up) is refused.
    let unasked = time_answer("0011223344556677", TEST_TIME, TEST_TIME_KEY);
    assert_eq!(
        refused(&p.exchange(&unasked)),
        "Time refused: no challenge outstanding"
    );
    // Late: more than TIME_ANSWER_S (2 s) after its challenge.
    let nonce = challenge(&mut p);
    thread::sleep(Duration::from_millis(2500));
    let late = time_answer(&nonce, TEST_TIME, TEST_TIME_KEY);
    assert_eq!(
        refused(&p.exchange(&late)),
        "Time refused: the challenge has expired"
    );
    assert_no_time(&mut p, 1);
    // A time outside 2026-2099 is refused even with a good tag.
    let nonce = challenge(&mut p);
    let old = time_answer(&nonce, 1_600_000_000, TEST_TIME_KEY);
    assert_eq!(
        refused(&p.exchange(&old)),
        "Time refused: outside 2026-2099"
    );
    // Taken once; the same answer replayed: its nonce is spent, with or without a new
    // challenge outstanding.
    let nonce = challenge(&mut p);
    let answer = time_answer(&nonce, TEST_TIME, TEST_TIME_KEY);
    assert!(taken(&p.exchange(&answer)) >= TEST_TIME);
    assert_eq!(
        refused(&p.exchange(&answer)),
        "Time refused: no challenge outstanding"
    );
    challenge(&mut p);
    assert_eq!(refused(&p.exchange(&answer)), "Time refused: bad tag");
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn a_time_behind_is_refused_and_one_far_ahead_moves_the_clock_4_s_only() {
    let mut p = boot();
    let set = taken(&p.tell_time(TEST_TIME));
    assert!((TEST_TIME..TEST_TIME + 2).contains(&set), "{set}");
    // At most one time per 16 s (MIN_GAP_S).
    assert_eq!(
        refused(&p.tell_time(TEST_TIME + 1)),
        "Time refused: one time per 16 s"
    );
    thread::sleep(Duration::from_millis(16_500));
    assert_eq!(
        refused(&p.tell_time(TEST_TIME - 3600)),
        "Time refused: behind the panel's clock"
    );
    // A day ahead: the clock moves MAX_STEP_S (4 s) past where it was, no more.
    let clock = taken(&p.tell_time(TEST_TIME + 86_400));
    assert!(
        (TEST_TIME + 16 + 4..TEST_TIME + 16 + 4 + 10).contains(&clock),
        "clock {clock}, set at {TEST_TIME}"
    );
    let err = p.finish();
    assert!(
        err.contains("clock: host time behind the clock refused"),
        "{err}"
    );
    assert!(
        err.contains("clock: host time too far ahead, stepped 4 s only"),
        "{err}"
    );
}
