#!/usr/bin/env bash
# Integration: the molecule scenarios on the real sim. The sims of the suite
# have their own state directory and their own port base
# (KAI_LAB_TEST_PORT_BASE, default 16500: ports 16500-16643), so a learner's
# lab (state in ~/.local/state/gsb-kai-lab/sim, ports 16300-16443) keeps
# running untouched beside them. Every scenario ends with teardown, also when
# it fails.
#
# mistakes runs first: it builds (or reuses) the sim's binaries the normal
# way. default then runs KAI through kai_lab_sim_kai_bin_dir and
# kai_lab_sim_kai_chart_dir ("your own KAI"), given v0.12.0's binaries and chart.
# learner does the lab as a local user without root (gsb-learner, created and
# removed by the scenario; sudo must be installed: tests/system-deps.sh).
#
# vm runs the k3s target on a Debian VM this machine builds and boots
# (tests/vm/vm.py, molecule/vm), once per release of KAI_LAB_VM_RELEASES:
# the harness's default (tests/vm/vm.py default-release: trixie, Debian 13)
# unless set, "bookworm" (Debian 12), "trixie", "bookworm trixie"
# for both, "none" for no VM. Where the machine cannot boot the VM (no QEMU,
# not root, too little memory or disk), one line says why and vm does not run.
#
# KAI_LAB_SCENARIOS="k3s" (or "mistakes default", "vm", ...) runs only those;
# KAI_LAB_SCENARIOS=none runs none (only the k3s scenario's offline checks below).
set -euo pipefail
cd "$(dirname "$0")/.."
# The repository is the collection gsb.kai_lab through the committed link
# .collections/ansible_collections/gsb/kai_lab, as the Makefile exports it:
# without it molecule/k3s cannot resolve gsb.kai_lab.provision (a fresh clone,
# no make).
export ANSIBLE_COLLECTIONS_PATH="$PWD/.collections"
# The scenarios live in molecule/ (not extensions/molecule): say so to molecule.
export MOLECULE_GLOB="molecule/*/molecule.yml"
cache=${KAI_LAB_CACHE:-$HOME/.cache/gsb-kai-lab}
export KAI_LAB_SIM_STATE="$cache/molecule-sim"
export KAI_LAB_SIM_PORT_BASE="${KAI_LAB_TEST_PORT_BASE:-16500}"

# v0.12.0's six binaries and chart, as a user would give their own.
own_kai() {
  local bin=$cache/bin kai name
  kai=$(ls -td "$bin"/kai-v0.12.0_k8s-*/.complete 2>/dev/null | head -n 1)
  export KAI_LAB_SIM_KAI_BIN_DIR="$cache/molecule-own-kai/bin"
  export KAI_LAB_SIM_KAI_CHART_DIR
  KAI_LAB_SIM_KAI_CHART_DIR="$(go env GOMODCACHE)/github.com/!n!v!i!d!i!a/!k!a!i-scheduler@v0.12.0/deployments/kai-scheduler"
  mkdir -p "$KAI_LAB_SIM_KAI_BIN_DIR"
  # A missing build leaves the directory incomplete: the scenario then fails naming what is missing.
  # The scheduler, admission and podgroupcontroller there are the sim's own
  # builds, whose listeners are all on 127.0.0.1 (sim_binaries_kai_wrapped).
  if [ -n "$kai" ]; then
    for name in scheduler binder podgrouper admission queuecontroller podgroupcontroller; do
      ln -sfn "$(dirname "$kai")/$name" "$KAI_LAB_SIM_KAI_BIN_DIR/$name"
    done
  fi
}

scenarios=(mistakes default learner)
vm_releases=${KAI_LAB_VM_RELEASES:-$(tests/vm/vm.py default-release)}
if [ "$vm_releases" = none ]; then
  echo "molecule vm scenario: not run (KAI_LAB_VM_RELEASES=none; \"trixie\", \"bookworm\" or both boot a Debian VM for it)"
elif why=$(tests/vm/vm.py check); then
  scenarios+=(vm)
  echo "molecule vm scenario: ${why#VM stage: }"
else
  echo "molecule vm scenario: ${why#VM stage: }"
fi
if [ -n "${KAI_LAB_K3S_HOST:-}" ]; then
  scenarios+=(k3s)
else
  echo "molecule k3s scenario: skipped (set KAI_LAB_K3S_HOST to a learner VM to run it); checking its config and playbooks"
  # Without a host: the scenario's config parses and its playbooks (converge,
  # side_effect with solve) pass Ansible's syntax check, contacting nothing.
  molecule list -s k3s >/dev/null
  molecule syntax -s k3s
  for playbook in molecule/k3s/side_effect.yml molecule/k3s/converge.yml; do
    ansible-playbook --syntax-check -i localhost, "$playbook" >/dev/null
  done
fi
if [ "${KAI_LAB_SCENARIOS:-}" = none ]; then
  scenarios=()
elif [ -n "${KAI_LAB_SCENARIOS:-}" ]; then
  read -r -a scenarios <<<"$KAI_LAB_SCENARIOS"
fi
status=0
for scenario in "${scenarios[@]+"${scenarios[@]}"}"; do
  [ "$scenario" = default ] && own_kai
  releases=(-)
  if [ "$scenario" = vm ]; then
    read -r -a releases <<<"$vm_releases"
    # Whatever ends this script, the VM stops (molecule's destroy does it too).
    trap 'tests/vm/vm.py down >/dev/null 2>&1' EXIT
  fi
  for release in "${releases[@]}"; do
    # Molecule empties a scenario's directory only after a whole test sequence:
    # a run stopped early (molecule crashing, a killed job) leaves its lab files
    # there, and this run's blank-lab grade would find them. reset removes it.
    molecule reset -s "$scenario" >/dev/null
    label=$scenario; [ "$release" = - ] || label="$scenario (KAI_LAB_VM_RELEASE=$release)"
    echo "== molecule test -s $label"
    start=$SECONDS
    if ! KAI_LAB_VM_RELEASE=${release#-} molecule test -s "$scenario" --destroy=always; then
      status=1
    fi
    if [ "$scenario" = vm ]; then echo "== molecule vm scenario ($release): $((SECONDS - start)) s"; fi
  done
done
exit $status
