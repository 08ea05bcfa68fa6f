#!/usr/bin/env bash
# The collection's documentation as antsibull-docs sees it, offline:
#   1. lint: every plugin's and role's docs, docs/docsite/ (links.yml,
#      extra-docs.yml, the guides with rstcheck), zero findings;
#   2. the HTML site (sphinx-init --use-current) built into docs/build/
#      (ignored), Sphinx warnings as errors;
#   3. every module, filter, lookup, role and guide has its page.
# `make docs` runs it; so does `make test`. Open docs/build/build/html/index.html.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
# This checkout is gsb.kai_lab through its committed link .collections/.
export ANSIBLE_COLLECTIONS_PATH=$repo/.collections
dest=$repo/docs/build

echo "== antsibull-docs lint-collection-docs --plugin-docs"
antsibull-docs lint-collection-docs --plugin-docs .

echo "== sphinx-init and build into docs/build"
rm -rf "$dest"
# antsibull-docs wants an existing directory only its owner can write.
mkdir -m 0755 -p "$dest"
antsibull-docs sphinx-init --use-current --dest-dir "$dest" --fail-on-error \
  --no-add-antsibull-docs-version --project gsb.kai_lab --copyright 'gsb.kai_lab developers' \
  --title gsb.kai_lab gsb.kai_lab >"$dest/sphinx-init.log" || { cat "$dest/sphinx-init.log"; exit 1; }
# Offline: no inventory can be fetched, so the few labels of the Ansible docs
# that antsibull-docs' pages refer to resolve through a local inventory
# (still linking to docs.ansible.com), and nothing else is looked up.
python - "$dest" <<'PY'
import sys, zlib
dest = sys.argv[1]
base = 'https://docs.ansible.com/projects/ansible/devel/'
labels = [
    ('common_return_values', 'reference_appendices/common_return_values.html#common-return-values', 'Return Values'),
    ('action_plugins', 'plugins/action.html#action-plugins', 'Action plugins'),
    ('ansible_configuration_settings', 'reference_appendices/config.html#ansible-configuration-settings',
     'Ansible Configuration Settings'),
]
lines = ''.join('%s std:label -1 %s %s\n' % label for label in labels)
with open(dest + '/ansible_devel.inv', 'wb') as handle:
    handle.write(b'# Sphinx inventory version 2\n# Project: Ansible\n# Version: devel\n'
                 b'# The remainder of this file is compressed using zlib.\n' + zlib.compress(lines.encode()))
with open(dest + '/conf.py', 'a') as handle:
    handle.write("\n# Offline build (tests/docs.sh): only the local inventory of Ansible's labels.\n"
                 "intersphinx_mapping = {'ansible_devel': ('%s', '../ansible_devel.inv')}\n" % base)
PY
"$dest/build.sh" >"$dest/build.log" 2>&1 || { tail -40 "$dest/build.log"; exit 1; }
if grep -n 'WARNING\|ERROR' "$dest/build.log"; then echo "the docs build has warnings" >&2; exit 1; fi

echo "== every plugin, role and guide has a page"
python - "$dest/build/html/collections/gsb/kai_lab" <<'PY'
import json, os, subprocess, sys
import yaml
html = sys.argv[1]
expected = []
for kind in ('module', 'filter', 'lookup'):
    listed = json.loads(subprocess.check_output(['ansible-doc', '-t', kind, '-l', 'gsb.kai_lab', '--json']))
    expected += ['%s_%s.html' % (name.split('.')[-1], kind) for name in listed]
expected += ['%s_role.html' % role for role in sorted(os.listdir('roles'))
             if os.path.exists(os.path.join('roles', role, 'meta', 'argument_specs.yml'))]
sections = yaml.safe_load(open('docs/docsite/extra-docs.yml'))['sections']
expected += ['docsite/%s.html' % page for section in sections for page in section['toctree']]
missing = [page for page in expected if not os.path.isfile(os.path.join(html, page))]
if missing:
    sys.exit('pages missing from the site: %s' % ', '.join(missing))
print('%d pages: %s' % (len(expected), ', '.join(expected)))
PY
