#!/usr/bin/env bash
# Installs what tests/tests/oauth.rs runs against, at pinned versions, into target/oauth-peer/
# (never committed): the authorization server oidc-provider and the Node 22 it supports (npm's
# `node` package; the machine's own node may be older), both pinned with their dependencies by
# tests/peers/oauth/package-lock.json; and the official Python SDK 2.3 client
# (scripts/sdk-peer.sh, into target/sdk-peers/venv). Idempotent (npm ci only when the lockfile
# changed); prints the folder. Needs npm (any Node) and python3 with venv.
#
# `scripts/oauth-peer.sh --serve PORT --resource URL` then runs that authorization server by
# hand, for docs/oauth.md's "Try it locally": on http://127.0.0.1:PORT, issuing tokens for the
# redmark at URL (its --resource), with the booking page at URL's origin as a public client.
# It says its clients on stderr and stops on Ctrl-C (or when its stdin closes).
set -euo pipefail
cd "$(dirname "$0")/.."
serve_port=
resource=
while [ $# -gt 0 ]; do
    case "$1" in
    --serve) serve_port=${2:?--serve PORT}; shift 2 ;;
    --resource) resource=${2:?--resource URL}; shift 2 ;;
    *) echo "usage: $0 [--serve PORT --resource URL]" >&2; exit 2 ;;
    esac
done
if [ -n "$serve_port" ] && ! [[ "$resource" =~ ^(https?://[^/]+)/ ]]; then
    echo "$0: --serve needs --resource URL, redmark's /mcp URL (e.g. http://127.0.0.1:8080/mcp)" >&2
    exit 2
fi
src=tests/peers/oauth
dir=target/oauth-peer
mkdir -p "$dir"
if ! cmp -s "$src/package-lock.json" "$dir/package-lock.json" ||
    ! [ -f "$dir/node_modules/oidc-provider/package.json" ] || ! [ -x "$dir/node_modules/.bin/node" ]; then
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --silent --no-audit --no-fund)
fi
if [ -z "$serve_port" ]; then
    scripts/sdk-peer.sh > /dev/null
    echo "$dir"
    exit 0
fi
page="${BASH_REMATCH[1]}/"
cat >&2 <<EOT
oidc-provider: issuer http://127.0.0.1:$serve_port, access tokens (JWT, RS256) for $resource
  client credentials: alice, bob (scopes rooms:read rooms:write), reader (rooms:read);
    secret: the client id followed by -secret-0123456789, e.g. alice-secret-0123456789
  the booking page: public client redmark-page (authorization code + PKCE), redirect $page;
    sign in with any login name and password (the name is your sub)
  signing keys: $dir/try-keys-$serve_port.json; Ctrl-C stops it
EOT
REDMARK_OAUTH_PEER_DIR="$dir" exec "$dir/node_modules/.bin/node" tests/peers/oauth/server.mjs \
    --keys "$dir/try-keys-$serve_port.json" --port "$serve_port" --resource "$resource" --page-redirect "$page"
