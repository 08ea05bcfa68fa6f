#!/usr/bin/env bash
# Wall time of solve.yml on a freshly reset sim lab, and of each step, plus
# the time from pod creation to Running for a KAI pod (p1). Needs a
# provisioned sim (make provision). Usage: tests/benchmarks/bench_solve.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
ansible-playbook playbooks/reset.yml > /tmp/kai-lab-bench.log 2>&1 || { cat /tmp/kai-lab-bench.log; exit 1; }
s=$(date +%s.%N)
ansible-playbook playbooks/solve.yml > /tmp/kai-lab-bench.log 2>&1 || { cat /tmp/kai-lab-bench.log; exit 1; }
e=$(date +%s.%N)
printf '%-28s %8.2f s\n' "solve.yml (whole play)" "$(echo "$e - $s" | bc)"
sed -n "/Show how long each step took/,/PLAY RECAP/p" /tmp/kai-lab-bench.log | grep -oE '[a-z_]+: [0-9.]+ s' \
  | awk -F'[: ]+' '{printf "  step %-20s %8.2f s\n", $1, $2}'
kubeconfig="${KAI_LAB_SIM_STATE:-$HOME/.local/state/gsb-kai-lab/sim}/kwok/clusters/kai-lab/kubeconfig.yaml"
kubectl --kubeconfig "$kubeconfig" -n kai-lab get pod p1 -o json | python3 -c '
import json, sys, datetime
pod = json.load(sys.stdin)
created = datetime.datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
ready = [c for c in pod["status"]["conditions"] if c["type"] == "Ready"][0]
running = datetime.datetime.fromisoformat(ready["lastTransitionTime"].replace("Z", "+00:00"))
print("%-28s %8.2f s (API timestamps, 1 s resolution)" % ("p1 created -> Ready", (running - created).total_seconds()))'
