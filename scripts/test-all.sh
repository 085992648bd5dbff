#!/usr/bin/env bash
# The one command that passes all tests on a fresh machine; CI (.ci/run) runs exactly this.
# It installs what it needs: bare-metal Rust targets, llvm-tools, qemu-system-arm, postgresql
# (the server binaries; tests start their own throwaway clusters), chromium and chromedriver
# (scripts/browser.sh, for the booking page's browser tests), the Windows and Apple Rust targets
# with mingw-w64 and Wine (scripts/cross.sh), and (inside scripts/conformance.sh) Node 22 with
# the official MCP conformance suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# One build from a clean clone: an incremental cache would never be read again, and it took
# as much disk as the build itself.
export CARGO_INCREMENTAL=0
step() { printf '\n==> %s\n' "$*"; }

step "toolchain: bare-metal targets and llvm-tools"
rustup target add thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabihf
rustup component add llvm-tools rustfmt clippy

step "qemu-system-arm"
if ! command -v qemu-system-arm >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-system-arm
fi
qemu-system-arm --version | head -n 1

step "postgresql (initdb, pg_ctl, pgbench: the PostgreSQL store tests start their own clusters)"
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql
fi

step "chromium and chromedriver (the booking page's browser tests)"
scripts/browser.sh

step "Windows and macOS: redmark.exe with mingw-w64, cargo check for Apple; Wine (scripts/cross.sh)"
scripts/cross.sh

step "formatting"
cargo fmt --all -- --check
for crate in flash-store panel panel-http lm3s6965evb microbit; do
    cargo fmt --check --manifest-path "boards/$crate/Cargo.toml"
done

step "layout (files under 600 lines, each saying its job, no import circle between files or folders)"
python3 scripts/check-layout.py --self-test
python3 scripts/check-layout.py

step "clippy (every target, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "clippy on the door panel's shared crate (boards/panel: the UART build and the networked one with its zone)"
(
    cd boards/panel
    export REDMARK_PANEL_ZONE=Europe/Berlin
    cargo clippy --locked --features dev-key --target thumbv6m-none-eabi -- -D warnings
    cargo clippy --locked --features dev-key,net,zone --target thumbv7m-none-eabi -- -D warnings
)

step "rustdoc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

step "core is no_std without alloc"
scripts/check-no-std.sh

step "the core with each of its features alone (clippy, warnings are errors)"
scripts/check-core-features.sh

step "2025-11-25 SDK peers (Python and TypeScript clients, pinned) for the dual-era tests"
scripts/legacy-peers.sh

step "Python MCP SDK 2.3 (a 2026-07-28 client, pinned) for the networked panel's and the OAuth tests"
scripts/sdk-peer.sh

step "OAuth test peers (oidc-provider on Node 22, Python SDK 2.3; pinned) for tests/tests/oauth.rs"
scripts/oauth-peer.sh

step "MCP Apps host peers (ext-apps host bridge 2.0.x, TypeScript SDK v2 client; pinned) for tests/tests/mcp_app.rs"
scripts/app-peer.sh

step "Python icalendar (pinned) for tests/tests/calendar_feed.rs"
scripts/ical-peer.sh

step "Radicale 3.9 and the Python caldav client (pinned) for tests/tests/caldav*.rs"
scripts/caldav-peer.sh

step "tests (unit, golden, property, end-to-end over every transport, QEMU, PostgreSQL, legacy SDK peers)"
# The panel, PostgreSQL, legacy-peer, browser, OAuth and Wine tests are ignored on a machine
# without QEMU, PostgreSQL, the peers, Chromium or Wine (tests/build.rs; the shell's PostgreSQL tests skip at
# run time); here they must run.
REDMARK_REQUIRE_PANEL=1 REDMARK_REQUIRE_PG=1 REDMARK_REQUIRE_LEGACY_PEERS=1 REDMARK_REQUIRE_BROWSER=1 \
    REDMARK_REQUIRE_OAUTH=1 REDMARK_REQUIRE_WINE=1 REDMARK_REQUIRE_APP_PEER=1 REDMARK_REQUIRE_ICAL=1 \
    REDMARK_REQUIRE_CALDAV=1 \
    cargo test --workspace --locked

step "the panel's flash store on the host (power cut at every write step)"
cargo test --locked --manifest-path boards/flash-store/Cargo.toml

step "the networked panel's HTTP request-head parser on the host"
cargo test --locked --manifest-path boards/panel-http/Cargo.toml

step "tests that need root (connecting to TCP as another user; a fake folder owner of another user)"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
    cargo test --locked -p redmark-tests --test serve_stream -- --ignored tcp_refuses_another_users_process
    cargo test --locked -p redmark-tests --test serve_folder_owner -- --ignored a_relay_refuses_an_owner_of_another_user
    cargo test --locked -p redmark-tests --test serve_http -- --ignored another_users_http_client_is_not_the_local_user
else
    echo "skipped: not root or no setpriv (tcp_refuses_another_users_process, a_relay_refuses_an_owner_of_another_user and another_users_http_client_is_not_the_local_user stay ignored)"
fi

step "fuzz smoke (every target in core/fuzz and shell/fuzz for a few seconds; skipped without nightly)"
scripts/fuzz.sh --smoke

step "benches compile"
cargo bench --workspace --locked --no-run --quiet

step "door-panel budgets (flash, static RAM, measured stack, heap)"
bench/panel-budget.sh --check

step "official MCP conformance suite"
scripts/conformance.sh

step "official MCP conformance suite against the networked door panel under QEMU"
REDMARK_REQUIRE_PANEL=1 cargo test --locked -p redmark-tests --test qemu_net -- --ignored --nocapture conformance

echo
echo "all checks passed"
