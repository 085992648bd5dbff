//! The door-panel firmware under QEMU: build it once per configuration, boot it with its UART0
//! on a pipe, and talk newline-delimited JSON-RPC to it exactly as a stdio client would.
//!
//! Every wait is bounded, and a [`Panel`] kills its QEMU when dropped (also when a test
//! panics). A missing `qemu-system-arm` or Cortex-M target fails loudly: CI installs them.
//!
//! This file holds the boards, the test keys and where things are; the firmware builds are in
//! [`firmware`](mod@firmware), the UART panel in [`panel`], the JSON-RPC lines a test sends it in
//! [`rpc`], the networked panel in [`net`].

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub mod face;
pub mod firmware;
pub mod net;
pub mod panel;
pub mod rpc;
pub mod sdk;

pub use firmware::{
    cargo_firmware, firmware, firmware_with_sntp, firmware_with_sntp_in_zone, Build,
};
pub use panel::{stack_high_water, Panel};
pub use rpc::time_answer;

/// A QEMU board and its firmware crate (`boards/<name>`, QEMU machine `<name>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    /// The crate's folder under `boards/` and QEMU's `-M` machine.
    pub name: &'static str,
    /// The firmware's Rust target.
    pub target: &'static str,
}

/// TI LM3S6965 (Cortex-M3): flash under QEMU is SRAM standing in for it (see its README).
pub const LM3S6965EVB: Board = Board {
    name: "lm3s6965evb",
    target: "thumbv7m-none-eabi",
};
/// BBC micro:bit, nRF51822 (Cortex-M0, 16 KiB RAM): flash through the emulated NVMC.
pub const MICROBIT: Board = Board {
    name: "microbit",
    target: "thumbv6m-none-eabi",
};
/// Every board.
pub const BOARDS: [Board; 2] = [LM3S6965EVB, MICROBIT];

/// The first board's machine (what single-board tests drive).
pub const BOARD: &str = LM3S6965EVB.name;
/// The first board's Rust target.
pub const TARGET: &str = LM3S6965EVB.target;
/// A fixed test key (not secret): 32 bytes of hex.
pub const TEST_KEY: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0";
/// A fixed test time key (`REDMARK_PANEL_TIME_KEY`, not secret): 32 bytes of hex.
pub const TEST_TIME_KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
/// The time a test tells a UART panel: 2026-09-01T00:00:00Z, before every day the tests book.
pub const TEST_TIME: u64 = 1_788_220_800;
/// Longest wait for one reply; generous because CI machines are slow, never a speed check.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The first board crate's folder.
pub fn board_dir() -> PathBuf {
    board_dir_of(LM3S6965EVB)
}

/// A board crate's folder.
pub fn board_dir_of(board: Board) -> PathBuf {
    repo_root().join("boards").join(board.name)
}

/// Fails the test with a clear message unless `qemu-system-arm` runs.
pub fn require_qemu() {
    match Command::new("qemu-system-arm").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "qemu-system-arm --version failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!(
            "qemu-system-arm is not installed ({e}); the panel tests need it:\n    \
             apt-get install -y --no-install-recommends qemu-system-arm\n\
             and the firmware target:\n    rustup target add {TARGET}"
        ),
    }
}
