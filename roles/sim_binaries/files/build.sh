#!/usr/bin/env bash
# Usage: build.sh GO OUTPUT_DIR LDFLAGS NAME=PACKAGE...  (in the Go module's directory)
# Builds every package in ONE `go build`, so the go command compiles shared
# packages once and links each binary while it compiles the next (both
# cores busy), into OUTPUT_DIR/NAME. Logs to OUTPUT_DIR/build.log:
#   "== N packages to compile for M binaries: NAME..." first, then each
#   package as it is compiled (go build -v), "== done in S s" at the end.
# The caller marks the directory complete; a binary is trusted only then,
# and only as OUTPUT_DIR/.sha256 (sha256sum's format) says it was built.
set -euo pipefail
go=$1 out=$2 ldflags=$3
shift 3
# One build per output directory at a time: a second run (another
# provision on the same machine) waits for the first and reuses its result.
exec 9>"$out/.lock"
flock 9
if [ -e "$out/.complete" ] || [ -e "$out/.built" ]; then echo "== done (built by another run)" >>"$out/build.log"; exit 0; fi
exec >"$out/build.log" 2>&1
started=$SECONDS
names=() packages=()
for spec in "$@"; do names+=("${spec%%=*}"); packages+=("${spec#*=}"); done
# go list also downloads what the Go proxy must give (logged as "go: downloading").
echo "== $("$go" list -deps "${packages[@]}" | wc -l) packages to compile for ${#names[@]} binaries: ${names[*]}"
work=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$go" build -v -trimpath -ldflags "$ldflags" -o "$work/" "${packages[@]}"
for i in "${!names[@]}"; do
  # go build names a binary after its package's last path element, skipping
  # a major-version element (go.etcd.io/etcd/server/v3 -> server).
  base=${packages[$i]##*/}
  if [[ $base =~ ^v[0-9]+$ ]]; then base=${packages[$i]%/*} base=${base##*/}; fi
  mv "$work/$base" "$out/${names[$i]}"
done
# What each binary is, for the check before it is reused (module kai_lab_sim_binaries).
(cd "$out" && sha256sum -- "${names[@]}") >"$work/.sha256"
mv "$work/.sha256" "$out/.sha256"
echo "== done in $((SECONDS - started)) s"
touch "$out/.built"
