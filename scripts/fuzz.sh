#!/usr/bin/env bash
# Runs every cargo-fuzz target of core/fuzz (the engine, the panel's request heads) and
# shell/fuzz (what a CalDAV server hands over, the 2025-11-25 bridge), one at a time, each
# from its seed corpus (DIR/fuzz/seeds/TARGET, in git) plus the local generated corpus
# (DIR/fuzz/corpus/TARGET, git-ignored, grows across runs). Crashes land in DIR/fuzz/artifacts/TARGET.
#
#   scripts/fuzz.sh                 full run: 10^7 executions per target
#   scripts/fuzz.sh --runs N        N executions per target
#   scripts/fuzz.sh --smoke         about 12 s per target (--seconds S to change)
#   scripts/fuzz.sh [...] engine    only the named targets
#
# Prints per target the executions, execs/s and crashes; exits non-zero on any crash. Needs
# the nightly toolchain (without it, prints that fuzzing was skipped and exits 0) and
# cargo-fuzz (installed here if missing). Targets build with debug assertions and overflow
# checks (-a), so an arithmetic overflow is a crash too, and without a sanitizer by default
# (the core is #![forbid(unsafe_code)]; AddressSanitizer would halve the speed to watch only
# dependencies): FUZZ_SANITIZER=address scripts/fuzz.sh to turn it on.
#
# Refreshing the seeds after a long run (keep them small, a few dozen files per target):
#   cd core && cargo +nightly fuzz cmin -O -a -s none TARGET fuzz/corpus/TARGET (shell: cd shell)
#   (then copy what is worth keeping into fuzz/seeds/TARGET)
set -euo pipefail

CARGO_FUZZ_VERSION=0.13.2
sanitizer="${FUZZ_SANITIZER:-none}"
runs=10000000
seconds=12
smoke=0
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --smoke) smoke=1 ;;
        --runs) runs="$2"; shift ;;
        --seconds) seconds="$2"; shift ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
        *) targets+=("$1") ;;
    esac
    shift
done
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz: skipped, the nightly toolchain (cargo +nightly) is not installed"
    exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "==> installing cargo-fuzz $CARGO_FUZZ_VERSION"
    cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION"
fi

# Each target with the crate folder (core or shell) whose fuzz/ holds it; a name in neither
# is refused.
wanted=("${targets[@]}")
targets=()
dirs=()
for dir in core shell; do
    mapfile -t here < <(cd "$dir" && cargo +nightly fuzz list)
    took=0
    for t in "${here[@]}"; do
        chosen=$((${#wanted[@]} == 0))
        for w in "${wanted[@]}"; do
            [ "$w" = "$t" ] && chosen=1
        done
        if [ "$chosen" = 1 ]; then
            targets+=("$dir:$t")
            took=1
        fi
    done
    [ "$took" = 1 ] && dirs+=("$dir")
done
for w in "${wanted[@]}"; do
    if ! printf '%s\n' "${targets[@]}" | grep -qxF -e "core:$w" -e "shell:$w"; then
        echo "fuzz.sh: no target $w in core/fuzz or shell/fuzz" >&2
        exit 2
    fi
done
if [ "$smoke" = 1 ]; then
    limit=(-max_total_time="$seconds")
else
    limit=(-runs="$runs")
fi

for dir in "${dirs[@]}"; do
    echo "==> building fuzz targets of $dir/fuzz"
    (cd "$dir" && cargo +nightly fuzz build -O -a -s "$sanitizer")
done

log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT
summary=()
failed=0
for dt in "${targets[@]}"; do
    dir=${dt%%:*}
    t=${dt#*:}
    cd "$root/$dir"
    echo "==> fuzzing $t (${limit[*]})"
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t" "fuzz/seeds/$t"
    before=$(find "fuzz/artifacts/$t" -type f | wc -l)
    log="$log_dir/$t.log"
    status=0
    # One process, one job: the machine is shared. -timeout makes a hang a crash.
    cargo +nightly fuzz run -O -a -s "$sanitizer" "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
        "${limit[@]}" -timeout=10 -print_final_stats=1 >"$log" 2>&1 || status=$?
    after=$(find "fuzz/artifacts/$t" -type f | wc -l)
    crashes=$((after - before))
    if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then
        crashes=1 # the fuzzer failed without leaving an artifact (e.g. a build error)
    fi
    # libFuzzer's last words: "#N DONE ... exec/s: X" and "Done N runs in S second(s)".
    done_runs=$(sed -n 's/^Done \([0-9]*\) runs in.*/\1/p' "$log" | tail -n 1)
    exec_s=$(sed -n 's/^#[0-9]*[[:space:]]*DONE .*exec\/s: \([0-9]*\).*/\1/p' "$log" | tail -n 1)
    [ -n "$exec_s" ] || exec_s=$(sed -n 's/^stat::average_exec_per_sec:[[:space:]]*//p' "$log" | tail -n 1)
    if [ -z "$done_runs" ]; then
        done_runs=$(sed -n 's/^stat::number_of_executed_units:[[:space:]]*//p' "$log" | tail -n 1)
    fi
    line=$(printf '%-14s runs %10s   exec/s %7s   crashes %s' "$t" "${done_runs:-?}" "${exec_s:-?}" "$crashes")
    echo "$line"
    summary+=("$line")
    if [ "$crashes" -ne 0 ]; then
        failed=1
        grep -E 'panicked at|ERROR: libFuzzer|SUMMARY:|Test unit written to|error(\[|:)' "$log" | head -n 20 || true
        echo "(full log of $t: kept as fuzz/artifacts/$t/last-run.log)"
        cp "$log" "fuzz/artifacts/$t/last-run.log"
    fi
done

echo
echo "==> fuzz summary"
printf '%s\n' "${summary[@]}"
exit "$failed"
