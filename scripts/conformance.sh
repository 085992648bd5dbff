#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against
# `redmark serve --http 127.0.0.1:0 --fixtures`: the fixtures App hosted by the same no_std
# core that runs on the panel.
#
#   scripts/conformance.sh                 # scored 2026-07-28 set, then --suite all
#
# Each pass prints its scenarios (scored ones, then those outside the scored set with why) and
# ends with one line: "conformance <pass> (...): P/N scenarios pass, C checks passed, F failed".
#   scripts/conformance.sh --scenario NAME # one scenario (both passes)
#
# Installs Node 22 and the suite from npm into .conformance/ (git-ignored) on first use; the
# machine's own node may be older (the suite needs >= 22) and npm's `latest` tag of the suite
# (0.1.16) does not know 2026-07-28. Exits non-zero on any failed check or warning.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR="$ROOT/.conformance"
SUITE_VERSION=0.2.0-alpha.12
NODE_VERSION=22
SPEC=2026-07-28
BASELINE="$ROOT/scripts/conformance-baseline.yml"

log() { printf 'conformance: %s\n' "$*" >&2; }

# --- tools -------------------------------------------------------------------------------
installed() {
    [ -x "$DIR/node_modules/.bin/node" ] && [ -x "$DIR/node_modules/.bin/conformance" ] &&
        grep -q "\"version\": \"$SUITE_VERSION\"" \
            "$DIR/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null
}
if ! installed; then
    log "installing node@$NODE_VERSION and @modelcontextprotocol/conformance@$SUITE_VERSION into $DIR"
    mkdir -p "$DIR"
    npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error \
        "node@$NODE_VERSION" "@modelcontextprotocol/conformance@$SUITE_VERSION" >&2
fi
NODE="$DIR/node_modules/.bin/node"
case "$("$NODE" --version)" in
    v2[2-9].* | v[3-9][0-9].*) ;;
    *) log "node from $DIR is $("$NODE" --version), need >= 22"; exit 1 ;;
esac
SUITE=("$NODE" "$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js")

# --- server ------------------------------------------------------------------------------
# Another server (the networked door panel under QEMU: tests/tests/qemu_net.rs) is run with
# REDMARK_CONFORMANCE_URL=<its /mcp URL>, REDMARK_CONFORMANCE_BASELINE=<its expected failures>
# and REDMARK_CONFORMANCE_WARN_OK=<scenarios whose warnings do not fail>: the scored pass only.
WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
if [ -n "${REDMARK_CONFORMANCE_URL:-}" ]; then
    URL=$REDMARK_CONFORMANCE_URL
    BASELINE=${REDMARK_CONFORMANCE_BASELINE:-$BASELINE}
else
log "building redmark"
cargo build --quiet -p redmark --manifest-path "$ROOT/Cargo.toml" >&2
BIN="$ROOT/target/debug/redmark"

