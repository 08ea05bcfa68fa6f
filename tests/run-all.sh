#!/usr/bin/env bash
# The whole test suite, in order of cost: static gates, unit tests, then the
# integration scenarios on the real sim cluster. Run through `make test`,
# which prepares the pinned Python environment first. Every stage runs even
# when an earlier one failed; the last line counts them.
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0; failed=0; failures=()
stage() {
  local name=$1; shift
  printf '\n===== %s =====\n' "$name"
  local start=$SECONDS
  if "$@"; then
    passed=$((passed + 1)); printf '===== %s: passed in %d s\n' "$name" $((SECONDS - start))
  else
    failed=$((failed + 1)); failures+=("$name"); printf '===== %s: FAILED after %d s\n' "$name" $((SECONDS - start))
  fi
}

stage "ansible-lint (production profile)" ansible-lint --offline --profile production --strict -q
stage "ansible-test sanity" tests/sanity.sh
stage "unit tests" python -m pytest -q -p no:cacheprovider tests/unit
stage "installed collection (build, install, ansible-doc, syntax, missing group)" tests/installed.sh
stage "execution environment (ansible-builder create)" tests/ee.sh
stage "molecule scenarios on the sim" tests/molecule.sh
stage "fresh clone without make: provision, solve, grade (sim in a netns)" tests/checkout.sh
stage "class of four: three sims in netns and an unreachable host" tests/class.sh

[ ${#failures[@]} -eq 0 ] || printf '\nfailed stages: %s\n' "${failures[*]}"
printf '\nstages: %d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
