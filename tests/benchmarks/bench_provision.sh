#!/usr/bin/env bash
# Wall time of provision.yml: from an empty state with built binaries, then
# re-provisions of the running lab that change nothing (each must report
# changed=0; the lab is up and unchanged, so provision only checks it), and
# their median. Runs its own sim (own state directory, port base 16700), so a
# learner's lab is untouched; tears it down at the end. Usage:
#   tests/benchmarks/bench_provision.sh [re-provision runs, default 5]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
export KAI_LAB_SIM_STATE="${KAI_LAB_CACHE:-$HOME/.cache/gsb-kai-lab}/bench-sim"
work=$(mktemp -d)
extra=(-e kai_lab_sim_port_base="${KAI_LAB_BENCH_PORT_BASE:-16700}" -e kai_lab_workdir="$work/gsb-kai")
log=/tmp/kai-lab-bench-provision.log
trap 'ansible-playbook playbooks/teardown.yml "${extra[@]}" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
ansible-playbook playbooks/teardown.yml "${extra[@]}" >"$log" 2>&1
# Prints: wall seconds, CPU seconds (user+sys of the whole run: less
# dependent on what else the machine runs), the recap's ok and changed counts.
time_it() {
  local s e cpu
  s=$(date +%s.%N)
  cpu=$( { TIMEFORMAT='%U %S'; time ansible-playbook playbooks/provision.yml "${extra[@]}" >"$log" 2>&1; } 2>&1 ) \
    || { tail -40 "$log" >&2; exit 1; }
  e=$(date +%s.%N)
  printf '%8.2f s  cpu %6.2f s  (ok=%s %s)' "$(echo "$e - $s" | bc)" "$(echo "${cpu% *} + ${cpu#* }" | bc)" \
    "$(grep -oE 'ok=[0-9]+' "$log" | tail -1 | cut -d= -f2)" "$(grep -oE 'changed=[0-9]+' "$log" | tail -1)"
}
result=$(time_it) || exit 1
printf '%-48s %s\n' "provision from an empty state (built binaries)" "$result"
walls=()
for i in $(seq "$runs"); do
  result=$(time_it) || exit 1
  printf '%-48s %s\n' "re-provision, nothing to change, run $i" "$result"
  grep -q 'changed=0' <<<"$result" || { echo "re-provision run $i changed something" >&2; exit 1; }
  walls+=("${result%% s *}")
done
median=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
printf '%-48s %8.2f s  (ansible-playbook playbooks/provision.yml on the running, unchanged lab)\n' \
  "re-provision unchanged, median of $runs" "$median"
printf 'load average: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
