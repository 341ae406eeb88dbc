#!/bin/sh
# Idempotent: a Python venv under .venv/ with schemathesis from PyPI. Prints the path of `st`.
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
venv="$here/.venv"
if [ ! -x "$venv/bin/st" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'schemathesis>=4,<5'
fi
echo "$venv/bin/st"
