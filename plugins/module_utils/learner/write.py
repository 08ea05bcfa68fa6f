# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write files next to the learner's, safely.

Writing (grade outputs, the solver's learner files, the sim's record):
``write_file`` writes a temporary file created exclusively
(``O_EXCL|O_NOFOLLOW``, a random name: no fixed ``.tmp`` name a learner could
plant as a symlink) and renames it over the target (a symlink at the target
is replaced, never followed), mode 0600 by default. When root writes into a
directory owned by someone else (a learner's workdir), the new file is given
to the directory's owner, so the learner can read the grade as the same
user. Given a Workdir (learner/workdir_fd.py), every step works relative to
its descriptor (``dir_fd=``), so a workdir swapped for a link after it was
opened changes nothing. Failures to write raise ``LearnerFileError`` with the
problem in en and ko. Keeping a learner's file before it is replaced is
learner/backup.py.

Layer: the learner's files; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import binascii
import errno
import os
import stat

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.read import LearnerFileError, directory_fd, file_kind, path_components
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import both, printable, with_particle

_NOFOLLOW = getattr(os, 'O_NOFOLLOW', 0)
_CLOEXEC = getattr(os, 'O_CLOEXEC', 0)


def _write_problem(path, exc, en_what='cannot write', ko_what='쓸 수 없습니다'):
    reason = os.strerror(exc.errno) if getattr(exc, 'errno', None) else str(exc)
    return LearnerFileError(both('%s %s: %s' % (en_what, printable(path, 200), reason),
                                 '%s %s: %s' % (printable(path, 200), ko_what, reason)))


def _open_directory(directory, en_what='cannot write in', ko_what='에 쓸 수 없습니다'):
    try:
        return directory_fd(directory)
    except OSError as exc:
        raise _write_problem(directory, exc, en_what, ko_what)


def _owner_for(directory_fd):
    """(uid, gid) to give a new file when root writes into someone else's directory, else None."""
    if not hasattr(os, 'geteuid') or os.geteuid() != 0:
        return None
    info = os.fstat(directory_fd)
    return None if info.st_uid == 0 else (info.st_uid, info.st_gid)


def _kind_at(dir_fd, name):
    """'regular', 'symlink', 'directory', ... for what is at name in dir_fd, or None when nothing is."""
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        return None
    return 'symlink' if stat.S_ISLNK(mode) else file_kind(mode)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_file(directory, name, content, mode=0o600, owner=None):
    """Write content (str as UTF-8, or bytes) to directory/name atomically; returns the path.

    A temporary file created exclusively in the same directory is filled,
    synced and renamed over the target: a symlink at the target is replaced,
    not followed; a directory there is refused. owner: (uid, gid) to give
    the file to; by default, root writing into another user's directory
    gives it to that directory's owner.
    """
    if isinstance(content, str):
        content = content.encode('utf-8')
    path = os.path.join(directory, name)
    if path_components(name) != [name]:
        raise LearnerFileError(both('%s is not a plain file name' % printable(name, 80),
                                    '%s 단순한 파일 이름이 아닙니다' % with_particle(printable(name, 80), '은')))
    dir_fd = _open_directory(directory)
    try:
        if _kind_at(dir_fd, name) == 'directory':
            raise LearnerFileError(both('%s is a directory where the lab writes a file: move or rename it, then run '
                                        'again' % printable(path, 200),
                                        '%s 실습이 파일을 쓰는 자리에 있는 디렉터리입니다. 옮기거나 이름을 바꾼 뒤 다시 '
                                        '실행하세요' % with_particle(printable(path, 200), '은')))
        fd, temporary = _temporary(dir_fd, name, path)
        try:
            try:
                os.fchmod(fd, mode)
                owner = owner or _owner_for(dir_fd)
                if owner:
                    os.fchown(fd, owner[0], owner[1])
                _write_all(fd, content)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            try:
                os.unlink(temporary, dir_fd=dir_fd)
            except OSError:
                pass
            raise _write_problem(path, exc)
    finally:
        os.close(dir_fd)
    return path


def _temporary(dir_fd, name, path):
    """(fd, name) of a new empty file .<name>.<random>.partial in dir_fd, created exclusively."""
    for _attempt in range(100):
        candidate = '.%s.%s.partial' % (name, binascii.hexlify(os.urandom(6)).decode('ascii'))
        try:
            return os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600,
                           dir_fd=dir_fd), candidate
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise _write_problem(path, exc)
    raise _write_problem(path, OSError(errno.EEXIST, os.strerror(errno.EEXIST)))
