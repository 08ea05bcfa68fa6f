#!/usr/bin/env bash
# ansible-test needs the collection at .../ansible_collections/gsb/kai_lab.
# Copy the tracked files there (a copy, not a link: ansible-test resolves the
# real path) and run sanity with zero ignore files.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dest=$root/ansible_collections/gsb/kai_lab
mkdir -p "$dest"
# .collections/ is the checkout's link to itself (ansible.cfg), not content.
git -C "$repo" ls-files -co --exclude-standard -z | grep -zv '^\.collections/' \
  | (cd "$repo" && xargs -0 cp --parents -t "$dest")
if ls "$dest"/tests/sanity/ignore-*.txt >/dev/null 2>&1; then
  echo "sanity ignore files are not allowed" >&2; exit 1
fi
# ansible-test downloads a pip bootstrap script from a host that is not
# reachable here; give it the equivalent that uses ensurepip and PyPI.
pip_version=$(
  python - <<'PY'
import re, ansible_test, os
src = open(os.path.join(os.path.dirname(ansible_test.__file__), '_internal', 'python_requirements.py')).read()
print(re.search(r"pip='([0-9.]+)'", src).group(1))
PY
)
cache=~/.ansible/test/cache/get_pip_${pip_version//./_}.py
if ! cmp -s "$repo/tests/sanity_get_pip.py" "$cache"; then
  mkdir -p "$(dirname "$cache")" && cp "$repo/tests/sanity_get_pip.py" "$cache"
fi

cd "$dest"
ansible-test sanity --python "$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
  --venv --requirements --color no "$@" plugins/
