#!/usr/bin/env bash
# The PostgreSQL store's ceiling and what redmark reaches of it, in the same run:
#   1. pgbench: one-row INSERT transactions into redmark's own table (same constraints,
#      synchronous_commit = on; a span's columns as redmark inserts them: an hour from
#      2500-01-01, 193579 days after 1970, in minutes) from CLIENTS connections: the
#      database's own ceiling;
#   2. three `redmark serve --http` instances on that database, CLIENTS HTTP keep-alive
#      clients booking distinct slots, lock-step (`bench/peers/booker`: std-only Rust, as
#      light a driver as pgbench is): acknowledged bookings per second;
#   3. the store alone (`PgStore`, CLIENTS blocking callers, no engine, no HTTP: the
#      `store_throughput` benchmark in shell/src/store/pg/tests.rs), what the instances can
#      reach once the engine's global lock is gone;
# then prints the figures and the ratios. A throwaway cluster in a temp folder (as `postgres` when
# run as root), stopped at the end. Not a timed test; keep SECS short on a shared machine.
#
#   bench/pg-bench.sh [SECS=5] [CLIENTS=96]
#   REDMARK_BIN=path/to/redmark bench/pg-bench.sh ...   the instances run that binary (e.g. an
#                                  older build, to compare); the rest is this tree's
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-5}
CLIENTS=${2:-96}
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$BIN/initdb" ] || { echo "PostgreSQL is not installed (apt-get install postgresql)"; exit 1; }
[ -n "${REDMARK_BIN:-}" ] || cargo build --release -q -p redmark
cargo test --release -q -p redmark --lib --no-run 2>/dev/null
(cd bench/peers && cargo build --release -q --locked -p booker --target-dir ../../target/peers)
REDMARK=${REDMARK_BIN:-target/release/redmark}

TMP=$(mktemp -d /tmp/redmark-pg-bench-XXXXXX)
PIDS=()
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    as_pg "$BIN/pg_ctl" -D "$TMP/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$TMP"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] && chown postgres:postgres "$TMP"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
as_pg "$BIN/initdb" -D "$TMP/data" -U redmark -A trust >/dev/null
as_pg "$BIN/pg_ctl" -D "$TMP/data" -l "$TMP/log" -w start \
    -o "-p $PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$TMP -c max_connections=300" >/dev/null
URL="postgres://redmark@127.0.0.1:$PORT/postgres"

# Three instances (the first start creates the schema).
ADDRS=()
for i in 1 2 3; do
    mkdir -p "$TMP/i$i"
    : >"$TMP/i$i.err"
    REDMARK_KEY=$(printf '00%.0s' {1..32}) REDMARK_LOG=warn \
        "$REDMARK" serve --data "$TMP/i$i" --http 127.0.0.1:0 --store "$URL" \
        2>"$TMP/i$i.err" </dev/null &
    PIDS+=($!)
    for _ in $(seq 200); do
        a=$(sed -n 's/^redmark: listening http //p' "$TMP/i$i.err")
        [ -n "$a" ] && break
        sleep 0.05
    done
    [ -n "$a" ] || { cat "$TMP/i$i.err"; exit 1; }
    ADDRS+=("$a")
done

cat >"$TMP/insert.sql" <<'SQL'
\set n random(1, 2000000000)
\set start (193579 + (:n / 24) % 300000) * 1440 + (:n % 24) * 60
INSERT INTO redmark_bookings (room, start_minute, end_minute, title, attendees, holder, nonce)
VALUES ('pgbench', :start, :start + 60, '', 1, int8send(:n), int8send(:n))
ON CONFLICT DO NOTHING;
SQL
PGBENCH_TPS=$(PGOPTIONS="-c synchronous_commit=on" "$BIN/pgbench" -n -c "$CLIENTS" -j 2 -T "$SECS" \
    -f "$TMP/insert.sql" "$URL" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -n 1)

REDMARK_RATE=$(target/peers/release/booker "$SECS" "$CLIENTS" "${ADDRS[@]}")
STORE_RATE=$(REDMARK_PG_BENCH_URL="$URL" REDMARK_PG_BENCH_SECS="$SECS" REDMARK_PG_BENCH_CALLERS="$CLIENTS" \
    cargo test --release -q -p redmark --lib store_throughput -- --ignored --nocapture 2>/dev/null \
    | sed -n 's/^pg store, .*: \([0-9]*\) bookings\/s$/\1/p')
RATE=${REDMARK_RATE% *}
FAILED=${REDMARK_RATE#* }
echo "pgbench one-row insert transactions (synchronous_commit=on, $CLIENTS clients, ${SECS}s): $PGBENCH_TPS tps"
echo "3 redmark instances, acknowledged bookings ($CLIENTS HTTP clients, ${SECS}s): $RATE /s ($FAILED not booked)"
echo "the store alone (PgStore, $CLIENTS blocking callers, ${SECS}s): $STORE_RATE bookings/s"
python3 -c "print(f'ratio redmark / pgbench: {float($RATE) / float($PGBENCH_TPS):.2f}; store / pgbench: {float($STORE_RATE) / float($PGBENCH_TPS):.2f}')"
