#!/usr/bin/env bash
# Checks that shell/link/hot-functions.txt (the functions the release build places first, see
# shell/build.rs) still names the release binary's functions. The list holds mangled names,
# which change with the toolchain and with the shell's dependencies; a stale list breaks
# nothing but gives back the resident memory it saved. Fails when it is stale for the rustc it
# was made with (run scripts/order-functions.py); says so and passes under another rustc.
set -euo pipefail
cd "$(dirname "$0")/.."
LIST=shell/link/hot-functions.txt
STAMP=shell/link/hot-functions.rustc
made_with=$(cat "$STAMP")
this=$(rustc -vV | sed -n 's/^release: //p')
if [[ $made_with != "$this" ]]; then
  echo "skipped: $LIST was made with rustc $made_with, this is $this (names differ by toolchain)"
  exit 0
fi
cargo build --quiet --release --locked -p redmark
listed=$(wc -l < "$LIST")
found=$(nm --defined-only target/release/redmark | awk '{print $3}' | sort -u \
  | comm -12 - <(sort -u "$LIST") | wc -l)
echo "$found of $listed listed functions are in target/release/redmark"
if ((found * 100 < listed * 98)); then
  echo "check-function-order: $LIST is stale (a dependency or the code changed):" \
    "run scripts/order-functions.py and commit what it writes" >&2
  exit 1
fi
