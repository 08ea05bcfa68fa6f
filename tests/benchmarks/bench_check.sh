#!/usr/bin/env bash
# Wall time of the learner's `kai-lab check STEP`, `kai-lab check` (the
# whole lab) and `kai-lab doctor` on a solved sim lab, median of N runs, and
# where one check's time goes. Targets: a step <= 1.0 s, the whole lab <= 1.5 s,
# the doctor < 0.5 s; a protected learner's step (issue 40) < 0.3 s.
# Needs a provisioned, solved sim lab (make provision solve); with
# KAI_LAB_SIM_STATE set, that sim's own $KAI_LAB_SIM_STATE/kai-lab. A lab
# provisioned with kai_lab_learner_user (a protected learner, its settings
# name learner_identity) is also checked as that learner: `sudo kai-lab check
# STEP` run as the user its sudo rule names (or KAI_LAB_BENCH_LEARNER), as
# the learner runs it.
#   tests/benchmarks/bench_check.sh [runs] [step]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
step=${2:-gang}
if [ -n "${KAI_LAB_SIM_STATE:-}" ]; then kai_lab=$KAI_LAB_SIM_STATE/kai-lab; else kai_lab=/usr/local/bin/kai-lab; fi
[ -x "$kai_lab" ] || { echo "no $kai_lab: provision the lab first (make provision solve)"; exit 1; }
time_it() {
  local s e
  s=$(date +%s.%N)
  "$@" >/tmp/kai-lab-bench-check.log 2>&1 || { cat /tmp/kai-lab-bench-check.log; echo "$* did not pass"; exit 1; }
  e=$(date +%s.%N)
  echo "$e - $s" | bc
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
python=$(head -n 1 "$kai_lab" | sed -e 's/^#!//' -e 's/ .*//')
lib=$(sed -n 's/^sys\.path\.insert(0, "\(.*\)")$/\1/p' "$kai_lab")
config=$(sed -n 's/^sys\.exit(main(config_path="\(.*\)"))$/\1/p' "$kai_lab")
# The protected learner: the settings name its identity, its sudo rule names it and this kai-lab.
learner=${KAI_LAB_BENCH_LEARNER:-}
if [ -z "$learner" ] && "$python" -I -c 'import json, sys; sys.exit(not json.load(open(sys.argv[1])).get("learner_identity"))' "$config"; then
  learner=$(grep -h -s -F " NOPASSWD: $kai_lab" /etc/sudoers.d/* | grep -v '^#' | awk 'NR == 1 {print $1}' || true)
fi
one=(); all=(); doctor=(); protected=()
for _ in $(seq "$runs"); do
  one+=("$(time_it "$kai_lab" check "$step")")
  all+=("$(time_it "$kai_lab" check)")
  doctor+=("$(time_it "$kai_lab" doctor)")
  # As the learner (setpriv: its uid, gid and groups, no login of its own to time), through its sudo rule.
  if [ -n "$learner" ]; then
    protected+=("$(time_it setpriv --reuid "$learner" --regid "$(id -g "$learner")" --init-groups sudo -n "$kai_lab" check "$step")")
  fi
done
printf 'runs: %d (median wall time of the command, interpreter start included)\n' "$runs"
printf '%-44s %8.3f s\n' "kai-lab check $step" "$(printf '%s\n' "${one[@]}" | median)"
printf '%-44s %8.3f s\n' "kai-lab check (the whole lab)" "$(printf '%s\n' "${all[@]}" | median)"
printf '%-44s %8.3f s\n' "kai-lab doctor (a healthy lab)" "$(printf '%s\n' "${doctor[@]}" | median)"
if [ -n "$learner" ]; then
  printf '%-44s %8.3f s\n' "kai-lab check $step as $learner (protected)" "$(printf '%s\n' "${protected[@]}" | median)"
else
  echo "kai-lab check $step as a protected learner: not timed (this lab has no learner_identity; provision with kai_lab_learner_user)"
fi
printf '%-44s %8.3f s\n' "python start alone ($python -I)" "$(time_it "$python" -I -c pass)"
echo "where one check's time goes (kai-lab check $step):"
"$python" -I tests/benchmarks/check_profile.py "$lib" "$config" "$step"
