#!/usr/bin/env bash
# Installs the 2025-11-25 ("legacy") MCP peers the tests/tests/legacy_*.rs tests drive, at
# pinned versions, into target/legacy-peers/ (never committed): the official Python SDK 1.x in a
# venv and the official TypeScript SDK 1.x through npm. Idempotent; prints the folder.
set -euo pipefail
cd "$(dirname "$0")/.."
PY_MCP=1.30.0
TS_SDK=1.32.2
dir=target/legacy-peers
mkdir -p "$dir"
if ! "$dir/venv/bin/python" -c "import mcp, sys; from importlib.metadata import version; sys.exit(version('mcp') != '$PY_MCP')" 2>/dev/null; then
    python3 -m venv "$dir/venv"
    "$dir/venv/bin/pip" install -q "mcp==$PY_MCP"
fi
if ! [ -f "$dir/node/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
    ! grep -q "\"version\": \"$TS_SDK\"" "$dir/node/node_modules/@modelcontextprotocol/sdk/package.json"; then
    mkdir -p "$dir/node"
    (cd "$dir/node" && { [ -f package.json ] || echo '{"private":true,"type":"module"}' >package.json; } &&
        npm install --silent --no-audit --no-fund "@modelcontextprotocol/sdk@$TS_SDK")
fi
echo "$dir"
