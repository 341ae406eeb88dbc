#!/bin/sh
# Idempotent: the Python MCP SDK (`mcp` from PyPI, pinned) in the project's Python venv under .venv/
# (shared with scripts/schemathesis.sh and scripts/authlib.sh), for src/mcp/pythonClient.test.ts:
# a second MCP client beside the TypeScript SDK. An argument names another venv directory (a
# checkout whose .venv is shared with others keeps its own). Prints the path of the venv's python.
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-"$here/.venv"}
version=1.30.0
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
if [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null)" != "$version" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$version"
fi
echo "$venv/bin/python"
