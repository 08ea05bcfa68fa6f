#!/usr/bin/env bash
# The collection as an Ansible user installs it: `ansible-galaxy collection
# build`, `ansible-galaxy collection install` of the tarball into a fresh
# path, then, from a directory without this repository's ansible.cfg: the
# documentation of every module and role, a syntax check of every playbook
# as gsb.kai_lab.<name>, the clear message for an inventory without a
# kai_lab group, Ansible's own message for a wrong kai_lab_target, and a
# grade run with kai_lab_hosts naming an unreachable
# learner, which must be a row of the class summary, not a failed run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/kai-lab-installed.XXXXXX)
trap 'rm -rf "$work"' EXIT
unset ANSIBLE_COLLECTIONS_PATH ANSIBLE_COLLECTIONS_PATHS ANSIBLE_CONFIG ANSIBLE_ROLES_PATH
export ANSIBLE_HOME=$work/ansible-home ANSIBLE_NOCOLOR=1 ANSIBLE_COLLECTIONS_PATH=$work/collections

(cd "$repo" && ansible-galaxy collection build --output-path "$work" >/dev/null)
tarball=$(ls "$work"/gsb-kai_lab-*.tar.gz)
if tar tzf "$tarball" | grep -E '^(\.collections|tests|\.ci|\.venv|playbooks/inventories/class-grade)(/|$)'; then
  echo "the built collection contains checkout-only files (above)"; exit 1
fi
cd "$work"
# kubernetes.core comes from the ansible package of the environment (no Galaxy here).
ansible-galaxy collection install --force --no-deps -p "$work/collections" "$tarball" >/dev/null
installed=$work/collections/ansible_collections/gsb/kai_lab

echo "== ansible-doc of every module and of the roles' argument specs"
for module in "$installed"/plugins/modules/*.py; do
  name=$(basename "$module" .py)
  ansible-doc "gsb.kai_lab.$name" | grep -q "gsb.kai_lab.$name" || { echo "ansible-doc gsb.kai_lab.$name failed"; exit 1; }
done
for spec in "$installed"/roles/*/meta/argument_specs.yml; do
  role=$(basename "$(dirname "$(dirname "$spec")")")
  doc=$(ansible-doc -t role "gsb.kai_lab.$role")
  grep -q "ENTRY POINT:.*main" <<<"$doc" || { echo "ansible-doc -t role gsb.kai_lab.$role shows no entry point"; exit 1; }
done
ansible-doc -t role gsb.kai_lab.kai_lab | grep -q 'kai_lab_target' || { echo "kai_lab_target is not documented"; exit 1; }

cat >"$work/learners.yml" <<'INV'
learners:
  hosts:
    learner-down:
      ansible_host: 127.0.0.1
      ansible_port: 1
      ansible_user: root
  vars:
    kai_lab_target: sim
INV
echo "== syntax check of the installed playbooks"
for playbook in "$installed"/playbooks/*.yml; do
  ansible-playbook -i "$work/learners.yml" "gsb.kai_lab.$(basename "$playbook" .yml)" --syntax-check >/dev/null
done

echo "== an inventory without a kai_lab group"
if out=$(ansible-playbook -i "$work/learners.yml" gsb.kai_lab.grade 2>&1); then
  echo "$out" | tail -20; echo "grade ran on an inventory without kai_lab hosts"; exit 1
fi
grep -q "No host of the inventory matches 'kai_lab'" <<<"$out" || { echo "$out" | tail -20; echo "no clear message"; exit 1; }
grep -q "kai_lab_hosts=" <<<"$out" || { echo "the message does not name kai_lab_hosts"; exit 1; }

echo "== a wrong kai_lab_target fails first, with Ansible's message naming the allowed values"
if out=$(ansible-playbook -i "$work/learners.yml" gsb.kai_lab.provision -e kai_lab_hosts=learners -e kai_lab_target=vm 2>&1); then
  echo "provision ran with kai_lab_target=vm"; exit 1
fi
grep -q "value of kai_lab_target must be one of: sim, k3s, got: vm" <<<"$out" || { echo "$out" | tail -20; exit 1; }
# Before any work: the argument check is the first task that failed, and nothing ran on the host.
grep -q "Validating arguments against arg spec 'main'" <<<"$out" && ! grep -q "TASK \[Start the cluster\]" <<<"$out" \
  || { echo "$out" | tail -20; echo "the wrong target was not caught first"; exit 1; }

echo "== grade with -e kai_lab_hosts=learners: an unreachable learner is a row"
ansible-playbook -i "$work/learners.yml" gsb.kai_lab.grade -e kai_lab_hosts=learners \
  -e kai_lab_class_dir="$work/class-grade" >"$work/grade.log" 2>&1 \
  || { tail -30 "$work/grade.log"; echo "grade failed on an unreachable learner"; exit 1; }
python - "$work/class-grade/class.json" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
rows = [(row['learner'], row['status']) for row in summary['learners']]
assert rows == [('learner-down', 'unreachable')], rows
assert 'port 1' in summary['learners'][0]['message'], summary['learners'][0]['message']
print('   class.json: %s' % rows)
PY
ls "$work/class-grade" | tr '\n' ' '; echo
