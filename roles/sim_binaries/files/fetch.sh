#!/usr/bin/env bash
# Usage: fetch.sh GO LOG DIR "PACKAGE..." [DIR "PACKAGE..."]...
# Downloads what each build will compile (the same `go list -deps` that
# build.sh starts with), one module after another, so the Go proxy's
# downloads of the later builds happen while the first one compiles. Best
# effort: a module the proxy refuses fails in its own build, with its log.
set -uo pipefail
go=$1 log=$2
shift 2
exec >"$log" 2>&1
while [ $# -ge 2 ]; do
  dir=$1 packages=$2
  shift 2
  started=$SECONDS
  # shellcheck disable=SC2086 # package paths never hold spaces
  if (cd "$dir" && "$go" list -deps $packages >/dev/null); then
    echo "== $dir: fetched in $((SECONDS - started)) s"
  else
    echo "== $dir: fetch failed after $((SECONDS - started)) s (its build will say why)"
  fi
done
