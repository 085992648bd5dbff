//! Finds out whether this machine can run the door-panel tests (`qemu-system-arm` and the
//! Cortex-M targets the firmware builds for) and sets `cfg(panel_tools)` when it can. Without
//! them the panel tests are reported as ignored, with the reason, instead of failing a plain
//! `cargo test` on a machine that has only Rust. `REDMARK_REQUIRE_PANEL=1` (set by
//! `scripts/test-all.sh`) turns a missing tool into a build error, so CI cannot skip them.
//! Likewise `cfg(pg_tools)` for the PostgreSQL tests (`src/pg_tools.rs`, `REDMARK_REQUIRE_PG`),
//! `cfg(legacy_peers)` for the 2025-11-25 SDK peers (`REDMARK_REQUIRE_LEGACY_PEERS`),
//! `cfg(browser_tools)` for the booking page's Chromium tests (`src/browser_tools.rs`,
//! `REDMARK_REQUIRE_BROWSER`), and `cfg(oauth_peer)` for the authorization server and SDK 2.3
//! client (`REDMARK_REQUIRE_OAUTH`), `cfg(app_peer)` for the MCP Apps host bridge
//! (`REDMARK_REQUIRE_APP_PEER`), and `cfg(wine_tools)` for the Windows build under Wine
//! (`src/wine_tools.rs`, `REDMARK_REQUIRE_WINE`).

use std::path::PathBuf;
use std::process::Command;

/// The targets the panel tests build firmware for.
const TARGETS: &[&str] = &["thumbv6m-none-eabi", "thumbv7m-none-eabi"];

include!("src/pg_tools.rs");
include!("src/browser_tools.rs");
include!("src/wine_tools.rs");

fn main() {
    legacy_peers();
    oauth_peer();
    app_peer();
    emit_pg_cfg("src/pg_tools.rs");
    emit_browser_cfg("src/browser_tools.rs");
    emit_wine_cfg("src/wine_tools.rs");
    println!("cargo::rustc-check-cfg=cfg(panel_tools)");
    println!("cargo::rerun-if-env-changed=REDMARK_REQUIRE_PANEL");
    println!("cargo::rerun-if-env-changed=PATH");
    // Re-check when the QEMU binary found on PATH changes. Only a path that exists is named:
    // Cargo takes a missing one as changed and would rerun this script on every build.
    if let Some(qemu) = on_path("qemu-system-arm") {
        println!("cargo::rerun-if-changed={}", qemu.display());
    }
    let missing = missing_tools();
    if missing.is_empty() {
        println!("cargo::rustc-cfg=panel_tools");
    } else if std::env::var_os("REDMARK_REQUIRE_PANEL").is_some_and(|v| v == "1") {
        panic!(
            "REDMARK_REQUIRE_PANEL=1 but the panel tests cannot run: missing {}",
            missing.join(", ")
        );
    } else {
        println!(
            "cargo::warning=panel tests will be ignored: missing {} (scripts/test-all.sh installs them)",
            missing.join(", ")
        );
    }
}

/// The first file named `name` in a `PATH` directory.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|f| f.is_file())
}

/// What the panel tests need that this machine lacks.
fn missing_tools() -> Vec<String> {
    let mut missing = Vec::new();
    let qemu = Command::new("qemu-system-arm").arg("--version").output();
    if !qemu.is_ok_and(|o| o.status.success()) {
        missing.push("qemu-system-arm".to_owned());
    }
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    for t in TARGETS {
        if !installed.lines().any(|l| l.trim() == *t) {
            missing.push(format!("rustup target {t}"));
        }
    }
    missing
}

