#!/usr/bin/env bash
# A class of four on one machine, graded in one run of the installed
# collection's gsb.kai_lab.grade: three learners, each a sim in a network
# namespace of its own (same ports, own state and workdir; Ansible runs each
# host's Python through `ip netns exec`), one who solved the lab, one who did
# nothing, one who solved it but left hostile text in nolimit.txt (a <script>
# tag and a spreadsheet formula), and a fourth host that cannot be reached.
# The class summary must have the right rows, quote the hostile text inertly
# (see tests/unit/test_class_report*.py for the rendering itself), and the
# page is opened in headless Chromium; the screenshot and the summary are
# kept in tests/output/class-grade/.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
export KAI_LAB_CACHE=${KAI_LAB_CACHE:-$HOME/.cache/gsb-kai-lab}
work=$(mktemp -d /tmp/kai-lab-class.XXXXXX)
output=$repo/tests/output/class-grade
learners=(learner1 learner2 learner3)
ns_of() { echo "kai-lab-$1-$$"; }
python=$(command -v python)
cleanup() {
  status=$?
  if [ -f "$work/class.yml" ]; then
    (cd "$repo" && ansible-playbook -i "$work/class.yml" playbooks/teardown.yml --limit 'all:!learner4' \
      >"$work/teardown.log" 2>&1) || { echo "teardown failed:"; tail -20 "$work/teardown.log"; status=1; }
  fi
  for learner in "${learners[@]}"; do ip netns del "$(ns_of "$learner")" 2>/dev/null || true; done
  rm -rf "$work"
  exit $status
}
trap cleanup EXIT

{
  echo "kai_lab:"
  echo "  hosts:"
  for learner in "${learners[@]}"; do
    # Creates the namespace (loopback, a default route kube-apiserver needs).
    "$repo/tests/in-netns.sh" "$(ns_of "$learner")" true
    mkdir -p "$work/$learner"
    # ansible-core 2.19 quotes the interpreter as one word, so a wrapper
    # enters the namespace (every module, and what it starts, runs there).
    printf '#!/bin/sh\nexec ip netns exec %s %s "$@"\n' "$(ns_of "$learner")" "$python" >"$work/$learner/python"
    chmod +x "$work/$learner/python"
    cat <<HOST
    $learner:
      ansible_connection: local
      ansible_python_interpreter: $work/$learner/python
      kai_lab_sim_state_dir: $work/$learner/sim
      kai_lab_workdir: $work/$learner/gsb-kai
      sim_cluster_user_kubeconfig: $work/$learner/kubeconfig
HOST
  done
  cat <<HOST
    learner4:
      ansible_connection: ssh
      ansible_host: 127.0.0.1
      ansible_port: 1
      ansible_user: root
  vars:
    kai_lab_target: sim
    kai_lab_lang: en
HOST
} >"$work/class.yml"

run() {
  local what=$1; shift
  local start=$SECONDS
  if ! "$@" >"$work/$what.log" 2>&1; then
    tail -40 "$work/$what.log"; echo "$what failed"; exit 1
  fi
  echo "   $what: $((SECONDS - start)) s"
}
cd "$repo"
echo "== provision three sims in parallel, solve learner1 and learner3"
run provision ansible-playbook -i "$work/class.yml" playbooks/provision.yml --limit 'all:!learner4' -f 4
run solve ansible-playbook -i "$work/class.yml" playbooks/solve.yml --limit learner1,learner3
printf '%s\n' "<script>document.title='pwned'</script><img src=x onerror=alert(1)>" \
  "=cmd|' /C calc'!A0" >"$work/learner3/gsb-kai/nolimit.txt"

echo "== grade the class with the installed collection"
unset ANSIBLE_COLLECTIONS_PATHS ANSIBLE_CONFIG
ansible-galaxy collection build --output-path "$work" >/dev/null
ansible-galaxy collection install --force --no-deps -p "$work/collections" "$work"/gsb-kai_lab-*.tar.gz >/dev/null 2>&1
(cd "$work" && ANSIBLE_COLLECTIONS_PATH=$work/collections run grade \
  ansible-playbook -i "$work/class.yml" gsb.kai_lab.grade -f 4)

rm -rf "$output" && mkdir -p "$output"
cp "$work"/class-grade/* "$output/"
for learner in "${learners[@]}"; do cp "$work/$learner/gsb-kai/grade.json" "$output/grade-$learner.json"; done
python - "$output" <<'PY'
import csv, json, sys
out = sys.argv[1]
summary = json.load(open(out + '/class.json'))
rows = dict((row['learner'], row) for row in summary['learners'])
assert sorted(rows) == ['learner1', 'learner2', 'learner3', 'learner4'], sorted(rows)
assert rows['learner1']['passed'] and rows['learner1']['score'] == 100.0, rows['learner1']['score']
assert rows['learner2']['status'] == 'graded' and rows['learner2']['score'] == 0.0, rows['learner2']['score']
bad = [(s['id'], s['status']) for s in rows['learner3']['steps'] if s['status'] != 'passed']
assert bad == [('nolimit', 'failed')], bad
failing = [c['id'] for s in rows['learner3']['steps'] for c in s['failing']]
assert failing == ['nolimit.reason'], failing
assert rows['learner4']['status'] == 'unreachable', rows['learner4']
html = open(out + '/class.html').read()
assert '<script' not in html and '&lt;script&gt;' in html
cells = [cell for row in csv.reader(open(out + '/class.csv')) for cell in row]
assert not [c for c in cells if c[:1] and c[:1] in '=+-@'], 'a CSV cell starts like a formula'
assert any('calc' in c for c in cells), 'the hostile text is not quoted in the CSV'
print('   class: %s' % summary['counts'])
for row in summary['learners']:
    print('   %-9s %-11s %s' % (row['learner'], row['status'], row['score']))
PY

echo "== class.html in headless Chromium"
python "$repo/tests/browse.py" "$output/class.html" "$output/class.png" 'pwned'
