#!/usr/bin/env bash
# Proves the core is no_std without alloc: it builds for two bare-metal targets, and no crate
# in its normal dependency tree has an `alloc` or `std` feature switched on (the derives'
# proc-macro crate and its dependencies run on the host, never on the target: left out).
set -euo pipefail
cd "$(dirname "$0")/.."
for target in thumbv6m-none-eabi thumbv7em-none-eabihf; do
    cargo build --quiet -p redmark-core --release --target "$target"
    features=$(cargo tree -p redmark-core --target "$target" -e normal,features,no-proc-macro --prefix none 2>/dev/null \
        | grep -E 'feature "(alloc|std)"' | sort -u || true)
    if [ -n "$features" ]; then
        echo "no-std check: $target: the core's tree enables alloc/std:" >&2
        echo "$features" >&2
        exit 1
    fi
    echo "no-std check: redmark-core builds for $target with no alloc/std feature in its tree"
done
# A tool that is not ours (core/examples/extend_meeting.rs), built for a Cortex-M4F against
# the public API only.
# A zone of the tz database (feature `tz`, over jiff): what a panel compiles its zone in with.
cargo build --quiet -p redmark-core --release --features tz --target thumbv7em-none-eabihf
if cargo tree -p redmark-core --features tz --target thumbv7em-none-eabihf -e normal,features,no-proc-macro \
    --prefix none 2>/dev/null | grep -qE 'feature "(alloc|std)"'; then
    echo "no-std check: the core's tree with feature tz enables alloc/std" >&2
    exit 1
fi
echo "no-std check: redmark-core --features tz builds for thumbv7em-none-eabihf with no alloc/std"
cargo build --quiet -p redmark-core --release --example extend_meeting --target thumbv7em-none-eabihf
echo "no-std check: the extend_meeting example builds for thumbv7em-none-eabihf"
# "Your first tool that asks" (core/examples/first_tool.rs, the crate docs' opening example),
# on the derives of redmark-macros, for a Cortex-M0+.
cargo build --quiet -p redmark-core --release --example first_tool --target thumbv6m-none-eabi
echo "no-std check: the first_tool example builds for thumbv6m-none-eabi"
cargo build --quiet -p redmark-core --release --example report_fault --target thumbv6m-none-eabi
echo "no-std check: the report_fault example (serde arguments) builds for thumbv6m-none-eabi"
if grep -rnE '^\s*(extern crate (alloc|std)|use (alloc|std)::)' core/src core/examples; then
    echo "no-std check: core/src or core/examples names alloc or std" >&2
    exit 1
fi
