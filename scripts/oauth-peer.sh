#!/usr/bin/env bash
# Installs what tests/tests/oauth.rs runs against, at pinned versions, into target/oauth-peer/
# (never committed): the authorization server oidc-provider (npm, pinned with its dependencies by
# tests/peers/oauth/package-lock.json) and the official Python SDK 2.3 client in a venv.
# Idempotent (npm ci only when the lockfile changed, pip only when the version differs); prints
# the folder. Needs node >= 20.19 (oidc-provider 9 is ESM and loads jose 6), npm, python3 -m venv.
set -euo pipefail
cd "$(dirname "$0")/.."
src=tests/peers/oauth
dir=target/oauth-peer
mkdir -p "$dir"
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' ||
    { echo "oauth-peer: oidc-provider 9 needs node >= 20.19 (found $(node --version))" >&2; exit 1; }
if ! cmp -s "$src/package-lock.json" "$dir/package-lock.json" ||
    ! [ -f "$dir/node_modules/oidc-provider/package.json" ]; then
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --silent --no-audit --no-fund)
fi
PY_MCP=2.3.0
if ! "$dir/venv/bin/python" -c "import sys; from importlib.metadata import version; sys.exit(version('mcp') != '$PY_MCP')" 2>/dev/null; then
    python3 -m venv "$dir/venv"
    "$dir/venv/bin/pip" install -q "mcp==$PY_MCP"
fi
echo "$dir"
