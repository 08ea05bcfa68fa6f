#!/usr/bin/env bash
# execution-environment.yml is valid for ansible-builder v3 and its build
# context has the collection, its Python requirements and system packages
# (there is no container engine here, so the image itself is not built).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/kai-lab-ee.XXXXXX)
trap 'rm -rf "$work"' EXIT
# ansible-builder reads the tarball from dist/ next to the definition: use a copy of the tracked files.
git -C "$repo" ls-files -co --exclude-standard -z | grep -zv '^\.collections/' \
  | (cd "$repo" && xargs -0 cp --parents -t "$work")
cd "$work"
ansible-galaxy collection build --output-path dist >/dev/null
ansible-builder create -f execution-environment.yml -c "$work/context" --output-filename Containerfile -v 1 >/dev/null
containerfile=$work/context/Containerfile
for expected in 'ansible-galaxy collection install --no-deps -p /usr/share/ansible/collections /tmp/gsb-kai-lab/gsb-kai_lab-' \
                'FROM $EE_BASE_IMAGE' 'introspect'; do
  grep -qF -- "$expected" "$containerfile" || { echo "Containerfile lacks: $expected"; exit 1; }
done
ls "$work"/context/_build/collection/gsb-kai_lab-*.tar.gz >/dev/null
grep -q 'kubernetes.core' "$work"/context/_build/requirements.yml
# What the image's introspection step will find in the installed collection:
# the Kubernetes client and jmespath from requirements.txt, ssh from bindep.txt.
ansible-galaxy collection install --force --no-deps -p "$work/installed" dist/gsb-kai_lab-*.tar.gz >/dev/null 2>&1
python "$work/context/_build/scripts/introspect.py" introspect "$work/installed" \
  --write-pip "$work/pip.txt" --write-bindep "$work/bindep.txt" >/dev/null
grep -q '^kubernetes==34.1.0' "$work/pip.txt" && grep -q '^jmespath==' "$work/pip.txt" \
  || { cat "$work/pip.txt"; echo "introspection misses the collection's Python requirements"; exit 1; }
if grep -qiE '^(ansible|ansible-core|molecule|pytest)[=<> ]' "$work/pip.txt"; then
  echo "introspection would install test or core packages"; exit 1
fi
grep -q '^openssh-clients \[platform:rpm\]' "$work/bindep.txt" || { echo "introspection misses bindep.txt"; exit 1; }
echo "   ansible-builder create: context $(ls "$work/context" | tr '\n' ' ')"
echo "   introspected Python requirements: $(grep -v '^#' "$work/pip.txt" | cut -d' ' -f1 | tr '\n' ' ')"