"$BIN" serve --http 127.0.0.1:0 --fixtures --data "$WORK/data" 2>"$WORK/server.log" &
SERVER_PID=$!
ADDR=
for _ in $(seq 100); do
    ADDR=$(sed -n 's/.*listening http \([0-9.]*:[0-9]*\).*/\1/p' "$WORK/server.log" | head -n1)
    [ -n "$ADDR" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$ADDR" ]; then
    log "server did not report its address:"
    cat "$WORK/server.log" >&2
    exit 1
fi
# A loopback URL (the DNS-rebinding scenario needs one); the literal address, so a resolver
# that puts ::1 first for "localhost" cannot send the suite elsewhere.
URL="http://$ADDR/mcp"
log "server pid $SERVER_PID at $URL"
fi # REDMARK_CONFORMANCE_URL

# --- suite -------------------------------------------------------------------------------
# The scenarios --requirements $SPEC scores. The suite also runs extension and pending ones
# there, unscored, and its Total adds them in; with a baseline it stops saying which, so the
# summary below says it: scored scenarios first, then the others under "not scored", each with
# why (the tasks extension is not implemented here; pending ones are not in the released set).
"${SUITE[@]}" list --server --requirements "$SPEC" >"$WORK/list"
sed -n '/^Server scenarios/,/^$/s/^  - //p' "$WORK/list" >"$WORK/scored-set"
[ -s "$WORK/scored-set" ] || { log "could not list the scored scenarios"; exit 1; }
: >"$WORK/all-set"
# The server scenarios the suite runs under --requirements but never scores, with why
# ("<name><TAB><why>"), from the list's "Run and reported, but never scored:" section.
awk -v spec="$SPEC" '
    /^Run and reported, but never scored:/ { on = 1; next }
    on && /^$/ { on = 0 }
    on && /^  [^ ].*:$/ { reason = $1; next }
    on && /^    - .* \[server\]$/ {
        name = $2
        if (reason == "extension" && name ~ /^tasks-/)
            why = "extension scenario: the tasks extension, which redmark does not implement"
        else if (reason == "extension")
            why = "extension scenario"
        else if (reason == "pending")
            why = "pending scenario, not in the released " spec " requirement set"
        else
            why = reason
        print name "\t" why
    }' "$WORK/list" >"$WORK/not-scored"

# Warnings in the checks.json files under $1, for the scenarios named in $2 (empty: all).
warnings() {
    "$NODE" -e '
        const fs = require("fs"), path = require("path");
        const [dir, setFile] = process.argv.slice(1);
        const set = new Set(fs.readFileSync(setFile, "utf8").split("\n").filter(Boolean));
        for (const d of fs.readdirSync(dir)) {
            const scenario = d.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
            if (set.size && !set.has(scenario)) continue;
            const f = path.join(dir, d, "checks.json");
            if (!fs.existsSync(f)) continue;
            for (const c of JSON.parse(fs.readFileSync(f, "utf8")))
                if (c.status === "WARNING") console.log(`WARNING ${scenario}: ${c.id}: ${c.errorMessage ?? ""}`);
        }' "$1" "$2"
}

# The SUMMARY's scenario lines in $1, restricted to the scenarios named in $2 (empty: all).
scored_lines() {
    local summary
    summary=$(sed -n '/=== SUMMARY ===/,/^Total:/p' "$1" | grep -E '^[✓✗] ' || true)
    if [ -s "$2" ]; then
        printf '%s\n' "$summary" | grep -E "^[✓✗] ($(paste -sd'|' "$2")):" || true
    else
        printf '%s\n' "$summary"
    fi
}

# The suite's summary in $1, split: the scenarios that count ($2; empty: all of them), then
# the ones it also ran that are outside the scored set, each with why; its Total is over both,
# so it is labelled as such. $3: the options of the run.
summary() {
    local plain=$1 set=$2 opts=$3 lines
    lines=$(sed -n '/=== SUMMARY ===/,/^Total:/p' "$plain" | grep -E '^[✓✗] ' || true)
    if [ ! -s "$set" ]; then
        printf 'scored (%s):\n' "$opts"
        printf '%s\n' "$lines" | sed 's/^/  /'
        sed -n 's/^Total: /  suite total: /p' "$plain"
    else
        printf 'scored (%s):\n' "$opts"
        scored_lines "$plain" "$set" | sed 's/^/  /'
        local others
        others=$(printf '%s\n' "$lines" | grep -vE "^[✓✗] ($(paste -sd'|' "$set")):" || true)
        if [ -n "$others" ]; then
            printf 'not scored (outside --requirements %s; the suite runs them but they do not count):\n' "$SPEC"
            printf '%s\n' "$others" | while IFS= read -r l; do
                local n why
                n=$(printf '%s' "$l" | sed -E 's/^[✓✗] ([^:]*):.*/\1/')
                why=$(awk -F'\t' -v n="$n" '$1 == n { print $2 }' "$WORK/not-scored")
                printf '  %s  (%s)\n' "$l" "${why:-not in the scored set}"
            done
        fi
        sed -n 's/^Total: \(.*\)/  suite total over scored and not scored: \1/p' "$plain"
    fi
    # What the suite says after its summary (the baseline check).
    sed -n '/^Total:/,$p' "$plain" | sed '1d;/^$/d'
}

status=0
run() {
    local name=$1 set=$2; shift 2
    local out="$WORK/$name"
    local args=(server --url "$URL" -o "$out" "$@")
    if [ -f "$BASELINE" ]; then args+=(--expected-failures "$BASELINE"); fi
    log "run: conformance ${args[*]}"
    local rc=0
    "${SUITE[@]}" "${args[@]}" >"$WORK/$name.txt" 2>&1 || rc=$?
    sed 's/\x1b\[[0-9;]*m//g' "$WORK/$name.txt" >"$WORK/$name.plain"
    summary "$WORK/$name.plain" "$set" "$*"
    if [ "$rc" -ne 0 ]; then
        log "$name: FAILED (the suite exited $rc)"
        status=1
    fi
    local warned
    warned=$(warnings "$out" "$set")
    for ok in ${REDMARK_CONFORMANCE_WARN_OK:-}; do
        printf '%s\n' "$warned" | grep "^WARNING $ok:" | sed 's/^/allowed: /' || true
        warned=$(printf '%s\n' "$warned" | grep -v "^WARNING $ok:" || true)
    done
    if [ -n "$warned" ]; then
        printf '%s\n' "$warned"
        log "$name: FAILED (warnings in scored scenarios)"
        status=1
    fi
    # Our own count over the scenarios that count (the suite's Total also adds unscored ones).
    local pass fail
    pass=$(scored_lines "$WORK/$name.plain" "$set" | grep -c '^✓' || true)
    fail=$(scored_lines "$WORK/$name.plain" "$set" | grep -c '^✗' || true)
    local baselined
    baselined=$(grep -c '^  ~ ' "$WORK/$name.plain" || true)
    local checks
    checks=$(scored_lines "$WORK/$name.plain" "$set" |
        awk '{ for (i = 1; i < NF; i++) { if ($(i + 1) ~ /^passed/) p += $i; if ($(i + 1) ~ /^failed/) f += $i } }
             END { printf "%d checks passed, %d failed", p, f }')
    printf 'conformance %s (%s): %d/%d scenarios pass, %s, %d warnings, %d baselined checks\n' \
        "$name" "$*" "$pass" "$((pass + fail))" "$checks" \
        "$(printf '%s' "$warned" | grep -c . || true)" "$baselined"
    return 0
}
run scored "$WORK/scored-set" --requirements "$SPEC" "$@"
[ -n "${REDMARK_CONFORMANCE_URL:-}" ] || run all "$WORK/all-set" --suite all --spec-version "$SPEC" "$@"

if [ -n "$SERVER_PID" ] && ! kill -0 "$SERVER_PID" 2>/dev/null; then
    log "the server died during the run"
    status=1
fi
if [ "$status" -ne 0 ]; then
    if [ -f "$WORK/server.log" ]; then
        log "server log (last 30 lines):"
        tail -n 30 "$WORK/server.log" >&2
    fi
fi
exit "$status"
