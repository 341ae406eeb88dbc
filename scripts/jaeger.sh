#!/bin/sh
# Builds Jaeger v1.76.0 (cmd/jaeger: the collector-based Jaeger v2, all-in-one with memory storage,
# OTLP in, query API out) from the Go module proxy into a cache outside the repository, once, and
# prints its path. Later calls reuse the cached binary. Exits 3 with one line on stderr when Go is
# missing or the build fails, so a caller (the tracing test, the bench) can skip and say why.
set -e
version=v1.76.0
cache="${XDG_CACHE_HOME:-$HOME/.cache}/openauth-workflows/jaeger-$version"
bin="$cache/jaeger"
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
go=$(command -v go 2>/dev/null || true)
[ -z "$go" ] && [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go
if [ -z "$go" ]; then
  echo "jaeger.sh: no Go toolchain (go not on PATH nor in /usr/local/go/bin): cannot build Jaeger $version" >&2
  exit 3
fi
mkdir -p "$cache"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && "$go" mod init x >/dev/null 2>&1 &&
  "$go" get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$version" >"$tmp/log" 2>&1 &&
  "$go" build -o "$tmp/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger >>"$tmp/log" 2>&1); then
  echo "jaeger.sh: building Jaeger $version failed: $(tail -n 1 "$tmp/log")" >&2
  exit 3
fi
# rename is atomic: a concurrent caller never runs a half-written binary
mv -f "$tmp/jaeger" "$bin"
echo "$bin"
