//! `redmark call --stdio "qemu-system-arm … -kernel <elf>"`: the client books through the
//! door-panel firmware under QEMU, non-interactively, answering the red mark with `--answer`.
//! Needs `qemu-system-arm` and the `thumbv7m-none-eabi` target; fails (does not skip) without
//! them. The client owns QEMU (closes its UART, then kills it); every run is bounded.

mod client_support;

use client_support::{cat, redmark, Trace};
use redmark_tests::qemu::{
    firmware, repo_root, require_qemu, Build, BOARD, TEST_TIME, TEST_TIME_KEY,
};

/// The command line that boots the panel with its UART0 on stdio, told the time first by
/// `tests/src/qemu/with_time.py` as its host would.
fn qemu_command() -> String {
    require_qemu();
    let elf = firmware(Build::STANDARD);
    let with_time = repo_root().join("tests/src/qemu/with_time.py");
    format!(
        "python3 '{}' {TEST_TIME_KEY} {TEST_TIME} -- \
         qemu-system-arm -M {BOARD} -display none -serial stdio -monitor none \
         -semihosting-config enable=on,target=native -kernel '{}'",
        with_time.display(),
        elf.display()
    )
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn books_through_the_panel_under_qemu() {
    let qemu = qemu_command();
    let args = [
        "book_room",
        "day=2099-09-17",
        "hour=9",
        "room_hint=the big room",
    ];
    let out = redmark(&cat(&[
        &[
            "call",
            "--trace",
            "--stdio",
            &qemu,
            "--answer",
            "room.room_id=atrium",
        ],
        &args,
    ]));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Booked The Atrium"), "{out:?}");
    let t = Trace::parse(&out.stderr);
    assert_eq!(t.sent.len(), 2, "one question, one retry: {}", out.stderr);
    assert_eq!(t.received[0].1["result"]["resultType"], "input_required");
    assert_eq!(
        t.received[1].1["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "redmark-panel",
        "{}",
        out.stderr
    );

    let out = redmark(&cat(&[
        &["call", "--stdio", &qemu, "--decline", "room"],
        &args,
    ]));
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.stdout.contains("Not booked"), "{out:?}");

    let out = redmark(&cat(&[&["tools", "--json", "--stdio", &qemu]]));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("\"book_room\""), "{out:?}");
}
