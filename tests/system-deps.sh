#!/usr/bin/env bash
# The system packages the test suite needs that the pinned Python environment
# cannot bring: Chromium, which opens the class summary page headless
# (tests/browse.py), sudo, which molecule/learner's learner runs kai-lab
# through, and for the VM stage QEMU, mmdebstrap, e2fsprogs and an SSH client
# (without recommends: QEMU's pull in a desktop's worth). `make test` runs this first, so the README's two
# commands set up a fresh machine; .ci/run is just `make test`.
# As root it installs what is missing (Debian's apt-get). Otherwise it prints
# one line naming the command to run and goes on: the stages that need the
# package then fail (or, the VM stage, say why they do not run), and every
# other stage still runs.
set -euo pipefail
missing=()   # installed as apt-get installs them
vm=()        # installed without recommends (QEMU's pull in a desktop's worth)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 ||
  command -v google-chrome >/dev/null 2>&1 || missing+=(chromium)
command -v sudo >/dev/null 2>&1 || missing+=(sudo)
# The VM stage (tests/vm/vm.py, molecule/vm; KAI_LAB_VM_RELEASES=none skips
# it): QEMU, an image built with mmdebstrap into an ext4 file, SSH to the VM.
if [ "${KAI_LAB_VM_RELEASES:-}" != none ] && [ "$(uname -m)" = x86_64 ]; then
  export PATH="$PATH:/usr/sbin:/sbin"
  command -v qemu-system-x86_64 >/dev/null 2>&1 || vm+=(qemu-system-x86)
  command -v qemu-img >/dev/null 2>&1 || vm+=(qemu-utils)
  command -v mmdebstrap >/dev/null 2>&1 || vm+=(mmdebstrap)
  { command -v mkfs.ext4 && command -v resize2fs; } >/dev/null 2>&1 || vm+=(e2fsprogs)
  { command -v ssh && command -v ssh-keygen; } >/dev/null 2>&1 || vm+=(openssh-client)
fi
[ "${#missing[@]}" -eq 0 ] && [ "${#vm[@]}" -eq 0 ] && exit 0
all="${missing[*]} ${vm[*]}"; all=${all# }; all=${all% }

cmd="apt-get install -y $all"
if [ "$(id -u)" -ne 0 ]; then
  echo "system-deps: $all not installed; run: sudo $cmd (the class, molecule and VM stages need them)" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: $all not installed and this machine has no apt-get; install them with its package manager (the class, molecule and VM stages need them)" >&2
  exit 0
fi
echo "== installing system packages: $all"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get update -qq; then
  echo "system-deps: could not read the package lists; run: $cmd (the class, molecule and VM stages need them)" >&2
  exit 0
fi
if [ "${#missing[@]}" -gt 0 ] && ! apt-get install -y -qq "${missing[@]}" >/dev/null; then
  echo "system-deps: could not install ${missing[*]}; run: apt-get install -y ${missing[*]} (the class and molecule stages need them)" >&2
fi
if [ "${#vm[@]}" -gt 0 ] && ! apt-get install -y -qq --no-install-recommends "${vm[@]}" >/dev/null; then
  echo "system-deps: could not install ${vm[*]}; run: apt-get install -y --no-install-recommends ${vm[*]} (the VM stage says it cannot run without them)" >&2
fi
exit 0
