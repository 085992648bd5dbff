#!/usr/bin/env bash
# Installs Radicale (a CalDAV server) and the Python `caldav` client, pinned, into
# target/caldav-peer/venv (never committed): tests/tests/caldav*.rs start a throwaway Radicale
# per test and read and write its calendars with the client. Idempotent (pip only when a
# version differs); prints the venv. Needs python3 with venv.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/caldav-peer/venv
RADICALE=3.9.0
CALDAV=3.6.0
if ! "$venv/bin/python" -c "import sys; from importlib.metadata import version; sys.exit(version('radicale') != '$RADICALE' or version('caldav') != '$CALDAV')" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "radicale==$RADICALE" "caldav==$CALDAV"
fi
echo "$venv"
