# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The learner's workdir as the lab's own directory: provision and reset, through one descriptor.

Provisioning and reset used to check the workdir's path in one task and then
act on the path in later tasks (create, mark, list, move), each resolving it
again: a learner swapping the directory for a link between two tasks made
root act elsewhere (issue 18 row 4). Here the workdir is opened once
(learner/workdir_fd.py's open_workdir: no link at any level, no directory on the way
that another user can change) and everything after that is relative to
that descriptor: the marker is created with O_EXCL|O_NOFOLLOW, the listing
is the descriptor's, reset's backup directory is made with mkdir relative
to it and opened with O_NOFOLLOW, and files move by rename between the two
descriptors (a link moves as a link). Nothing is deleted.

``inspect`` says whether the directory is the lab's: it carries the marker,
or holds only names the lab itself leaves (then it is adopted: marked now);
``prepare`` is provisioning (create it 0700 when missing, then inspect);
``reset`` moves the lab's files (and the grader's record) into a new
backup-<time>-<random> directory. Problems raise WorkdirRefused with the
message in English and Korean.

Layer: the learner's files; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import binascii
import errno
import os
import pwd
import re
import shutil
import stat
import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.read import LearnerFileError
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import workdir_fd
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.workdir_fd import open_workdir
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import printable, with_particle

MARKER_TEXT = ("This directory is the gsb.kai_lab lab's workdir: reset moves the lab's files from here to "
               "backup-<time>-*/.\n")
_DIRECTORY_FLAGS = (os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0) | getattr(os, 'O_NOFOLLOW', 0)
                    | getattr(os, 'O_CLOEXEC', 0))


class WorkdirRefused(Exception):
    """The workdir cannot be used or reset; ``message`` is English / Korean."""

    def __init__(self, en, ko):
        super(WorkdirRefused, self).__init__('%s / %s' % (en, ko))
        self.message = '%s / %s' % (en, ko)


def _refused(problem):
    return WorkdirRefused(problem['en'], problem['ko'])


def _open(path, create, forbidden):
    """The Workdir, or None when it is missing (and not created); WorkdirRefused for a link, a system directory, ..."""
    try:
        workdir = open_workdir(path, create=create)
    except LearnerFileError as exc:
        if exc.missing:
            return None
        raise _refused(exc.problem)
    if workdir.real in [os.path.normpath(p) for p in forbidden]:
        workdir.close()
        raise WorkdirRefused(
            "kai_lab_workdir %s is the system directory %s: the lab's reset moves files out of its workdir. "
            "Use a directory of its own, e.g. %s" % (printable(path, 200), workdir.real, workdir_fd.DEFAULT_WORKDIR),
            'kai_lab_workdir 가 시스템 디렉터리(%s)입니다. 실습 전용 디렉터리(예: %s)를 지정하세요'
            % (workdir.real, workdir_fd.DEFAULT_WORKDIR))
    return workdir


def _inspect(workdir, own_names, marker, check_mode):
    """(marked, foreign names, adopted) of an open workdir; marks it when it holds only the lab's names."""
    names = os.listdir(workdir.fd)
    own = re.compile(own_names)
    foreign = sorted(re.sub(r'[\x00-\x1f\x7f]', '?', n) for n in names if not own.search(n))
    marked = False
    if marker in names:
        marked = stat.S_ISREG(os.stat(marker, dir_fd=workdir.fd, follow_symlinks=False).st_mode)
    adopted = False
    if not marked and not foreign:
        adopted = True
        if not check_mode:
            _write_marker(workdir, marker)
    return marked, foreign, adopted


def _write_marker(workdir, marker):
    try:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_NOFOLLOW', 0), 0o600,
                     dir_fd=workdir.fd)
    except OSError as exc:
        if exc.errno == errno.EEXIST:  # something else of that name: left as it is, as copy's force=false did
            return
        raise WorkdirRefused('cannot mark kai_lab_workdir %s as the lab\'s: %s' % (workdir, os.strerror(exc.errno)),
                             '작업 디렉터리 %s 표시할 수 없습니다: %s' % (with_particle(workdir, '을'), os.strerror(exc.errno)))
    try:
        os.write(fd, MARKER_TEXT.encode('utf-8'))
    finally:
        os.close(fd)


