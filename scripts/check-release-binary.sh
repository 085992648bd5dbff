#!/usr/bin/env bash
# Checks what the release build does to keep an idle server small (see shell/build.rs and the
# README's "RSS at rest"):
# - shell/link/hot-functions.txt, the functions placed first in .text, still names the binary's
#   functions. The names are mangled and change with the toolchain and the shell's
#   dependencies; a stale list breaks nothing but gives back the resident memory it saved.
#   Fails when it is stale for the rustc it was made with (run scripts/order-functions.py);
#   under another rustc it says so and skips this part.
# - the binary does not load libm.so.6 (its one libm function, pow, is shell/src/pow.rs);
# - its relative relocations are packed (RELR) when the glibc here has DT_RELR (2.36).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release/redmark
cargo build --quiet --release --locked -p redmark
fail=0

LIST=shell/link/hot-functions.txt
made_with=$(cat shell/link/hot-functions.rustc)
this=$(rustc -vV | sed -n 's/^release: //p')
if [[ $made_with != "$this" ]]; then
  echo "function order: skipped, $LIST was made with rustc $made_with, this is $this"
else
  listed=$(wc -l < "$LIST")
  found=$(nm --defined-only "$BIN" | awk '{print $3}' | sort -u | comm -12 - <(sort -u "$LIST") | wc -l)
  echo "function order: $found of $listed listed functions are in $BIN"
  if ((found * 100 < listed * 98)); then
    echo "check-release-binary: $LIST is stale (a dependency or the code changed):" \
      "run scripts/order-functions.py and commit what it writes" >&2
    fail=1
  fi
fi

needed=$(readelf -d "$BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "libraries loaded: $needed"
if [[ $needed == *libm.so* ]]; then
  echo "check-release-binary: $BIN needs libm.so again (a libm function other than pow is" \
    "called: define it beside pow in shell/src/pow.rs, or accept the library)" >&2
  fail=1
fi

glibc=$(getconf GNU_LIBC_VERSION 2> /dev/null | sed -n 's/^glibc //p')
if [[ -n $glibc ]] && printf '2.36\n%s\n' "$glibc" | sort -V -C; then
  if readelf -SW "$BIN" | grep -q '\.relr\.dyn'; then
    echo "relative relocations: packed (.relr.dyn)"
  else
    echo "check-release-binary: glibc $glibc has DT_RELR but $BIN has no .relr.dyn" >&2
    fail=1
  fi
fi
exit $fail
