#!/usr/bin/env bash
# The whole test suite, in order of cost: static gates, unit tests, then the
# integration scenarios on the real sim cluster. Run through `make test`,
# which prepares the pinned Python environment first. Every stage runs even
# when an earlier one failed; the last line counts them.
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0; failed=0; failures=()
# Each stage's output is also kept in tests/output/stages/, so that a failed
# stage can be summed up at the very end, where a CI log's tail is read.
logs=tests/output/stages
mkdir -p "$logs"
stage() {
  local name=$1; shift
  local log="$logs/$(tr -c 'a-zA-Z0-9\n' '-' <<<"${name%% (*}" | tr -s '-').log"
  printf '\n===== %s =====\n' "$name"
  local start=$SECONDS
  "$@" 2>&1 | tee "$log"
  if [ "${PIPESTATUS[0]}" -eq 0 ]; then
    passed=$((passed + 1)); printf '===== %s: passed in %d s\n' "$name" $((SECONDS - start))
  else
    failed=$((failed + 1)); failures+=("$name|$log"); printf '===== %s: FAILED after %d s\n' "$name" $((SECONDS - start))
  fi
}

# What a failed stage said: the fatal task messages of the Ansible plays that
# failed (a play whose recap says failed=0 rescued or ignored its own), the
# `msg:` of the YAML output joined into one line; pytest's failures and
# molecule's errors; the last 8, cut to a readable width.
why() {
  awk 'function hold() { if (held != "") fatals[n++] = held; held = ""; inblock = 0 }
       inblock && /^ / { if ($1 == "msg:") inmsg = 1; else if ($0 ~ /^    [a-z_]+:/) inmsg = 0
                         if (inmsg) { sub(/^ +/, " "); held = held $0 }; next }
       { hold() }
       /^\.\.\.ignoring/ { n = n > 0 ? n - 1 : 0; next }
       /fatal: \[|FAILED!/ { held = $0; inblock = 1; inmsg = 0; next }
       /: ok=[0-9]+ .*failed=[0-9]/ { if ($0 ~ /failed=[1-9]/) { for (i = 0; i < n; i++) print fatals[i]; print }
                                       n = 0; next }
       /^FAILED |^E  |Error:|CRITICAL|^error/ { print }
       END { hold(); for (i = 0; i < n; i++) print fatals[i] }' "$1" |
    tail -n 8 | cut -c1-400 | sed 's/^/   /'
}

echo "k3s VM stage (the k3s target in airgap mode on a VM, an hour and more): not part of make test; make test-k3s runs it"
stage "ansible-lint (production profile)" ansible-lint --offline --profile production --strict -q
stage "ansible-test sanity" tests/sanity.sh
stage "unit tests" python -m pytest -q -p no:cacheprovider tests/unit
stage "docs (antsibull-docs lint, offline site build, a page per plugin)" tests/docs.sh
stage "installed collection (build, install, ansible-doc, syntax, missing group)" tests/installed.sh
stage "execution environment (ansible-builder create)" tests/ee.sh
stage "molecule scenarios on the sim" tests/molecule.sh
stage "fresh clone without make: provision, solve, grade (sim in a netns)" tests/checkout.sh
stage "class of four: three sims in netns and an unreachable host" tests/class.sh

for failure in "${failures[@]}"; do
  printf '\nFAILED: %s (whole output: %s)\n' "${failure%%|*}" "${failure#*|}"
  why "${failure#*|}"
done
printf '\nstages: %d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
