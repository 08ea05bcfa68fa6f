#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pack the collection's module_utils for kai-lab into one zip (tasks/cli.yml).

  kai_lab_bundle.py COLLECTION_DIR OUT.zip
  kai_lab_bundle.py --check COLLECTION_DIR OUT.zip

--check: exit 0 when OUT.zip holds exactly the bytes the sources give now,
1 when it is missing or differs (then pack it again: what root unpacks is
never trusted by its name), 2 when its directory (the cache) is not
private: not owned by the user who runs this, or writable by group or
others.

The zip holds ansible_collections/gsb/kai_lab/plugins/module_utils/**.py and
an empty __init__.py in each package directory above it (regular packages:
this copy is found before any other ansible_collections on the path). Its
bytes depend only on the sources (sorted names, fixed times and modes), so
copying it to the target is idempotent. Caches (__pycache__) stay out.
"""

import io
import os
import stat
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


def packed(collection_dir):
    """The zip's bytes for the sources now."""
    root = os.path.join(collection_dir, 'plugins', 'module_utils')
    names = dict(('/'.join(PACKAGE[:depth] + ('__init__.py',)), b'') for depth in range(1, len(PACKAGE) + 1))
    for path, relative in sources(root):
        with open(path, 'rb') as handle:
            names['/'.join(PACKAGE + (relative,))] = handle.read()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w') as bundle:
        for name in sorted(names):
            bundle.writestr(entry(name), names[name])
    return buffer.getvalue()


def private_dir_problem(directory):
    """Why directory is not private to the user running this, or None."""
    try:
        info = os.stat(directory)
    except FileNotFoundError:
        return None
    if info.st_uid != os.geteuid():
        return 'is owned by uid %d, not by uid %d who runs the lab' % (info.st_uid, os.geteuid())
    if stat.S_IMODE(info.st_mode) & 0o022:
        return 'is writable by group or others (mode %04o)' % stat.S_IMODE(info.st_mode)
    return None


def check(collection_dir, out):
    directory = os.path.dirname(os.path.abspath(out))
    problem = private_dir_problem(directory)
    if problem:
        sys.stderr.write('The cache %s %s. Fix: chown -R "$(id -un)" %s && chmod -R go-w %s '
                         '(or set KAI_LAB_CACHE to a directory of your own).\n'
                         '캐시 %s 가 실습을 실행하는 사용자만 쓸 수 있는 디렉터리가 아닙니다. 위 명령으로 고치세요.\n'
                         % (directory, problem, directory, directory, directory))
        return 2
    try:
        with open(out, 'rb') as handle:
            return 0 if handle.read() == packed(collection_dir) else 1
    except (IOError, OSError):
        return 1


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
    if len(sys.argv) == 4 and sys.argv[1] == '--check':
        sys.exit(check(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
