#!/usr/bin/env bash
# Installs the Python `icalendar` package, pinned, into target/ical-peer/venv (never
# committed): tests/tests/calendar_feed.rs parses redmark's .ics feeds with it. Idempotent (pip
# only when the version differs); prints the venv. Needs python3 with venv.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/ical-peer/venv
ICALENDAR=7.3.2
if ! "$venv/bin/python" -c "import sys; from importlib.metadata import version; sys.exit(version('icalendar') != '$ICALENDAR')" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "icalendar==$ICALENDAR"
fi
echo "$venv"
