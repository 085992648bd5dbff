#!/usr/bin/env bash
# The shell on other platforms: builds redmark.exe for x86_64-pc-windows-gnu (Debian's mingw-w64
# linker) and `cargo check`s it for aarch64-apple-darwin (HTTPS there is the system's TLS, so no
# C compiler for Apple is needed), warnings as errors. Installs what it needs: the two Rust
# targets, gcc-mingw-w64-x86-64, and Wine (wine, wine64) for tests/tests/wine.rs, which
# scripts/test-all.sh then runs with REDMARK_REQUIRE_WINE=1. Run from anywhere; uses sudo for
# apt-get only when not root.
set -euo pipefail
cd "$(dirname "$0")/.."

rustup target add x86_64-pc-windows-gnu aarch64-apple-darwin

need=()
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || need+=(gcc-mingw-w64-x86-64)
command -v wine >/dev/null 2>&1 || need+=(wine wine64)
if [ "${#need[@]}" -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
x86_64-w64-mingw32-gcc --version | head -n 1
wine --version

echo "cross: redmark.exe for x86_64-pc-windows-gnu"
RUSTFLAGS="-D warnings" cargo build --locked -p redmark --bin redmark --target x86_64-pc-windows-gnu

echo "cross: cargo check for aarch64-apple-darwin"
RUSTFLAGS="-D warnings" cargo check --locked -p redmark --target aarch64-apple-darwin
