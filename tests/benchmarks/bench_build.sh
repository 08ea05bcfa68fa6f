#!/usr/bin/env bash
# A fresh machine's build of the sim's binaries: every module built with an
# empty Go build cache and module cache (so the Go proxy's downloads count
# too) into an empty cache directory, as `make lab` does on a new machine.
# Prints each module's build time (from its build.log) and the whole. Takes
# 10-20 minutes on 2 cores. Usage: tests/benchmarks/bench_build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(mktemp -d /tmp/kai-lab-bench-build.XXXXXX)
# The module cache is read-only, as Go writes it.
trap 'chmod -R u+w "$dir" 2>/dev/null; rm -rf "$dir"' EXIT
export GOCACHE=$dir/go-build GOMODCACHE=$dir/go-mod KAI_LAB_CACHE=$dir/cache
printf 'load average at start: %s (2 cores: %s)\n' "$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)"
s=$(date +%s)
ansible-playbook tests/benchmarks/build_only.yml >"$dir/run.log" 2>&1 || { tail -40 "$dir/run.log"; exit 1; }
e=$(date +%s)
for log in "$KAI_LAB_CACHE"/bin/*/build.log; do
  module=$(basename "$(dirname "$log")")
  printf '%-46s %5s s  %s\n' "$module" "$(sed -n 's/^== done in \([0-9]*\) s$/\1/p' "$log")" \
    "$(sed -n 's/^== \([0-9]* packages to compile for [0-9]* binaries\).*/\1/p' "$log")"
done
printf '%-46s %5d s  (tests/benchmarks/bench_build.sh)\n' \
  "all builds, wall time" $((e - s))
printf 'load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
