#!/usr/bin/env bash
# Installs the official Python MCP SDK 2.3 (a 2026-07-28 client), pinned, into
# target/sdk-peers/venv (never committed): tests/tests/qemu_net.rs and tests/tests/oauth.rs
# drive it. Idempotent (pip only when the version differs); prints the venv. Needs python3 with
# venv.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/sdk-peers/venv
PY_MCP=2.3.0
if ! "$venv/bin/python" -c "import sys; from importlib.metadata import version; sys.exit(version('mcp') != '$PY_MCP')" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "mcp==$PY_MCP"
fi
echo "$venv"
