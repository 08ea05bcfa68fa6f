#!/usr/bin/env bash
# The lab's figures, each the median of N runs (default 5) with the command
# it times, on a sim of its own (state directory bench-sim in the cache,
# port base 16700, a temporary workdir), so a learner's lab is untouched;
# torn down at the end. Needs the sim's binaries built (make lab once).
#   provision from an empty state (teardown before each run, not timed)
#   re-provision of the running, unchanged lab (each must report changed=0)
#   re-provision after one component was killed (the binder)
#   solve.yml on a reset lab, grade.yml on the solved lab
#   kai-lab check (tests/benchmarks/bench_check.sh) on the solved lab
#   the resident memory of every process of the sim, summed
# Usage: tests/benchmarks/bench_lab.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
export KAI_LAB_SIM_STATE="${KAI_LAB_CACHE:-$HOME/.cache/gsb-kai-lab}/bench-sim"
work=$(mktemp -d)
extra=(-e kai_lab_sim_port_base="${KAI_LAB_BENCH_PORT_BASE:-16700}" -e kai_lab_workdir="$work/gsb-kai")
log=$work/run.log
trap 'ansible-playbook playbooks/teardown.yml "${extra[@]}" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

run() { ansible-playbook "playbooks/$1.yml" "${extra[@]}" >"$log" 2>&1 || { tail -40 "$log" >&2; echo "$1.yml failed" >&2; exit 1; }; }
# Wall seconds of one playbook run.
timed() {
  local s e
  s=$(date +%s.%N)
  run "$1"
  e=$(date +%s.%N)
  echo "$e - $s" | bc
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
range() { sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo, hi }'; }
report() {
  local what=$1 command=$2
  shift 2
  printf '%-52s %7.2f s  (%s of %d; %s)\n' "$what" "$(printf '%s\n' "$@" | median)" \
    "$(printf '%s\n' "$@" | range)" "$#" "$command"
}

printf 'load average at start: %s (2 cores: %s)\n' "$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)"
run teardown

empty=()
for _ in $(seq "$runs"); do
  run teardown
  empty+=("$(timed provision)")
done
report "provision from an empty state, binaries built" "ansible-playbook playbooks/provision.yml after teardown.yml" "${empty[@]}"

unchanged=()
for i in $(seq "$runs"); do
  unchanged+=("$(timed provision)")
  grep -q 'changed=0 ' "$log" || { tail -30 "$log" >&2; echo "re-provision $i changed something" >&2; exit 1; }
done
report "re-provision, the lab up and unchanged" "ansible-playbook playbooks/provision.yml" "${unchanged[@]}"

killed=()
pid_file=$KAI_LAB_SIM_STATE/kai/pids/binder.pid
for _ in $(seq "$runs"); do
  kill -KILL "$(cat "$pid_file")"
  killed+=("$(timed provision)")
  grep -q 'binder: not running' "$log" || { tail -30 "$log" >&2; echo "provision did not name the killed binder" >&2; exit 1; }
done
report "re-provision after the binder was killed" "kill -KILL the binder; ansible-playbook playbooks/provision.yml" "${killed[@]}"

solve=()
grade=()
for _ in $(seq "$runs"); do
  run reset
  solve+=("$(timed solve)")
  grade+=("$(timed grade)")
done
report "solve.yml on a reset lab" "ansible-playbook playbooks/solve.yml after reset.yml" "${solve[@]}"
report "grade.yml on the solved lab" "ansible-playbook playbooks/grade.yml" "${grade[@]}"

# The learner's check on the same solved lab (its own kai-lab, in the state directory).
tests/benchmarks/bench_check.sh "$runs"

# The sim's processes: every pid file in its state directory (kwokctl's
# control plane, KAI's components, fake-gpu-operator), each counted once.
rss_total=0
rss_lines=()
declare -A seen=()
while IFS= read -r pid_file; do
  pid=$(cat "$pid_file" 2>/dev/null) || continue
  [[ $pid =~ ^[0-9]+$ ]] && [ -z "${seen[$pid]:-}" ] || continue
  seen[$pid]=1
  kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || continue
  [ -n "$kb" ] || continue
  rss_total=$((rss_total + kb))
  rss_lines+=("$(printf '%6d MiB  %s' $((kb / 1024)) "$(basename "$pid_file" .pid)")")
done < <(find "$KAI_LAB_SIM_STATE" -name '*.pid')
printf '%-52s %7d MiB (%d processes; VmRSS of each, on the solved lab)\n' "the sim's resident memory" \
  $((rss_total / 1024)) "${#rss_lines[@]}"
printf '  %s\n' "${rss_lines[@]}" | sort -rn -k1,1
printf 'load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
