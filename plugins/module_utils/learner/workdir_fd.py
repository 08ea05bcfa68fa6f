# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The learner's workdir opened once, without following a link at any level: ``open_workdir``.

``open_workdir(path)`` opens the workdir once, from ``/`` one component at
a time with ``O_NOFOLLOW|O_DIRECTORY``, refusing a link at any level and a
directory on the way that someone other than root (or us) could change.
It gives a ``Workdir``: the path as given (a str, for messages) carrying
``.fd``. Every function of learner/read.py, learner/parse.py,
learner/yaml_docs.py and learner/write.py takes it wherever it takes a
directory and then works relative to that descriptor only, so a learner
swapping the workdir, or a directory above it, for a link after the check
changes nothing (issue 18). A plain path still works (the class summary's
directory on the controller) and is opened per call. Problems raise
LearnerFileError in English and Korean.

Layer: the learner's files; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import stat

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.read import LearnerFileError
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import both, printable, with_particle


# The lab's default workdir (root's ~/gsb-kai): the one place it is set. The modules' workdir option
# (client/args.py lab_argument_spec, given it by the module), the grade's and kai-lab's defaults
# (grading/session.py DEFAULTS) and the example these messages give take it from here.
DEFAULT_WORKDIR = '/root/gsb-kai'


class Workdir(str):
    """A directory opened once: the path as given (for messages) and ``fd``, what every access goes through."""

    def __new__(cls, path, fd=None, real=None):
        self = str.__new__(cls, path)
        self.fd = fd
        self.real = real or path
        return self

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _workdir_problem(path, en, ko, missing=False):
    return LearnerFileError(both('kai_lab_workdir %s %s' % (printable(path, 200), en),
                                 'kai_lab_workdir %s: %s' % (printable(path, 200), ko)), missing)


def _changeable_by_others(info):
    """Who besides root and us could add, remove or rename entries of this directory, or None."""
    trusted_users = (0, os.geteuid())
    if info.st_uid not in trusted_users:
        return 'its owner (uid %d)' % info.st_uid, '소유자(uid %d)' % info.st_uid
    if info.st_mode & stat.S_ISVTX:  # sticky (/tmp): others cannot rename or remove what is not theirs
        return None
    if info.st_mode & stat.S_IWOTH:
        return 'every user (mode %04o)' % stat.S_IMODE(info.st_mode), '모든 사용자(권한 %04o)' % stat.S_IMODE(info.st_mode)
    if info.st_mode & stat.S_IWGRP and info.st_gid not in (0, os.getegid()):
        return ('the group gid %d (mode %04o)' % (info.st_gid, stat.S_IMODE(info.st_mode)),
                'gid %d 그룹(권한 %04o)' % (info.st_gid, stat.S_IMODE(info.st_mode)))
    return None


def _only_its_owner(info):
    """Whether only the directory's owner (not root, not us) can change it: no group or other write."""
    group = info.st_mode & stat.S_IWGRP and info.st_gid not in (0, os.getegid())
    return info.st_uid not in (0, os.geteuid()) and not info.st_mode & stat.S_IWOTH and not group


