#!/usr/bin/env bash
# Installs Debian's headless-capable Chromium and its ChromeDriver (/usr/bin/chromium,
# /usr/bin/chromedriver) for the booking page's browser tests (tests/tests/web_page*.rs) and
# scripts/screenshots.sh. Idempotent: does nothing when both are there. Debian's package, not
# a browser download: the archive's current security build (its version is printed), since the
# archive keeps only that one and a pinned older build would stop installing.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    :
else
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium chromium-driver fonts-dejavu-core
fi
chromium --version 2>/dev/null
chromedriver --version
