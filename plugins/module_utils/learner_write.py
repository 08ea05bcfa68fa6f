# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write files next to the learner's, safely.

Writing (grade outputs, the solver's learner files): ``write_file`` writes
through ``mkstemp`` in the target directory plus ``os.replace`` (no fixed
``.tmp`` name a learner could plant as a symlink; a symlink at the target is
replaced, never followed), mode 0600 by default. ``backup_file`` keeps a
learner file under a unique name ``<name>.bak-<time>[-N]`` created with
``O_EXCL`` (a symlink is kept as the same symlink, never followed).
``replace_learner_file`` is the solver's write: unchanged content is left
alone, other content is backed up first. When root writes into a directory
owned by someone else (a learner's workdir), the new file is given to the
directory's owner, so the learner can read the grade as the same user.
Failures to write raise ``LearnerFileError`` with the problem in en and ko.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import stat
import tempfile
import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner_read import (
    CHUNK, KIND_WORDS, MAX_BYTES, LearnerFileError, file_kind, path_components, read_bytes)
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner_text import both, printable


def _write_problem(path, exc, en_what='cannot write', ko_what='쓸 수 없습니다'):
    reason = os.strerror(exc.errno) if getattr(exc, 'errno', None) else str(exc)
    return LearnerFileError(both('%s %s: %s' % (en_what, printable(path, 200), reason),
                                 '%s %s: %s' % (printable(path, 200), ko_what, reason)))


def _owner_for(directory_fd):
    """(uid, gid) to give a new file when root writes into someone else's directory, else None."""
    if not hasattr(os, 'geteuid') or os.geteuid() != 0:
        return None
    info = os.fstat(directory_fd)
    return None if info.st_uid == 0 else (info.st_uid, info.st_gid)


def _entry_kind(directory, name):
    """'regular', 'symlink', 'directory', ... for what is at directory/name, or None when nothing is."""
    try:
        mode = os.lstat(os.path.join(directory, name)).st_mode
    except OSError:
        return None
    return 'symlink' if stat.S_ISLNK(mode) else file_kind(mode)


def write_file(directory, name, content, mode=0o600):
    """Write content (str as UTF-8, or bytes) to directory/name atomically; returns the path.

    A temporary file from mkstemp in the same directory is filled, synced and
    renamed over the target: a symlink at the target is replaced, not
    followed; a directory there is refused.
    """
    if isinstance(content, str):
        content = content.encode('utf-8')
    path = os.path.join(directory, name)
    if path_components(name) != [name]:
        raise LearnerFileError(both('%s is not a plain file name' % printable(name, 80),
                                    '%s 는 단순한 파일 이름이 아닙니다' % printable(name, 80)))
    if _entry_kind(directory, name) == 'directory':
        raise LearnerFileError(both('%s is a directory where the lab writes a file: move or rename it, then run again'
                                    % printable(path, 200),
                                    '%s 는 실습이 파일을 쓰는 자리에 있는 디렉터리입니다. 옮기거나 이름을 바꾼 뒤 다시 '
                                    '실행하세요' % printable(path, 200)))
    try:
        fd, temporary = tempfile.mkstemp(prefix='.%s.' % name, suffix='.partial', dir=directory)
    except OSError as exc:
        raise _write_problem(path, exc)
    try:
        try:
            os.fchmod(fd, mode)
            directory_fd = os.open(directory, os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0))
            try:
                owner = _owner_for(directory_fd)
            finally:
                os.close(directory_fd)
            if owner:
                os.fchown(fd, owner[0], owner[1])
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except OSError as exc:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise _write_problem(path, exc)
    return path


def backup_file(directory, name, now=None):
    """Keep directory/name under a new unique name; returns the backup's path, or None if nothing is there.

    The name is <name>.bak-<YYYYmmdd-HHMMSS>, with -2, -3, ... when taken, and
    is created exclusively (O_EXCL|O_NOFOLLOW), so two backups in one second
    both survive and a planted symlink is never written through. A symlink is
    kept as the same symlink (its target is never read); a regular file is
    copied in chunks (no size limit, bounded memory), keeping its mode and
    times. Directories and special files raise LearnerFileError.
    """
    path = os.path.join(directory, name)
    try:
        info = os.lstat(path)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None
        raise _write_problem(path, exc, 'cannot back up', '백업할 수 없습니다')
    stamp = time.strftime('%Y%m%d-%H%M%S', time.localtime(now))
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(path)
        for candidate in _backup_names(path, stamp):
            try:
                os.symlink(target, candidate)
                return candidate
            except OSError as exc:
                if exc.errno != errno.EEXIST:
                    raise _write_problem(candidate, exc, 'cannot back up to', '백업할 수 없습니다')
        raise _no_backup_name(path)
    if not stat.S_ISREG(info.st_mode):
        en, ko = KIND_WORDS[file_kind(info.st_mode)]
        raise LearnerFileError(both('%s is %s where the lab keeps a file: move or rename it, then run again'
                                    % (printable(path, 200), en),
                                    '%s 는 실습이 파일을 두는 자리에 있는 %s 입니다. 옮기거나 이름을 바꾼 뒤 다시 실행하세요'
                                    % (printable(path, 200), ko)))
    try:
        source = os.open(path, os.O_RDONLY | getattr(os, 'O_NOFOLLOW', 0) | os.O_NONBLOCK)
    except OSError as exc:
        raise _write_problem(path, exc, 'cannot back up', '백업할 수 없습니다')
    try:
        if not stat.S_ISREG(os.fstat(source).st_mode):  # swapped since lstat
            raise LearnerFileError(both('%s changed while it was being backed up: run again' % printable(path, 200),
                                        '%s 가 백업 중에 바뀌었습니다. 다시 실행하세요' % printable(path, 200)))
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_NOFOLLOW', 0)
        for candidate in _backup_names(path, stamp):
            try:
                target = os.open(candidate, flags, 0o600)
            except OSError as exc:
                if exc.errno == errno.EEXIST:
                    continue
                raise _write_problem(candidate, exc, 'cannot back up to', '백업할 수 없습니다')
            try:
                while True:
                    chunk = os.read(source, CHUNK)
                    if not chunk:
                        break
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(target, view):]
                os.fchmod(target, stat.S_IMODE(info.st_mode))
                os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
                os.fsync(target)
            except OSError as exc:
                raise _write_problem(candidate, exc, 'cannot back up to', '백업할 수 없습니다')
            finally:
                os.close(target)
            return candidate
    finally:
        os.close(source)
    raise _no_backup_name(path)