def user_ids(name):
    """(uid, gid) of the user name (its primary group), or WorkdirRefused naming it."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise WorkdirRefused('the learner\'s user %s does not exist on this host: create it, or set kai_lab_learner_user '
                             'to an existing login' % printable(name, 80),
                             '이 호스트에 학습자 사용자 %s 없습니다. 만들거나 kai_lab_learner_user 를 있는 로그인으로 '
                             '지정하세요' % with_particle(printable(name, 80), '이'))
    return entry.pw_uid, entry.pw_gid


def prepare(path, forbidden, own_names, marker, mode=0o700, check_mode=False, owner=None):
    """Provisioning's workdir: created when missing, private, the owner's (uid, gid) when given, and marked as the
    lab's when it holds only its files.

    Returns a dict: exists, created, changed, is_lab, marked, foreign.
    """
    existed = _open(path, False, forbidden)
    if existed is None and check_mode:
        return {'exists': False, 'created': True, 'changed': True, 'is_lab': True, 'marked': False, 'foreign': []}
    workdir = existed or _open(path, True, forbidden)
    try:
        changed = existed is None
        info = os.fstat(workdir.fd)
        # As the file task before did: the workdir is private to its owner.
        if stat.S_IMODE(info.st_mode) != mode:
            changed = True
            if not check_mode:
                os.fchmod(workdir.fd, mode)
        if owner and (info.st_uid, info.st_gid) != tuple(owner):
            changed = True
            if not check_mode:
                os.fchown(workdir.fd, owner[0], owner[1])
        marked, foreign, adopted = _inspect(workdir, own_names, marker, check_mode)
        return {'exists': True, 'created': existed is None, 'changed': changed or adopted, 'is_lab': marked or adopted,
                'marked': marked or adopted, 'foreign': foreign}
    finally:
        workdir.close()


def inspect(path, forbidden, own_names, marker, check_mode=False):
    """Whether an existing workdir is the lab's (adopting one with only the lab's names); a missing one is."""
    workdir = _open(path, False, forbidden)
    if workdir is None:
        return {'exists': False, 'created': False, 'changed': False, 'is_lab': True, 'marked': False, 'foreign': []}
    try:
        marked, foreign, adopted = _inspect(workdir, own_names, marker, check_mode)
        return {'exists': True, 'created': False, 'changed': adopted, 'is_lab': marked or adopted,
                'marked': marked or adopted, 'foreign': foreign}
    finally:
        workdir.close()


def reset(path, forbidden, own_names, marker, lab_files, record_path=None, check_mode=False, now=None, owner=None):
    """Move the lab's files (names matching lab_files) and the grader's record into a new backup directory.

    Refuses a workdir that is not the lab's. Returns a dict: the inspect
    keys plus moved (names), record (whether the record moved) and backup
    (the new directory's path, None when there was nothing to move or in
    check mode). With owner (uid, gid), the backup directory is given to
    that user once everything is in it: the learner keeps its own files.
    """
    workdir = _open(path, False, forbidden)
    result = {'exists': workdir is not None, 'created': False, 'changed': False, 'is_lab': True, 'marked': False,
              'foreign': [], 'moved': [], 'record': False, 'backup': None}
    try:
        if workdir is not None:
            marked, foreign, adopted = _inspect(workdir, own_names, marker, check_mode)
            result.update(changed=adopted, is_lab=marked or adopted, marked=marked or adopted, foreign=foreign)
        if workdir is not None and not result['is_lab']:
            shown = result['foreign'][:10]
            more = ', ...' if len(result['foreign']) > 10 else ''
            raise WorkdirRefused(
                'kai_lab_workdir %s holds files the lab did not write (%s%s) and no %s marker, so it does not look '
                'like the lab\'s workdir and reset changes nothing. Point kai_lab_workdir at the lab\'s own directory '
                'or, if this is it, mark it: touch %s/%s' % (path, ', '.join(shown), more, marker, path, marker),
                '작업 디렉터리에 실습이 만들지 않은 파일이 있고 표시 파일이 없어 초기화하지 않습니다. 실습 디렉터리가 '
                '맞다면 위의 touch 명령으로 표시하세요')
        names = sorted(n for n in os.listdir(workdir.fd) if re.search(lab_files, n)) if workdir is not None else []
        has_record = bool(record_path) and os.path.isfile(record_path)
        result['moved'] = names
        result['record'] = has_record
        if not names and not has_record:
            return result
        result['changed'] = True
        if check_mode or workdir is None:
            return result
        backup_name, backup_fd = _backup_directory(workdir, now)
        try:
            for name in names:
                # rename between two descriptors: a link moves as the link; the
                # backup directory is new and root's, so nothing there is replaced.
                os.rename(name, name, src_dir_fd=workdir.fd, dst_dir_fd=backup_fd)
            if has_record:
                _move_record(record_path, backup_fd)
            if owner:
                os.fchown(backup_fd, owner[0], owner[1])
        except OSError as exc:
            raise WorkdirRefused('reset could not move the lab\'s files into %s/%s: %s'
                                 % (path, backup_name, os.strerror(exc.errno)),
                                 '초기화가 실습 파일을 %s 옮기지 못했습니다: %s'
                                 % (with_particle('%s/%s' % (path, backup_name), '으로'), os.strerror(exc.errno)))
        finally:
            os.close(backup_fd)
        result['backup'] = os.path.join(path, backup_name)
        return result
    finally:
        if workdir is not None:
            workdir.close()


def _backup_directory(workdir, now):
    """(name, fd) of a new backup-<time>-<random> directory in the workdir, 0700, opened without following links."""
    stamp = time.strftime('%Y%m%d-%H%M%S', time.localtime(now))
    for _attempt in range(100):
        name = 'backup-%s-%s' % (stamp, binascii.hexlify(os.urandom(4)).decode('ascii'))
        try:
            os.mkdir(name, 0o700, dir_fd=workdir.fd)
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                continue
            raise WorkdirRefused('cannot create a backup directory in %s: %s' % (workdir, os.strerror(exc.errno)),
                                 '%s 에 백업 디렉터리를 만들 수 없습니다: %s' % (workdir, os.strerror(exc.errno)))
        try:
            fd = os.open(name, _DIRECTORY_FLAGS, dir_fd=workdir.fd)
        except OSError:
            fd = None
        # The learner owns the workdir and could have put something else under
        # that name since the mkdir: only our own new directory is used.
        if fd is not None:
            info = os.fstat(fd)
            if info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) & 0o077 == 0 and not os.listdir(fd):
                return name, fd
            os.close(fd)
        raise WorkdirRefused('the backup directory %s/%s changed while reset made it: run reset again' % (workdir, name),
                             '초기화 중에 백업 디렉터리 %s 바뀌었습니다. 다시 실행하세요'
                             % with_particle('%s/%s' % (workdir, name), '이'))
    raise WorkdirRefused('no free backup directory name in %s' % workdir,
                         '%s 에 백업 디렉터리 이름을 정할 수 없습니다' % workdir)


def _move_record(record_path, backup_fd):
    """The grader's record (root's, outside the workdir) into the backup directory as grade-record.json."""
    try:
        os.rename(record_path, 'grade-record.json', dst_dir_fd=backup_fd)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    # Another file system: copy into a file created exclusively, then remove the original.
    target = os.open('grade-record.json', os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_NOFOLLOW', 0), 0o600,
                     dir_fd=backup_fd)
    with os.fdopen(target, 'wb') as out, open(record_path, 'rb') as source:
        shutil.copyfileobj(source, out)
        out.flush()
        os.fsync(out.fileno())
    os.unlink(record_path)
