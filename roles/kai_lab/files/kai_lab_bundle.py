#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pack the collection's module_utils for kai-lab into one zip (tasks/cli.yml).

  kai_lab_bundle.py COLLECTION_DIR OUT.zip

The zip holds ansible_collections/gsb/kai_lab/plugins/module_utils/**.py and
an empty __init__.py in each package directory above it (regular packages:
this copy is found before any other ansible_collections on the path). Its
bytes depend only on the sources (sorted names, fixed times and modes), so
copying it to the target is idempotent. Caches (__pycache__) stay out.
"""

import os
import sys
import zipfile

PACKAGE = ('ansible_collections', 'gsb', 'kai_lab', 'plugins', 'module_utils')
STAMP = (1980, 1, 1, 0, 0, 0)


def entry(name):
    info = zipfile.ZipInfo(name, STAMP)
    info.external_attr = 0o644 << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def sources(root):
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != '__pycache__')
        for name in sorted(files):
            if name.endswith('.py'):
                path = os.path.join(directory, name)
                yield path, os.path.relpath(path, root).replace(os.sep, '/')


def main(collection_dir, out):
    root = os.path.join(collection_dir, 'plugins', 'module_utils')
    names = dict(('/'.join(PACKAGE[:depth] + ('__init__.py',)), b'') for depth in range(1, len(PACKAGE) + 1))
    for path, relative in sources(root):
        with open(path, 'rb') as handle:
            names['/'.join(PACKAGE + (relative,))] = handle.read()
    temporary = out + '.partial'
    with zipfile.ZipFile(temporary, 'w') as bundle:
        for name in sorted(names):
            bundle.writestr(entry(name), names[name])
    os.replace(temporary, out)
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
