#!/usr/bin/env bash
# Usage: build.sh GO OUTPUT_DIR LDFLAGS NAME=PACKAGE...  (in the Go module's directory)
# Builds each package into OUTPUT_DIR/NAME (via NAME.tmp, so a binary is
# either whole or absent) and logs to OUTPUT_DIR/build.log, one
# "== N/TOTAL go build PACKAGE" line per package, "== done" at the end.
set -euo pipefail
go=$1 out=$2 ldflags=$3
shift 3
total=$# n=0
# One build per output directory at a time: a second run (another
# provision on the same machine) waits for the first and reuses its result.
exec 9>"$out/.lock"
flock 9
if [ -e "$out/.complete" ] || [ -e "$out/.built" ]; then echo "== done (built by another run)" >>"$out/build.log"; exit 0; fi
exec >"$out/build.log" 2>&1
for spec in "$@"; do
  name=${spec%%=*} package=${spec#*=} n=$((n + 1))
  echo "== $n/$total go build $package"
  "$go" build -trimpath -ldflags "$ldflags" -o "$out/$name.tmp" "$package"
  mv "$out/$name.tmp" "$out/$name"
done
echo "== done"
touch "$out/.built"
