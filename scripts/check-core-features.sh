#!/usr/bin/env bash
# Each of the core's features alone (with `derive`, which every build has) builds without a
# warning: a panel picks a few of them, and a change that leaves an import or a function to
# one feature shows here rather than in the one build that happens to lack it.
set -euo pipefail
cd "$(dirname "$0")/.."
features=$(cargo metadata --no-deps --format-version 1 --locked | python3 -c '
import json, sys
core = next(p for p in json.load(sys.stdin)["packages"] if p["name"] == "redmark-core")
print(" ".join(f for f in core["features"] if f not in ("default", "derive")))')
for feature in "" $features; do
    cargo clippy --quiet --locked -p redmark-core --lib --no-default-features \
        --features "derive${feature:+,$feature}" -- -D warnings
    echo "core features: derive${feature:+,$feature}: clean"
done
