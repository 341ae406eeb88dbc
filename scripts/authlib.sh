#!/bin/sh
# Idempotent: authlib's OpenID Connect client (with its Flask integration, the way a Python web app
# signs users in) and requests, from PyPI, in the project's Python venv under .venv/ (shared with
# scripts/schemathesis.sh). Prints the path of the venv's python.
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
venv="$here/.venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
if ! "$venv/bin/python" -c 'import authlib, flask, requests' 2>/dev/null; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'authlib>=1.6,<2' 'flask>=3,<4' 'requests>=2.32,<3'
fi
echo "$venv/bin/python"
