#!/usr/bin/env bash
# Issue 12's benchmark: redmark's stdio request path against the machine's ceiling (a canned
# stub answering with redmark's own bytes) and against rmcp 3.11 with the same tools; then
# redmark's TCP, HTTP and durable-booking figures. Prints one table with redmark ÷ stub,
# redmark ÷ rmcp and PASS/MISS against the issue's targets.
#
#   bench/compare.sh            full counts (200 000 pipelined, 10 s stalled reader; minutes)
#   bench/compare.sh --quick    small counts (20 000 pipelined, 2 s stall; well under a minute
#                               once built)
#   bench/compare.sh --no-build [--quick]   reuse the binaries already built
#   bench/compare.sh ... --no-net           stdio only
#
# Builds `redmark` in release (root workspace) and the peers (bench/peers, its own workspace,
# into target/peers). Needs python3 (standard library only). Figures from a busy machine are
# indicative: compare the columns of one run, not separate runs.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=1
ARGS=()
for a in "$@"; do
  case $a in
    --no-build) BUILD=0 ;;
    --quick | --no-net) ARGS+=("$a") ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown option $a" >&2; exit 2 ;;
  esac
done

if ((BUILD)); then
  (cd "$ROOT" && cargo build --release --locked -p redmark)
  (cd "$ROOT/bench/peers" && cargo build --release --locked --target-dir "$ROOT/target/peers")
fi

exec python3 "$ROOT/bench/compare.py" \
  --redmark "$ROOT/target/release/redmark" \
  --stub "$ROOT/target/peers/release/canned-stub" \
  --rmcp "$ROOT/target/peers/release/rmcp-peer" \
  ${ARGS[@]+"${ARGS[@]}"}
