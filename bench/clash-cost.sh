#!/usr/bin/env bash
# What a clash check costs once a floor has years of bookings: durable bookings/s of
# `redmark serve --tcp` (8 clients pipelining distinct spans) on an empty redb store and on one
# of 100 000 active bookings of 16 rooms over four years (and 5 000 cancelled), rounds
# alternating empty/full, then the ratio full/empty against the issue's "within 20 %".
# How the store is filled and what is measured: the header of bench/clash-cost.py.
#
#   bench/clash-cost.sh [--no-build] [--rounds=N] [--per=N]   N pairs of rounds (default 5);
#                       N book_room calls per client a round (default 4000)
#   bench/clash-cost.sh ... --window=N       the new spans on the last N days of the stored
#                       ones (default: days across all of them)
#   bench/clash-cost.sh ... --clash-every=N  every N-th call overlaps a stored booking
#                       (default 20; 0: none)
#   bench/clash-cost.sh ... --clash-with=own  ... overlaps the same client's call before it
#                       instead (taken on the empty store too: the same answers on both)
#   bench/clash-cost.sh ... --pg             the same on PostgreSQL (one instance, a throwaway
#                       cluster as in bench/pg-bench.sh, a database per round)
#
# Builds `redmark` in release. Needs python3 (standard library only). Disk: the filled store
# (about 33 MiB) and one copy of it at a time, in a temp folder removed at the end.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=1
ARGS=()
for a in "$@"; do
  case $a in
    --no-build) BUILD=0 ;;
    --rounds=*) ARGS+=(--rounds "${a#--rounds=}") ;;
    --per=*) ARGS+=(--per "${a#--per=}") ;;
    --window=*) ARGS+=(--window "${a#--window=}") ;;
    --clash-every=*) ARGS+=(--clash-every "${a#--clash-every=}") ;;
    --clash-with=*) ARGS+=(--clash-with "${a#--clash-with=}") ;;
    --pg) ARGS+=(--pg) ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "clash-cost.sh: unknown option $a" >&2; exit 2 ;;
  esac
done

if ((BUILD)); then
  (cd "$ROOT" && cargo build --release --locked -p redmark)
fi
python3 "$ROOT/bench/clash-cost.py" --redmark "$ROOT/target/release/redmark" ${ARGS[@]+"${ARGS[@]}"}
