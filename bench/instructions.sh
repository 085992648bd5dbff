#!/usr/bin/env bash
# Instructions `redmark serve` runs per request on stdio, counted by valgrind's cachegrind:
# exact and repeatable where times are not (on a shared VM, CPU time per request moves by a
# third between runs of one binary). Three pipelined workloads, lines from a file, answers to
# /dev/null: `tools/list`; the ambiguous `book_room` that is answered `input_required` (seals
# a requestState); and its retry declining the form (opens the state; one state, sealed by the
# binary measured just before it counts, sent N times: a decline books nothing). Per request =
# (count for N lines - count for 1 line) / (N - 1), so start-up and shutdown cancel out.
# Compare binaries with it (e.g. before and after a change).
#
#   bench/instructions.sh BIN [BIN ...]      N=20000 by default (env overrides)
#
# Needs valgrind (apt-get install valgrind); about 30 s per binary at the default N.
set -euo pipefail
command -v valgrind > /dev/null || { echo "instructions.sh: needs valgrind" >&2; exit 2; }
(($# > 0)) || { sed -n '2,13p' "$0"; exit 2; }
N=${N:-20000}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}'
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{'"$META"'}}'
ASK='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book_room","arguments":{"day":"2099-09-17","hour":9,"room_hint":"the big room"},'"$META"'}}'
KEY=$(printf '0%.0s' {1..64}) # public and only for measuring

# Instructions of one run of `$1` with the file `$2` on stdin, in a fresh data folder.
count() {
  local data
  data=$(mktemp -d -p "$WORK")
  env REDMARK_KEY="$KEY" REDMARK_LOG=warn valgrind --tool=cachegrind --cache-sim=no \
    --cachegrind-out-file=/dev/null "$1" serve --data "$data" < "$2" > /dev/null 2> "$WORK/vg"
  sed -n 's/.*I *refs: *//p' "$WORK/vg" | tr -d ,
}

# The retry for `$1`: it carries a state `$1` has just sealed for the ask (states expire).
retry_for() {
  local data state
  data=$(mktemp -d -p "$WORK")
  state=$(printf '%s\n' "$ASK" | env REDMARK_KEY="$KEY" REDMARK_LOG=warn "$1" serve --data "$data" \
    2> /dev/null | sed -n 's/.*"requestState":"\([^"]*\)".*/\1/p')
  [[ -n $state ]] || { echo "instructions.sh: $1: no requestState for the ask" >&2; exit 1; }
  printf '%s' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book_room",' \
    '"arguments":{"day":"2099-09-17","hour":9,"room_hint":"the big room"},' \
    '"inputResponses":{"room":{"action":"decline"}},"requestState":"'"$state"'",'"$META"'}}'
}

for name in LIST ASK RETRY; do
  for bin in "$@"; do
    case $name in
      LIST) line=$LIST label="tools/list" ;;
      ASK) line=$ASK label="book_room ask (input_required)" ;;
      RETRY) line=$(retry_for "$bin") label="book_room retry declining (complete)" ;;
    esac
    printf '%s\n' "$line" > "$WORK/one"
    awk -v l="$line" -v n="$N" 'BEGIN { for (i = 0; i < n; i++) print l }' > "$WORK/many"
    # The retry must be answered as declined, not refused.
    if [[ $name == RETRY ]]; then
      env REDMARK_KEY="$KEY" REDMARK_LOG=warn "$bin" serve --data "$(mktemp -d -p "$WORK")" \
        < "$WORK/one" 2> /dev/null | grep -q '"reason":"declined"' ||
        { echo "instructions.sh: $bin: the retry was not answered as declined" >&2; exit 1; }
    fi
    one=$(count "$bin" "$WORK/one")
    many=$(count "$bin" "$WORK/many")
    [[ -n $one && -n $many ]] || { echo "instructions.sh: $bin: no count" >&2; exit 1; }
    awk -v b="$bin" -v w="$label" -v o="$one" -v m="$many" -v n="$N" \
      'BEGIN { printf "%s: %s: %.0f instructions per request\n", b, w, (m - o) / (n - 1) }'
  done
done
