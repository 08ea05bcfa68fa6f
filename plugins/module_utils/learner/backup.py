# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Keep a learner's file before the lab replaces it: ``backup_file``, and the solver's write.

``backup_file`` keeps a learner file under a unique name
``<name>.bak-<time>[-N]`` created exclusively (a symlink is kept as the same
symlink, never followed). ``replace_learner_file`` is the solver's write:
unchanged content is left alone, other content is backed up first, then
written by learner/write.py's ``write_file``. Failures raise
``LearnerFileError`` with the problem in en and ko.

A backup must not give the learner more than the file they had (issue 18):
a copy never carries set-uid, set-gid or sticky bits and is owned like the
file it copies (else root's at 0600), and reads at most ``MAX_BYTES``; a file
over that limit, or sparse (fewer blocks than its size), is not copied but
linked under the backup name (the same blocks: the disk use does not grow;
the write that follows replaces the original name, so it has moved), or
refused with a message when it cannot be linked safely.

Layer: the learner's files; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import stat
import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.read import (
    CHUNK, KIND_WORDS, MAX_BYTES, LearnerFileError, _size, directory_fd, file_kind, path_components, read_bytes)
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.write import (
    _CLOEXEC, _NOFOLLOW, _kind_at, _open_directory, _write_all, _write_problem, write_file)
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import both, printable, with_particle

_SPECIAL_BITS = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX


def backup_file(directory, name, now=None):
    """Keep directory/name under a new unique name; returns the backup's path, or None if nothing is there.

    The name is <name>.bak-<YYYYmmdd-HHMMSS>, with -2, -3, ... when taken, and
    is created exclusively, so two backups in one second both survive and a
    planted symlink is never written through. A symlink is kept as the same
    symlink (its target is never read). A regular file is copied (at most
    MAX_BYTES, its permission bits without set-uid/set-gid/sticky, its owner
    and times), or, over MAX_BYTES or sparse, linked under the backup name
    (see the module's docstring). Directories and special files raise
    LearnerFileError.
    """
    path = os.path.join(directory, name)
    if path_components(name) != [name]:
        raise LearnerFileError(both('%s is not a plain file name' % printable(name, 80),
                                    '%s 단순한 파일 이름이 아닙니다' % with_particle(printable(name, 80), '은')))
    dir_fd = _open_directory(directory, 'cannot back up in', '에서 백업할 수 없습니다')
    try:
        return _backup_at(dir_fd, directory, name, path, time.strftime('%Y%m%d-%H%M%S', time.localtime(now)))
    finally:
        os.close(dir_fd)


def _backup_at(dir_fd, directory, name, path, stamp):
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None
        raise _write_problem(path, exc, 'cannot back up', '백업할 수 없습니다')
    if stat.S_ISLNK(info.st_mode):
        return _backup_link(dir_fd, directory, name, path, stamp, info)
    if not stat.S_ISREG(info.st_mode):
        en, ko = KIND_WORDS[file_kind(info.st_mode)]
        raise LearnerFileError(both('%s is %s where the lab keeps a file: move or rename it, then run again'
                                    % (printable(path, 200), en),
                                    '%s 실습이 파일을 두는 자리에 있는 %s 입니다. 옮기거나 이름을 바꾼 뒤 다시 실행하세요'
                                    % (with_particle(printable(path, 200), '은'), ko)))
    try:
        source = os.open(name, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK | _CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        raise _write_problem(path, exc, 'cannot back up', '백업할 수 없습니다')
    try:
        info = os.fstat(source)
        if not stat.S_ISREG(info.st_mode):  # swapped since the stat
            raise _changed(path)
        sparse = getattr(info, 'st_blocks', None) is not None and info.st_blocks * 512 < info.st_size
        if info.st_size > MAX_BYTES or sparse:
            linked, why = _backup_by_link(dir_fd, directory, name, path, stamp, info)
            if linked:
                return linked
            if info.st_size > MAX_BYTES:
                raise _not_kept(path, info.st_size, why)
            # A small sparse file that cannot be linked: a copy is bounded by MAX_BYTES anyway.
        return _backup_by_copy(dir_fd, directory, name, path, stamp, source, info)
    finally:
        os.close(source)


def _changed(path):
    return LearnerFileError(both('%s changed while it was being backed up: run again' % printable(path, 200),
                                 '%s 백업 중에 바뀌었습니다. 다시 실행하세요' % with_particle(printable(path, 200), '이')))


def _backup_link(dir_fd, directory, name, path, stamp, info):
    target = os.readlink(name, dir_fd=dir_fd)
    for candidate in _backup_names(name, stamp):
        try:
            os.symlink(target, candidate, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                continue
            raise _write_problem(os.path.join(directory, candidate), exc, 'cannot back up to', '백업할 수 없습니다')
        if os.geteuid() == 0:
            try:
                os.chown(candidate, info.st_uid, info.st_gid, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                pass
        return os.path.join(directory, candidate)
    raise _no_backup_name(path)


def _backup_by_copy(dir_fd, directory, name, path, stamp, source, info):
    """Copy source (at most MAX_BYTES) to a new backup name; owner and permission bits of the file, no special bits."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    for candidate in _backup_names(name, stamp):
        try:
            target = os.open(candidate, flags, 0o600, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                continue
            raise _write_problem(os.path.join(directory, candidate), exc, 'cannot back up to', '백업할 수 없습니다')
        done = False
        try:
            copied = 0
            while True:
                chunk = os.read(source, min(CHUNK, MAX_BYTES + 1 - copied))
                if not chunk:
                    break
                copied += len(chunk)
                if copied > MAX_BYTES:  # it grew after the fstat
                    raise _changed(path)
                _write_all(target, chunk)
            owned_alike = info.st_uid == os.geteuid()
            if os.geteuid() == 0:
                try:
                    os.fchown(target, info.st_uid, info.st_gid)
                    owned_alike = True
                except OSError:
                    owned_alike = False  # root's, at 0600
            if owned_alike:
                # After the chown, which is what clears set-id bits; never the special bits anyway.
                os.fchmod(target, stat.S_IMODE(info.st_mode) & ~_SPECIAL_BITS)
            os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
            os.fsync(target)
            done = True
        except OSError as exc:
            raise _write_problem(os.path.join(directory, candidate), exc, 'cannot back up to', '백업할 수 없습니다')
        finally:
            os.close(target)
            if not done:
                try:
                    os.unlink(candidate, dir_fd=dir_fd)
                except OSError:
                    pass
        return os.path.join(directory, candidate)
    raise _no_backup_name(path)


def _backup_by_link(dir_fd, directory, name, path, stamp, info):
    """(the backup's path, None): the same file under a new backup name, a hard link, no byte copied.

    (None, (en, ko)) saying why when it is not done: a file with set-id bits
    or other names (hard links) is never given another name by root.
    """
    if info.st_mode & _SPECIAL_BITS or info.st_nlink != 1:
        return None, ('has set-uid, set-gid or sticky bits or other names (hard links)',
                      'set-uid/set-gid/sticky 권한이 있거나 다른 이름(하드 링크)이 있습니다')
    for candidate in _backup_names(name, stamp):
        try:
            os.link(name, candidate, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                continue
            return None, ('cannot be moved aside (%s)' % os.strerror(exc.errno),
                          '옆으로 옮길 수 없습니다 (%s)' % os.strerror(exc.errno))
        linked = os.stat(candidate, dir_fd=dir_fd, follow_symlinks=False)
        if (linked.st_dev, linked.st_ino) != (info.st_dev, info.st_ino):  # swapped between the open and the link
            os.unlink(candidate, dir_fd=dir_fd)
            raise _changed(path)
        return os.path.join(directory, candidate), None
    raise _no_backup_name(path)


def _not_kept(path, size, why):
    return LearnerFileError(both(
        '%s is %s, more than the lab copies (%s), and %s: the lab does not replace it. Move it out of the '
        'workdir yourself, then run again' % (printable(path, 200), _size(size), _size(MAX_BYTES), why[0]),
        '%s 의 크기(%s)가 실습이 복사하는 크기(%s)를 넘고, %s. 실습은 이 파일을 바꾸지 않습니다. 작업 디렉터리 밖으로 직접 '
        '옮긴 뒤 다시 실행하세요' % (printable(path, 200), _size(size), _size(MAX_BYTES), why[1])))


def _no_backup_name(path):
    return LearnerFileError(both('no free backup name for %s: remove old %s.bak-* files'
                                 % (printable(path, 200), printable(os.path.basename(path), 80)),
                                 '%s 의 백업 이름을 정할 수 없습니다. 오래된 %s.bak-* 파일을 지우세요'
                                 % (printable(path, 200), printable(os.path.basename(path), 80))))


def _backup_names(name, stamp):
    yield '%s.bak-%s' % (name, stamp)
    for number in range(2, 1000):
        yield '%s.bak-%s-%d' % (name, stamp, number)


# ---------------------------------------------------------------- the solver's write

def _entry_kind(directory, name):
    """_kind_at for a directory (a path or a Workdir); None also when the directory is missing."""
    try:
        fd = directory_fd(directory)
    except OSError:
        return None
    try:
        return _kind_at(fd, name)
    finally:
        os.close(fd)


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
            if getattr(directory, 'fd', None) is None and not os.path.isdir(directory):
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
                                    '%s 실습이 파일을 쓰는 자리에 있는 %s 입니다. 옮기거나 이름을 바꾼 뒤 다시 실행하세요'
                                    % (with_particle(printable(path, 200), '은'), ko)))
    if kind == 'regular':
        current = read_bytes(directory, name, max(MAX_BYTES, len(content)))
        if current.ok and current.content == content:
            return False, None
    if check_mode:
        return True, None
    backup = backup_file(directory, name)
    write_file(directory, name, content, mode)
    return True, backup
