#!/bin/sh
# Builds Ory Hydra (the bench's Go peer) from the Go module proxy into a cache outside the repo.
# The module proxy is the only source this machine reaches (not github.com), so Hydra is pulled as
# a Go tool of a module of its own. That module must repeat Hydra's go.mod `replace` of
# gobuffalo/pop (replaces only apply in the main module); without it pop's upstream version breaks
# the build. Hydra's other replace (hydra-client-go => ./internal/httpclient) points inside its own
# repository, which the module zip does not carry; the published hydra-client-go it requires is used.
# Usage: sh bench/hydra/build.sh   (prints the binary's path; a cached binary is reused)
set -eu
VERSION=v2.3.0
POP_REPLACE='github.com/gobuffalo/pop/v6=github.com/ory/pop/v6@v6.2.1-0.20241121111754-e5dfc0f3344b'
DIR="${OPENAUTH_BENCH_CACHE:-$HOME/.cache/openauth-bench}/hydra-$VERSION"
BIN="$DIR/hydra"
if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi
command -v go >/dev/null 2>&1 || { echo "go not found on PATH" >&2; exit 1; }
mkdir -p "$DIR/mod"
cd "$DIR/mod"
[ -f go.mod ] || go mod init openauth-bench/hydra >&2
go mod edit -replace "$POP_REPLACE"
GOFLAGS=-mod=mod go get -tool "github.com/ory/hydra/v2@$VERSION" >&2
# Lower priority: the machine is shared, this build takes minutes of both cores.
# Into a name of this process's own, then renamed: two benches building at once never run a half-written binary.
nice -n 10 go build -o "$BIN.$$.tmp" github.com/ory/hydra/v2 >&2
mv "$BIN.$$.tmp" "$BIN"
echo "$BIN"