def _no_backup_name(path):
    return LearnerFileError(both('no free backup name for %s: remove old %s.bak-* files'
                                 % (printable(path, 200), printable(os.path.basename(path), 80)),
                                 '%s 의 백업 이름을 정할 수 없습니다. 오래된 %s.bak-* 파일을 지우세요'
                                 % (printable(path, 200), printable(os.path.basename(path), 80))))


def _backup_names(path, stamp):
    yield '%s.bak-%s' % (path, stamp)
    for number in range(2, 1000):
        yield '%s.bak-%s-%d' % (path, stamp, number)


def replace_learner_file(directory, name, content, mode=0o600, check_mode=False):
    """The solver's write of a learner file: (changed, backup path or None).

    Same content already there: nothing happens. Other content (or a symlink,
    or a file too large or not UTF-8): it is kept by backup_file first, then
    the new content is written by write_file. A directory or special file
    where the file belongs raises LearnerFileError naming it.
    """
    if isinstance(content, str):
        content = content.encode('utf-8')
    path = os.path.join(directory, name)
    kind = _entry_kind(directory, name)
    if kind is None:
        if not check_mode:
            if not os.path.isdir(directory):
                try:
                    os.makedirs(directory, 0o700)
                except OSError as exc:
                    raise _write_problem(directory, exc, 'cannot create', '만들 수 없습니다')
            write_file(directory, name, content, mode)
        return True, None
    if kind not in ('regular', 'symlink'):
        en, ko = KIND_WORDS[kind]
        raise LearnerFileError(both('%s is %s where the lab writes a file: move or rename it, then run again'
                                    % (printable(path, 200), en),
                                    '%s 는 실습이 파일을 쓰는 자리에 있는 %s 입니다. 옮기거나 이름을 바꾼 뒤 다시 실행하세요'
                                    % (printable(path, 200), ko)))
    if kind == 'regular':
        current = read_bytes(directory, name, max(MAX_BYTES, len(content)))
        if current.ok and current.content == content:
            return False, None
    if check_mode:
        return True, None
    backup = backup_file(directory, name)
    write_file(directory, name, content, mode)
    return True, backup
