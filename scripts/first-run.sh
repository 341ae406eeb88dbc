#!/bin/sh
# The README's first run, as a newcomer does it: a fresh clone in a private (mode 700) directory
# (as root in CI: PostgreSQL then runs as an OS user who cannot enter it), `npm start` on no
# configuration, /readyz answers 200, then SIGTERM to the process `npm start` started (what a
# container runtime sends to `CMD npm start`) stops node and the embedded PostgreSQL, quietly.
# Dependencies are hard-linked from this checkout's node_modules (installing them is not the test).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
home=$(mktemp -d) # mode 700
port=${FIRST_RUN_PORT:-3990}
pg_port=${FIRST_RUN_PG_PORT:-5990}
pid=
cleanup() {
  [ -n "$pid" ] && kill -KILL -"$pid" 2>/dev/null || true
  pg=$(readlink "$home/app/.data/pg" 2>/dev/null || true)
  case "$pg" in /var/lib/openauth-workflows/clusters/*) rm -rf "$pg" ;; esac
  rm -rf "$home"
}
trap cleanup EXIT
fail() {
  echo "first run: $1"
  sed 's/^/  | /' "$home/out.log" | tail -40
  exit 1
}

git clone -q "$here" "$home/app"
cp -al "$here/node_modules" "$home/app/node_modules"
cd "$home/app"
echo "fresh clone in $home (mode $(stat -c %a "$home"), uid $(id -u))"

start=$(date +%s)
setsid env PORT="$port" HOST=127.0.0.1 EMBEDDED_PG_PORT="$pg_port" npm start --silent >"$home/out.log" 2>&1 &
pid=$!
until curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
  kill -0 "$pid" 2>/dev/null || fail "npm start exited before it was ready"
  [ $(($(date +%s) - start)) -lt 120 ] || fail "not ready within 120 s"
  sleep 0.5
done
echo "ready in $(($(date +%s) - start)) s"
grep -q 'first start: creating the embedded PostgreSQL database' "$home/out.log" || fail "the first start did not say what it was doing"
postgres=$(head -1 .data/pg/postmaster.pid)

node_pid=$(ps -o pid= --ppid "$pid" | tr -d ' ')
[ -n "$node_pid" ] || fail "npm start started no process"
kill -TERM "$node_pid"
waited=0
while kill -0 "$pid" 2>/dev/null; do
  [ "$waited" -lt 25 ] || fail "still running 25 s after SIGTERM"
  sleep 1
  waited=$((waited + 1))
done
wait "$pid" && code=0 || code=$?
pid=
[ "$code" = 0 ] || fail "npm start exited $code after SIGTERM"
! kill -0 "$postgres" 2>/dev/null || fail "the embedded PostgreSQL ($postgres) still runs"
! grep -qE '^\s+at |"level":[56]0|Error' "$home/out.log" || fail "stopping printed errors"
echo "stopped on SIGTERM in under ${waited}+1 s: node and PostgreSQL gone, nothing but info logged"
