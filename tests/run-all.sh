#!/usr/bin/env bash
# The whole test suite, in order of cost: static gates, unit tests, then the
# integration scenarios on the real sim cluster. Run through `make test`,
# which prepares the pinned Python environment first.
set -euo pipefail
cd "$(dirname "$0")/.."
stage() { printf '\n===== %s =====\n' "$*"; }

stage "ansible-lint (production profile)"
ansible-lint --profile production --strict -q

stage "ansible-test sanity"
tests/sanity.sh

stage "unit tests"
python -m pytest -q tests/unit

stage "integration: molecule scenarios on the sim target"
tests/molecule.sh
