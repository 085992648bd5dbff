#!/usr/bin/env bash
# Regenerates docs/screenshots/*.png (the question form, the red mark, the floor, a phone's
# width) from the booking page in headless Chromium: the browser test
# tests/tests/web_page.rs takes them at those moments when REDMARK_SCREENSHOTS names a folder.
# Installs Chromium and ChromeDriver first (scripts/browser.sh) when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/browser.sh >/dev/null
out="$PWD/docs/screenshots"
mkdir -p "$out"
REDMARK_REQUIRE_BROWSER=1 REDMARK_SCREENSHOTS="$out" \
    cargo test --locked -q -p redmark-tests --test web_page -- --exact \
    book_pick_mark_decline_cancel_and_a_second_tab
ls -l "$out"/*.png
