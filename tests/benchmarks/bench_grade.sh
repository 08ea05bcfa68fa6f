#!/usr/bin/env bash
# Wall time of grade.yml on a solved sim lab, and of the same checks written
# as plain kubernetes.core.k8s_info + assert tasks, side by side.
# Needs a provisioned, solved sim lab (make provision solve). Usage:
#   tests/benchmarks/bench_grade.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
time_it() { local s e; s=$(date +%s.%N); "$@" > /tmp/kai-lab-bench.log 2>&1 || { cat /tmp/kai-lab-bench.log; exit 1; }; e=$(date +%s.%N); echo "$e - $s" | bc; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ours=(); plain=(); module=()
for _ in $(seq "$runs"); do
  ours+=("$(time_it ansible-playbook playbooks/grade.yml)")
  plain+=("$(time_it ansible-playbook tests/benchmarks/grade_plain.yml)")
  module+=("$(grep -o '"duration": [0-9.]*' "${KAI_LAB_WORKDIR:-/root/gsb-kai}/grade.json" | head -1 | awk '{print $2}')")
done
m_ours=$(printf '%s\n' "${ours[@]}" | median)
m_plain=$(printf '%s\n' "${plain[@]}" | median)
printf 'runs: %d (median wall time of the whole ansible-playbook run)\n' "$runs"
printf '%-44s %8.2f s\n' "grade.yml (gsb.kai_lab.kai_lab_grade)" "$m_ours"
printf '%-44s %8.2f s\n' "plain k8s_info + assert playbook" "$m_plain"
printf '%-44s %8.3f s\n' "  of which the grade itself (grade.json)" "$(printf '%s\n' "${module[@]}" | median)"
printf '%-44s %8.1fx\n' "speed-up" "$(echo "$m_plain / $m_ours" | bc -l)"
