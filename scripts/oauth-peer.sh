#!/usr/bin/env bash
# Installs what tests/tests/oauth.rs runs against, at pinned versions, into target/oauth-peer/
# (never committed): the authorization server oidc-provider and the Node 22 it supports (npm's
# `node` package; the machine's own node may be older), both pinned with their dependencies by
# tests/peers/oauth/package-lock.json; and the official Python SDK 2.3 client
# (scripts/sdk-peer.sh, into target/sdk-peers/venv). Idempotent (npm ci only when the lockfile
# changed); prints the folder. Needs npm (any Node) and python3 with venv.
set -euo pipefail
cd "$(dirname "$0")/.."
src=tests/peers/oauth
dir=target/oauth-peer
mkdir -p "$dir"
if ! cmp -s "$src/package-lock.json" "$dir/package-lock.json" ||
    ! [ -f "$dir/node_modules/oidc-provider/package.json" ] || ! [ -x "$dir/node_modules/.bin/node" ]; then
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --silent --no-audit --no-fund)
fi
scripts/sdk-peer.sh > /dev/null
echo "$dir"
