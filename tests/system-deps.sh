#!/usr/bin/env bash
# The system packages the test suite needs that the pinned Python environment
# cannot bring: Chromium, which opens the class summary page headless
# (tests/browse.py), and what the VM stage (molecule/vm, tests/vm/vm.py) builds
# and boots a Debian VM with: QEMU, mmdebstrap, e2fsprogs (mkfs.ext4 -d,
# resize2fs) and the SSH client. `make test` runs this first, so the README's
# two commands set up a fresh machine; .ci/run is just `make test`.
# As root it installs what is missing (Debian's apt-get). Otherwise it prints
# one line naming the command to run and goes on: the stages that need the
# package then fail (or, the VM stage, say why they do not run), and every
# other stage still runs.
set -euo pipefail
missing=()   # installed as apt-get installs them
vm=()        # installed without recommends (QEMU's pull in a desktop's worth)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 ||
  command -v google-chrome >/dev/null 2>&1 || missing+=(chromium)
# command -> Debian package, for the VM stage.
for pair in qemu-system-x86_64:qemu-system-x86 qemu-img:qemu-utils mmdebstrap:mmdebstrap \
  ssh:openssh-client ssh-keygen:openssh-client mkfs.ext4:e2fsprogs resize2fs:e2fsprogs; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin command -v "${pair%%:*}" >/dev/null 2>&1 ||
    [[ " ${vm[*]} " == *" ${pair#*:} "* ]] || vm+=("${pair#*:}")
done
[ "${#missing[@]}" -eq 0 ] && [ "${#vm[@]}" -eq 0 ] && exit 0

sudo=; [ "$(id -u)" -eq 0 ] || sudo="sudo "
cmd="${missing[*]:+${sudo}apt-get install -y ${missing[*]}}${missing[*]:+${vm[*]:+ && }}${vm[*]:+${sudo}apt-get install -y --no-install-recommends ${vm[*]}}"
missing+=("${vm[@]}")
if [ -n "$sudo" ]; then
  echo "system-deps: ${missing[*]} not installed; run: $cmd (the class and VM stages need them)" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: ${missing[*]} not installed and this machine has no apt-get; install ${missing[*]} with its package manager (the class and VM stages need them)" >&2
  exit 0
fi
echo "== installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq &&
  { [ "${#vm[@]}" -eq "${#missing[@]}" ] || apt-get install -y -qq "${missing[@]:0:${#missing[@]}-${#vm[@]}}" >/dev/null; } &&
  { [ "${#vm[@]}" -eq 0 ] || apt-get install -y -qq --no-install-recommends "${vm[@]}" >/dev/null; }; }; then
  echo "system-deps: could not install ${missing[*]}; run: $cmd (the class and VM stages need them)" >&2
fi
exit 0