/// Sets `cfg(legacy_peers)` when `scripts/legacy-peers.sh` has installed the 2025-11-25 SDK
/// clients under `target/legacy-peers/` (`REDMARK_LEGACY_PEERS` names another folder);
/// `REDMARK_REQUIRE_LEGACY_PEERS=1` (set by `scripts/test-all.sh`) makes their absence an error.
fn legacy_peers() {
    println!("cargo::rustc-check-cfg=cfg(legacy_peers)");
    println!("cargo::rerun-if-env-changed=REDMARK_REQUIRE_LEGACY_PEERS");
    println!("cargo::rerun-if-env-changed=REDMARK_LEGACY_PEERS");
    let dir = std::env::var_os("REDMARK_LEGACY_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/legacy-peers")
        });
    let need = [
        dir.join("venv/bin/python"),
        dir.join("node/node_modules/@modelcontextprotocol/sdk/package.json"),
    ];
    for f in &need {
        if f.exists() {
            println!("cargo::rerun-if-changed={}", f.display());
        }
    }
    // Only a path that exists is named (a missing one would rerun this script every build).
    if dir.exists() {
        println!("cargo::rerun-if-changed={}", dir.display());
    }
    let missing: Vec<String> = need
        .iter()
        .filter(|f| !f.exists())
        .map(|f| f.display().to_string())
        .collect();
    if missing.is_empty() {
        println!("cargo::rustc-cfg=legacy_peers");
        println!(
            "cargo::rustc-env=REDMARK_LEGACY_PEERS_DIR={}",
            dir.display()
        );
    } else if std::env::var_os("REDMARK_REQUIRE_LEGACY_PEERS").is_some_and(|v| v == "1") {
        panic!(
            "REDMARK_REQUIRE_LEGACY_PEERS=1 but the legacy SDK peers are missing: {} (run scripts/legacy-peers.sh)",
            missing.join(", ")
        );
    } else {
        println!(
            "cargo::warning=legacy SDK peer tests will be ignored: run scripts/legacy-peers.sh (scripts/test-all.sh does)"
        );
    }
}

/// Sets `cfg(oauth_peer)` when `scripts/oauth-peer.sh` has installed oidc-provider, its Node
/// under `target/oauth-peer/` and the Python SDK 2.3 under `target/sdk-peers/`; `REDMARK_REQUIRE_OAUTH=1` (set by
/// `scripts/test-all.sh`) makes their absence an error.
fn oauth_peer() {
    println!("cargo::rustc-check-cfg=cfg(oauth_peer)");
    println!("cargo::rerun-if-env-changed=REDMARK_REQUIRE_OAUTH");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/oauth-peer");
    let need = [
        dir.join("node_modules/oidc-provider/package.json"),
        dir.join("node_modules/.bin/node"),
        dir.join("../sdk-peers/venv/bin/python"),
    ];
    for f in need.iter().filter(|f| f.exists()) {
        println!("cargo::rerun-if-changed={}", f.display());
    }
    if dir.exists() {
        println!("cargo::rerun-if-changed={}", dir.display());
    }
    let missing: Vec<String> = need
        .iter()
        .filter(|f| !f.exists())
        .map(|f| f.display().to_string())
        .collect();
    if missing.is_empty() {
        println!("cargo::rustc-cfg=oauth_peer");
        println!("cargo::rustc-env=REDMARK_OAUTH_PEER_DIR={}", dir.display());
    } else if std::env::var_os("REDMARK_REQUIRE_OAUTH").is_some_and(|v| v == "1") {
        panic!(
            "REDMARK_REQUIRE_OAUTH=1 but the OAuth test peers are missing: {} (run scripts/oauth-peer.sh)",
            missing.join(", ")
        );
    } else {
        println!(
            "cargo::warning=OAuth tests will be ignored: run scripts/oauth-peer.sh (scripts/test-all.sh does)"
        );
    }
}

/// Sets `cfg(app_peer)` when `scripts/app-peer.sh` has installed the MCP Apps host bridge and
/// the SDK v2 client under `target/app-peer/`; `REDMARK_REQUIRE_APP_PEER=1` (set by
/// `scripts/test-all.sh`) makes their absence an error.
fn app_peer() {
    println!("cargo::rustc-check-cfg=cfg(app_peer)");
    println!("cargo::rerun-if-env-changed=REDMARK_REQUIRE_APP_PEER");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/app-peer");
    let need = dir.join("node_modules/@modelcontextprotocol/ext-apps/package.json");
    if need.exists() {
        println!("cargo::rerun-if-changed={}", need.display());
        println!("cargo::rustc-cfg=app_peer");
        println!("cargo::rustc-env=REDMARK_APP_PEER_DIR={}", dir.display());
    } else if std::env::var_os("REDMARK_REQUIRE_APP_PEER").is_some_and(|v| v == "1") {
        panic!(
            "REDMARK_REQUIRE_APP_PEER=1 but the MCP Apps host peer is missing: {} (run scripts/app-peer.sh)",
            need.display()
        );
    } else {
        if dir.exists() {
            println!("cargo::rerun-if-changed={}", dir.display());
        }
        println!(
            "cargo::warning=MCP App browser tests will be ignored: run scripts/app-peer.sh (scripts/test-all.sh does)"
        );
    }
}
