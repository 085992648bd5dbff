#!/usr/bin/env bash
# CPU time (user + system) `redmark serve` spends per request on stdio: N pipelined
# `tools/list` lines from a file, answers to /dev/null, each binary given run ROUNDS times,
# interleaved. On a loaded machine CPU time moves far less than req/s, so this is the figure
# to compare binaries by (e.g. a build of the commit before a change against this one).
#
#   bench/cpu-per-request.sh BIN [BIN ...]      N=100000 ROUNDS=3 by default (env overrides)
set -euo pipefail
N=${N:-100000}
ROUNDS=${ROUNDS:-3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
LINE='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
awk -v l="$LINE" -v n="$N" 'BEGIN { for (i = 0; i < n; i++) print l }' > "$WORK/in"
KEY=$(printf '0%.0s' {1..64}) # public and only for measuring
for ((r = 1; r <= ROUNDS; r++)); do
  for bin in "$@"; do
    data=$(mktemp -d -p "$WORK")
    # utime + stime of the server, from /usr/bin/time; a fresh folder each run.
    /usr/bin/time -o "$WORK/t" -f '%U %S' env REDMARK_KEY="$KEY" REDMARK_LOG=warn \
      "$bin" serve --data "$data" < "$WORK/in" > /dev/null 2> "$WORK/err"
    read -r u s < "$WORK/t"
    awk -v b="$bin" -v u="$u" -v s="$s" -v n="$N" \
      'BEGIN { printf "%s: %.2f µs CPU per request (user %.2f s, sys %.2f s)\n", b, (u + s) * 1e6 / n, u, s }'
  done
done