def open_workdir(path, create=False, mode=0o700):
    """The workdir as a Workdir, opened without following a link at any level; LearnerFileError names what is wrong.

    From ``/`` each component is opened with O_NOFOLLOW|O_DIRECTORY relative
    to the one before (``..`` too), so what is opened is the path as
    written, no link anywhere. Each directory looked into on the way must be
    changeable by root (or us) only, or sticky: otherwise its owner could
    swap what comes next. The workdir itself may be the learner's, and so
    may the directories on the way when the workdir is theirs too (a
    learner's ~/gsb-kai, issue 33): all they could swap in is a directory
    they can move, and whatever is opened must be owned by them. With
    create, missing directories are made (mode, whatever the umask) by
    mkdir relative to their parent's descriptor, given to that user inside
    their directory; without it a missing workdir raises with ``missing``
    set. ``.real`` is the real path.
    """
    if not isinstance(path, str) or not path.startswith('/') or '\0' in path:
        raise _workdir_problem(path, 'is not an absolute path', '절대 경로가 아닙니다')
    flags = os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0) | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_CLOEXEC', 0)
    parts = [p for p in path.split('/') if p not in ('', '.')]
    fd = os.open('/', flags)
    real = []
    way_owner = None  # the one user besides root and us who can change a directory on the way
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            here = '/' + '/'.join(real)
            info = os.fstat(fd)
            others = _changeable_by_others(info)
            if others and _only_its_owner(info) and (way_owner or (info.st_uid,))[0] == info.st_uid:
                way_owner, others = (info.st_uid, info.st_gid), None
            if others:
                raise _workdir_problem(
                    path, 'is inside %s, which %s can change: another user could swap the workdir for a link. '
                    'Use a directory whose parents only root can change, e.g. %s' % (here, others[0], DEFAULT_WORKDIR),
                    '%s 안에 있고, 그 디렉터리는 %s도 바꿀 수 있습니다. 다른 사용자가 작업 디렉터리를 링크로 바꿔칠 수 '
                    '있습니다. root 만 바꿀 수 있는 곳의 디렉터리(예: %s)를 쓰세요' % (here, others[1], DEFAULT_WORKDIR))
            try:
                child = os.open(part, flags, dir_fd=fd)
            except OSError as exc:
                if exc.errno == errno.ENOENT and create:
                    try:
                        os.mkdir(part, mode, dir_fd=fd)
                    except OSError as made:
                        if made.errno != errno.EEXIST:
                            raise _workdir_problem(path, 'cannot be created (%s)' % os.strerror(made.errno),
                                                   '만들 수 없습니다 (%s)' % os.strerror(made.errno))
                    try:  # a link planted between mkdir and here is refused like any other
                        child = os.open(part, flags, dir_fd=fd)
                    except OSError as again:
                        raise _open_workdir_problem(path, fd, real, part, again, last)
                    if stat.S_IMODE(os.fstat(child).st_mode) != mode and os.fstat(child).st_uid == os.geteuid():
                        os.fchmod(child, mode)  # mkdir's mode is cut by the umask
                    if way_owner and os.geteuid() == 0 and os.fstat(child).st_uid == 0:
                        os.fchown(child, way_owner[0], way_owner[1])  # made in a user's directory: theirs
                else:
                    raise _open_workdir_problem(path, fd, real, part, exc, last)
            os.close(fd)
            fd = child
            real = real[:-1] if part == '..' else real + [part]
        if way_owner and os.fstat(fd).st_uid != way_owner[0]:
            values = (way_owner[0], os.fstat(fd).st_uid, way_owner[0], DEFAULT_WORKDIR)
            raise _workdir_problem(
                path, 'is inside a directory its owner (uid %d) can change, but is not that user\'s (uid %d owns it): '
                'another user could swap it for another directory. Give the workdir to uid %d, or use a directory '
                'whose parents only root can change, e.g. %s' % values,
                '소유자(uid %d)가 바꿀 수 있는 디렉터리 안에 있지만 그 사용자의 것이 아닙니다 (소유자 uid %d). 작업 디렉터리를 '
                'uid %d 에게 주거나 root 만 바꿀 수 있는 곳(예: %s)을 쓰세요' % values)
    except BaseException:
        os.close(fd)
        raise
    return Workdir(path, fd, '/' + '/'.join(real))


def _open_workdir_problem(path, parent_fd, real, part, exc, last):
    where = '/' + '/'.join(real + [part])
    if exc.errno == errno.ENOENT:
        return _workdir_problem(path, 'does not exist', '없습니다', missing=True)
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        # One look at what is there now (it may be changing under us), then words for that.
        try:
            mode = os.stat(part, dir_fd=parent_fd, follow_symlinks=False).st_mode
        except OSError:
            mode = 0
        if stat.S_ISLNK(mode):
            try:
                target = ' to %s' % printable(os.readlink(part, dir_fd=parent_fd), 200)
            except OSError:
                target = ''
            if last:
                return _workdir_problem(
                    path, 'is a symbolic link%s: the lab works only in a real directory. Set kai_lab_workdir to '
                    'the directory itself' % target,
                    '심볼릭 링크입니다%s. 실습은 실제 디렉터리에서만 동작합니다. 디렉터리 자체를 지정하세요'
                    % (' (%s 가리킴)' % with_particle(target[4:], '을') if target else ''))
            return _workdir_problem(
                path, 'goes through the symbolic link %s%s: the lab opens its workdir without following '
                'links. Set kai_lab_workdir to the real path' % (where, ' (%s)' % target.strip() if target else ''),
                '심볼릭 링크 %s 거칩니다. 실습은 링크를 따라가지 않습니다. 실제 경로를 지정하세요' % with_particle(where, '을'))
        if stat.S_ISDIR(mode):  # not a directory when it was opened, one again now: someone is swapping it
            return _workdir_problem(
                path, 'changed while the lab opened it (%s was a link then, a directory now): the lab works only in a '
                'real directory that stays one. Stop changing it, then run again' % where,
                '여는 동안 바뀌었습니다 (%s 그때는 링크, 지금은 디렉터리). 실습은 그대로 있는 실제 디렉터리에서만 '
                '동작합니다. 바꾸지 말고 다시 실행하세요' % with_particle(where, '이'))
        return _workdir_problem(path, 'is not a directory (%s is not one)' % where,
                                '디렉터리가 아닙니다 (%s 디렉터리가 아님)' % with_particle(where, '이'))
    return _workdir_problem(path, 'cannot be opened (%s: %s)' % (where, os.strerror(exc.errno)),
                            '열 수 없습니다 (%s: %s)' % (where, os.strerror(exc.errno)))
