#!/usr/bin/env bash
# The README's quick start without make, on a fresh clone: create and
# activate the environment (`make venv`, `. .venv/bin/activate`), then plain
# `ansible-playbook playbooks/provision.yml`, `solve.yml`, `grade.yml` from
# the clone's root (ansible.cfg finds the clone as gsb.kai_lab), against a sim
# in a network namespace of its own with its own state and workdir, then
# teardown. The k3s target, which needs a VM, is syntax-checked and listed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
export KAI_LAB_CACHE=${KAI_LAB_CACHE:-$HOME/.cache/gsb-kai-lab}
work=$(mktemp -d /tmp/kai-lab-checkout.XXXXXX)
ns=kai-lab-checkout-$$
clone=$work/clone
in_ns() { "$repo/tests/in-netns.sh" "$ns" "$@"; }
cleanup() {
  status=$?
  if [ -f "$clone/.venv/bin/activate" ]; then
    (cd "$clone" && in_ns ansible-playbook playbooks/teardown.yml >"$work/teardown.log" 2>&1) \
      || { echo "teardown failed:"; tail -20 "$work/teardown.log"; status=1; }
  fi
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
  exit $status
}
trap cleanup EXIT

git clone -q --no-checkout "$repo" "$clone"
git -C "$clone" checkout -q "$(git -C "$repo" rev-parse HEAD)"
cd "$clone"
# Nothing of the caller's Ansible set-up may help: only the clone's ansible.cfg.
unset ANSIBLE_COLLECTIONS_PATH ANSIBLE_COLLECTIONS_PATHS ANSIBLE_CONFIG ANSIBLE_ROLES_PATH
# A new HOME, but the machine's Go caches: the sim's chart and binaries come
# from them, and the network namespace has no route to the Go proxy.
GOMODCACHE=$(go env GOMODCACHE) GOCACHE=$(go env GOCACHE)
export GOMODCACHE GOCACHE
export HOME=$work/home KAI_LAB_SIM_STATE=$work/sim
mkdir -p "$HOME"
make --no-print-directory venv >/dev/null
# shellcheck disable=SC1091
. .venv/bin/activate
lab=(-e "kai_lab_workdir=$work/gsb-kai")

echo "== k3s target: syntax and task list with the example inventory"
for playbook in provision solve grade reset teardown; do
  ansible-playbook -i playbooks/inventories/k3s.example.yml "playbooks/$playbook.yml" --syntax-check >/dev/null
done
tasks=$(ansible-playbook -i playbooks/inventories/k3s.example.yml playbooks/provision.yml --list-tasks)
grep -q 'Install KAI-Scheduler' <<<"$tasks"

for playbook in provision solve grade; do
  echo "== ansible-playbook playbooks/$playbook.yml (sim, fresh clone, no make)"
  start=$SECONDS
  extra=()
  [ "$playbook" = grade ] && extra=(-e kai_lab_lang=en -e kai_lab_grade_fail=true)
  if ! in_ns ansible-playbook "playbooks/$playbook.yml" "${lab[@]}" "${extra[@]}" >"$work/$playbook.log" 2>&1; then
    tail -40 "$work/$playbook.log"; echo "playbooks/$playbook.yml failed"; exit 1
  fi
  echo "   passed in $((SECONDS - start)) s"
done
python - "$work/gsb-kai/grade.json" playbooks/inventories/class-grade/class.json <<'PY'
import json, os, sys
grade = json.load(open(sys.argv[1]))
assert grade['score'] == 100.0 and grade['passed'], grade['counts']
# One learner: no class summary unless kai_lab_class_dir asks for one.
assert not os.path.exists(sys.argv[2]), sys.argv[2]
print('   grade.json: %s%%, no class summary for one learner' % grade['score'])
PY
