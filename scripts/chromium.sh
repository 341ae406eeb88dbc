#!/bin/sh
# Installs Debian's chromium for the browser test when it is missing (idempotent). playwright-core
# never downloads a browser of its own: tests launch /usr/bin/chromium.
set -e
command -v chromium >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)
command -v chromium
