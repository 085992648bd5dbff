#!/usr/bin/env bash
# Installs what tests/tests/mcp_app.rs loads into Chromium, at pinned versions, into
# target/app-peer/ (never committed): the MCP Apps extension's host bridge
# (@modelcontextprotocol/ext-apps 2.0.x) and the TypeScript SDK v2 client it needs as a peer, with
# their dependencies, pinned by tests/peers/app/package-lock.json. The browser loads them as ES
# modules from node_modules (no bundler). Idempotent (npm ci only when the lockfile changed);
# prints the folder. Needs npm (any Node).
set -euo pipefail
cd "$(dirname "$0")/.."
src=tests/peers/app
dir=target/app-peer
mkdir -p "$dir"
if ! cmp -s "$src/package-lock.json" "$dir/package-lock.json" ||
    ! [ -f "$dir/node_modules/@modelcontextprotocol/ext-apps/package.json" ]; then
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --silent --no-audit --no-fund)
fi
echo "$dir"
