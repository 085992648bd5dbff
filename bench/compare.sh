#!/usr/bin/env bash
# The figures a user notices: redmark's stdio request path against the machine's ceiling (a
# canned stub answering with redmark's own bytes) and against rmcp 3.11 with the same tools;
# then redmark's TCP, HTTP and durable-booking figures, the HTTP ones beside the stub's over
# HTTP. Prints one table with redmark ÷ stub and redmark ÷ rmcp.
#
#   bench/compare.sh            full counts: 200 000 pipelined, 20 000 lock-step, 10 000 MRTR,
#                               medians of 3 interleaved rounds, 10 s stalled reader (~10 min
#                               once built)
#   bench/compare.sh --quick    20 000 / 2 000 / 1 000, one round, 2 s stall (~30 s once built)
#   bench/compare.sh --no-build [--quick]   reuse the binaries already built
#   bench/compare.sh ... --rounds=N         N rounds of the rate figures (stdio and network)
#   bench/compare.sh ... --no-net           stdio only
#   bench/compare.sh ... --baseline=REV     also measure the TCP/HTTP/booking figures of redmark
#                               at git revision REV (built into target/baseline) and print the
#                               ratios, and count instructions per request of both
#                               (bench/instructions.sh, when valgrind is installed)
#   bench/compare.sh ... --markdown=FILE    also write the run to FILE (docs/benchmarks.md is
#                               written this way: the command, the commits, the tables)
#
# Builds `redmark` in release (root workspace) and the peers (bench/peers, its own workspace,
# into target/peers). Needs python3 (standard library only). Figures from a busy machine are
# indicative: compare the columns of one run, not separate runs.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=1
BASE_REV=
MARKDOWN=
ARGS=()
COMMAND="bench/compare.sh $*"
for a in "$@"; do
  case $a in
    --no-build) BUILD=0 ;;
    --quick | --no-net) ARGS+=("$a") ;;
    --rounds=*) ARGS+=(--rounds "${a#--rounds=}") ;;
    --baseline=*) BASE_REV=${a#--baseline=} ;;
    --markdown=*) MARKDOWN=${a#--markdown=} ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown option $a" >&2; exit 2 ;;
  esac
done

if ((BUILD)); then
  (cd "$ROOT" && cargo build --release --locked -p redmark)
  (cd "$ROOT/bench/peers" && cargo build --release --locked --target-dir "$ROOT/target/peers")
fi

if [[ -n $BASE_REV ]]; then
  BASE="$ROOT/target/baseline/release/redmark"
  STAMP="$ROOT/target/baseline/built-from"
  WANT=$(git -C "$ROOT" rev-parse --verify "$BASE_REV^{commit}")
  # Built again when asked to build, or when the one there is of another revision.
  if ((BUILD)) || [[ ! -x $BASE || $(cat "$STAMP" 2>/dev/null) != "$WANT" ]]; then
    # The revision's own sources, exported (no worktree left behind), its own target folder.
    SRC=$(mktemp -d)
    trap 'rm -rf "$SRC"' EXIT
    git -C "$ROOT" archive "$BASE_REV" | tar -x -C "$SRC"
    (cd "$SRC" && cargo build --release --locked -p redmark --target-dir "$ROOT/target/baseline")
    echo "$WANT" > "$STAMP"
  fi
  ARGS+=(--baseline "$BASE")
fi

OUT=$(mktemp)
trap 'rm -f "$OUT"; rm -rf "${SRC:-}"' EXIT
python3 "$ROOT/bench/compare.py" \
  --redmark "$ROOT/target/release/redmark" \
  --stub "$ROOT/target/peers/release/canned-stub" \
  --rmcp "$ROOT/target/peers/release/rmcp-peer" \
  --booker "$ROOT/target/peers/release/booker" \
  ${ARGS[@]+"${ARGS[@]}"} | tee "$OUT"

BASE_STDIO=
if [[ -n $BASE_REV ]]; then
  # The baseline's stdio figures (latency, RSS at rest, flood), measured the same way.
  BASE_STDIO=$(mktemp)
  echo
  echo "The baseline ($BASE_REV) on stdio:"
  python3 "$ROOT/bench/compare.py" \
    --redmark "$BASE" \
    --stub "$ROOT/target/peers/release/canned-stub" \
    --rmcp "$ROOT/target/peers/release/rmcp-peer" \
    --no-net ${ARGS[@]+"${ARGS[@]}"} | tee "$BASE_STDIO"
fi

INSTR=
if [[ -n $BASE_REV ]] && command -v valgrind > /dev/null; then
  INSTR=$(mktemp)
  N=${N:-5000} "$ROOT/bench/instructions.sh" "$BASE" "$ROOT/target/release/redmark" | tee "$INSTR"
fi

if [[ -n $MARKDOWN ]]; then
  # Sections other scripts wrote (from the first "## " heading on, e.g. bench/clash-cost.sh's)
  # are kept after this run's tables.
  KEEP=$(sed -n '/^## /,$p' "$MARKDOWN" 2>/dev/null || true)
  HEAD=$(git -C "$ROOT" rev-parse --short HEAD)
  DIRTY=$(git -C "$ROOT" status --porcelain --untracked-files=no | grep -q . && echo " (with uncommitted changes)" || true)
  {
    echo "# Benchmarks"
    echo
    echo "Written by \`$COMMAND\` on $(date -u +%Y-%m-%d) at commit $HEAD$DIRTY"
    [[ -n $BASE_REV ]] && echo "against the baseline $(git -C "$ROOT" rev-parse --short "$BASE_REV")."
    echo "Machine: $(nproc) CPUs, $(uname -sm); $(rustc --version)."
    echo
    echo "What each figure means and how it is taken: the header of bench/compare.py. Figures from"
    echo "a shared machine move between runs: compare the columns of one run, not separate runs;"
    echo "instruction counts (valgrind) are the repeatable figure."
    echo
    echo '```'
    cat "$OUT"
    echo '```'
    if [[ -n $BASE_STDIO ]]; then
      echo
      echo "The baseline on stdio, measured the same way in the same run:"
      echo
      echo '```'
      cat "$BASE_STDIO"
      echo '```'
    fi
    if [[ -n $INSTR ]]; then
      echo
      echo "Instructions per request on stdio (\`bench/instructions.sh BASELINE CURRENT\`):"
      echo
      echo '```'
      cat "$INSTR"
      echo '```'
    fi
    if [[ -n $KEEP ]]; then
      echo
      echo "$KEEP"
    fi
  } > "$MARKDOWN"
  echo "compare.sh: wrote $MARKDOWN"
fi
