#!/usr/bin/env bash
# make test-k3s: the k3s target proven on a real VM (molecule/k3s_vm), in
# airgap mode from an airgap directory built from source.
#
#   KAI_LAB_K3S_SOURCES=DIR make test-k3s   build the bundle from the five checkouts in DIR
#                                           (tests/k3s_bundle/build.py; cached), then run
#   KAI_LAB_K3S_BUNDLE=DIR make test-k3s    use a bundle built before (DIR/bundle-vars.yml)
#
# Without either it says what to set and exits 0, as where this machine
# cannot boot the VM (tests/vm/vm.py check). One VM at a time on a machine:
# the stage holds /tmp/kai-lab-vm.lock (make test's vm stage takes it too).
set -euo pipefail
cd "$(dirname "$0")/.."
export ANSIBLE_COLLECTIONS_PATH="$PWD/.collections"
export MOLECULE_GLOB="molecule/*/molecule.yml"
start=$SECONDS

if [ -n "${KAI_LAB_K3S_BUNDLE:-}" ]; then
  bundle=$KAI_LAB_K3S_BUNDLE
elif [ -n "${KAI_LAB_K3S_SOURCES:-}" ]; then
  echo "== building the airgap bundle from ${KAI_LAB_K3S_SOURCES} (tests/k3s_bundle/build.py; pieces cached)"
  out=$(mktemp)
  if ! tests/k3s_bundle/build.py --sources "$KAI_LAB_K3S_SOURCES" | tee "$out"; then
    rm -f "$out"; exit 1
  fi
  bundle=$(sed -n 's/^k3s-bundle: vars: \(.*\)\/bundle-vars.yml$/\1/p' "$out" | tail -n 1)
  rm -f "$out"
  echo "== bundle built in $((SECONDS - start)) s: $bundle"
else
  cat <<'EOT'
k3s VM stage: not run. Set one of
  KAI_LAB_K3S_SOURCES=DIR   a directory of five source checkouts, built into an airgap bundle first:
                            k3s/, plugins/ (rancher/plugins), cni-plugin/ (flannel-io/cni-plugin),
                            kai-scheduler/ (KAI-Scheduler at a tag), fake-gpu-operator/ (at a tag);
                            see the instructor guide, "An airgap directory built from source"
  KAI_LAB_K3S_BUNDLE=DIR    an airgap directory that tests/k3s_bundle/build.py wrote (DIR/bundle-vars.yml)
EOT
  exit 0
fi
vars=$bundle/bundle-vars.yml
if [ ! -f "$vars" ]; then
  echo "k3s VM stage: $vars does not exist: KAI_LAB_K3S_BUNDLE must name a directory tests/k3s_bundle/build.py wrote" >&2
  exit 1
fi
if ! why=$(tests/vm/vm.py check); then
  echo "k3s VM stage: not run: ${why#VM stage: cannot run here: }"
  exit 0
fi
echo "== k3s VM stage: ${why#VM stage: }; bundle $bundle"
export KAI_LAB_K3S_BUNDLE_VARS=$vars
KAI_LAB_K3S_KAI_VERSION=$(sed -n 's/^kai_lab_k3s_kai_version: //p' "$vars")
export KAI_LAB_K3S_KAI_VERSION
rm -f tests/output/k3s-vm-phases.json
molecule reset -s k3s_vm >/dev/null
status=0
# Whatever ends this script, the VM stops (molecule's destroy does it too).
trap 'tests/vm/vm.py down >/dev/null 2>&1 || true' EXIT
flock /tmp/kai-lab-vm.lock molecule test -s k3s_vm --destroy=always || status=$?
echo "== k3s VM stage: $((SECONDS - start)) s; phases in tests/output/k3s-vm-phases.json"
exit $status
