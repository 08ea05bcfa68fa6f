#!/usr/bin/env bash
# The system packages the test suite needs that the pinned Python environment
# cannot bring: Chromium, which opens the class summary page headless
# (tests/browse.py), and sudo, which molecule/learner's learner runs kai-lab
# through. `make test` runs this first, so the README's two
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
[ "${#missing[@]}" -eq 0 ] && exit 0

cmd="apt-get install -y ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "system-deps: ${missing[*]} not installed; run: sudo $cmd (the class and molecule stages need them)" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: ${missing[*]} not installed and this machine has no apt-get; install ${missing[*]} with its package manager (the class and molecule stages need them)" >&2
  exit 0
fi
echo "== installing system packages: ${missing[*]}"
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
  echo "system-deps: could not install ${missing[*]}; run: $cmd (the class and molecule stages need them)" >&2
fi
exit 0
