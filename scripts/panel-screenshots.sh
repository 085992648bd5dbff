#!/usr/bin/env bash
# Retakes the door panel's screenshots (docs/panel-face-*.png, shown in docs/panel.md): boots
# the networked panel under QEMU with an SNTP responder and saves QEMU's screendumps, as PNG, at
# each step of tests/tests/qemu_face.rs's screen tests (no time, free, booked, busy; booked with
# the "book now" button; a walk-up booking extended and ended with the door's buttons) instead of comparing them with the goldens. Needs what the QEMU tests need (qemu-system-arm, the
# thumbv7m-none-eabi target).
set -euo pipefail
cd "$(dirname "$0")/.."
REDMARK_RETAKE_SCREENS=1 REDMARK_REQUIRE_PANEL=1 \
  cargo test -p redmark-tests --test qemu_face -- --exact \
  the_screen_shows_no_time_then_free_then_the_booking_and_busy_until_it_ends \
  book_now_at_the_door_books_the_hour_under_way_once_and_only_with_a_time \
  the_door_books_extends_and_ends_a_walk_up_booking_that_mcp_clients_see \
  a_booking_checked_in_at_the_door_stays_and_one_nobody_checked_in_to_is_released
REDMARK_RETAKE_SCREENS=1 REDMARK_REQUIRE_PANEL=1 \
  cargo test -p redmark-tests --test qemu_zone
ls -l docs/panel-face-*.png
