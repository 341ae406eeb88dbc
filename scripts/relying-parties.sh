#!/bin/sh
# Idempotent: the OpenID Connect relying parties of test/oidc/relyingParties.test.ts, from their
# registries, each behind a launcher in .tools/relying-parties/bin/ (nimbus, go-oidc, authlib):
# - Nimbus OAuth 2.0 SDK with OpenID Connect extensions (Maven Central, resolved by Maven into
#   ~/.m2 from test/oidc/nimbus/pom.xml; javac compiles test/oidc/nimbus/Main.java against it);
# - go-oidc and golang.org/x/oauth2 (the Go module proxy, pinned by test/oidc/go-oidc/go.sum);
# - Authlib (PyPI, in the project's .venv: scripts/authlib.sh).
# Java 17 and Maven come from Debian when missing (as scripts/generators.ts does); Go comes with the
# machine (Debian's is too old). A driver is rebuilt only when its sources changed. Prints the
# launchers' directory.
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/.tools/relying-parties"
mkdir -p "$out/bin"

have() { command -v "$1" >/dev/null 2>&1; }
stamp() { cat "$@" | sha256sum | cut -c1-16; }

if ! have java || ! have javac || ! have mvn; then
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends maven openjdk-17-jdk-headless >&2
fi
have go || { echo "relying-parties.sh: go not found on PATH (Go 1.23 or newer; Debian's is too old)" >&2; exit 1; }

# Nimbus: the dependency's classpath from Maven, the driver compiled by javac.
nimbus_src="$here/test/oidc/nimbus"
nimbus_stamp=$(stamp "$nimbus_src/pom.xml" "$nimbus_src/Main.java")
if [ "$(cat "$out/nimbus.stamp" 2>/dev/null)" != "$nimbus_stamp" ]; then
  rm -rf "$out/nimbus" && mkdir -p "$out/nimbus/classes"
  mvn -q -B -Dstyle.color=never -f "$nimbus_src/pom.xml" dependency:build-classpath -Dmdep.includeScope=runtime "-Dmdep.outputFile=$out/nimbus/classpath.txt" >&2
  javac -nowarn -d "$out/nimbus/classes" -cp "$(cat "$out/nimbus/classpath.txt")" "$nimbus_src/Main.java" >&2
  printf '#!/bin/sh\nexec java -cp "%s:%s" Main\n' "$out/nimbus/classes" "$(cat "$out/nimbus/classpath.txt")" > "$out/bin/nimbus"
  chmod +x "$out/bin/nimbus"
  echo "$nimbus_stamp" > "$out/nimbus.stamp"
fi

# go-oidc: built from its module (go.sum pins every download).
go_src="$here/test/oidc/go-oidc"
go_stamp=$(stamp "$go_src/go.mod" "$go_src/go.sum" "$go_src/main.go")
if [ "$(cat "$out/go-oidc.stamp" 2>/dev/null)" != "$go_stamp" ]; then
  (cd "$go_src" && GOFLAGS=-buildvcs=false go build -o "$out/bin/go-oidc" .) >&2
  echo "$go_stamp" > "$out/go-oidc.stamp"
fi

# Authlib: in .venv, with Flask and requests.
python=$(sh "$here/scripts/authlib.sh")
printf '#!/bin/sh\nexec "%s" "%s"\n' "$python" "$here/test/oidc/authlib_rp.py" > "$out/bin/authlib"
chmod +x "$out/bin/authlib"

echo "$out/bin"
