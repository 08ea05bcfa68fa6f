# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Open and read files in a directory the learner controls, safely: one descriptor at a time.

The learner's workdir is untrusted input (a symlink to /etc/shadow, a FIFO,
1 GB of zeros, 1,000 levels of nesting): every read of a learner file goes
through here (text and JSON through learner/parse.py, YAML through
learner/yaml_docs.py, writes through learner/write.py; the workdir itself
is opened once by learner/workdir_fd.py). ``got = read_text(workdir, name)``
(learner/parse.py) gives ``got.content``, or ``got.problem`` (``{'en', 'ko'}``, a failing
check's message; ``got.missing`` when there is no file); ``got.require()``
returns the content or raises LearnerFileError.

- ``read_bytes`` (and the readers built on it: ``read_text``, ``read_json``,
  learner_yaml's ``read_yaml_documents``) return a ``LearnerFile``
  (``.name``, ``.content``, ``.problem``, ``.missing``, ``.require()``).
  They never raise for what the file holds and never block: the file is
  opened relative to the workdir, one path component at a time, with
  ``O_NOFOLLOW|O_NONBLOCK`` (a symlink anywhere is refused, ``..`` and
  absolute names are refused), then ``fstat`` must show a regular file
  (FIFOs, devices, sockets and directories are refused before any read) of
  at most ``MAX_BYTES`` (256 KiB); the read itself is bounded too. A file
  with more than one link is read only when the workdir's owner owns it: a
  hard link to a file the learner cannot read is refused, whatever
  fs.protected_hardlinks says.
- A directory is a path, or a ``Workdir`` (learner/workdir_fd.py) carrying
  ``.fd``: ``directory_fd`` gives every function here and in learner/write.py
  its own descriptor of it, so a workdir opened once is never resolved
  again by its path.

Layer: the learner's files; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import stat

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import both, printable, with_particle

MAX_BYTES = 256 * 1024
CHUNK = 64 * 1024


class LearnerFileError(Exception):
    """A learner file that cannot be used, or a file that cannot be written.

    ``problem`` is ``{'en': ..., 'ko': ...}``; ``missing`` is True when the
    file simply does not exist.
    """

    def __init__(self, problem, missing=False):
        super(LearnerFileError, self).__init__(problem['en'])
        self.problem = problem
        self.missing = missing


class LearnerFile(object):
    """What reading one learner file gave: content, or a problem in en and ko."""

    def __init__(self, name, content=None, problem=None, missing=False):
        self.name = name
        self.content = content
        self.problem = problem
        self.missing = missing

    @property
    def ok(self):
        return self.problem is None

    def require(self):
        """The content, or LearnerFileError carrying the problem."""
        if self.problem is not None:
            raise LearnerFileError(self.problem, self.missing)
        return self.content


# ---------------------------------------------------------------- the directory
def directory_fd(directory):
    """A new descriptor of directory (a Workdir's own, duplicated; or a path opened now); the caller closes it."""
    fd = getattr(directory, 'fd', None)
    if fd is not None:
        return os.dup(fd)
    return os.open(directory, os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0) | getattr(os, 'O_CLOEXEC', 0))


# ---------------------------------------------------------------- opening
def _problem(name, en, ko, missing=False):
    return LearnerFile(name, problem=both('%s %s' % (printable(name, 80), en), '%s: %s' % (printable(name, 80), ko)),
                       missing=missing)


def path_components(name):
    """The path components of a learner file name relative to the workdir, or None if it escapes."""
    if not name or os.path.isabs(name) or '\0' in name:
        return None
    parts = [p for p in name.split('/') if p not in ('', '.')]
    if not parts or '..' in parts:
        return None
    return parts


def _open_regular(workdir, name, limit):
    """(fd, size) of a regular file inside workdir, or a LearnerFile with the problem.

    Opens one component at a time relative to the workdir with O_NOFOLLOW, so
    no symlink, in the name or in front of it, is ever followed.
    """
    parts = path_components(name)
    if parts is None:
        return None, _problem(name, 'is not a file name inside the workdir (absolute, empty or with ..)',
                              '작업 디렉터리 안의 파일 이름이 아닙니다 (절대 경로, 빈 이름 또는 .. 포함)')
    nofollow = getattr(os, 'O_NOFOLLOW', 0)
    cloexec = getattr(os, 'O_CLOEXEC', 0)
    try:
        directory = directory_fd(workdir)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None, _problem(name, 'is missing: the workdir %s does not exist' % printable(workdir, 120),
                                  '파일이 없습니다. 작업 디렉터리 %s 없습니다' % with_particle(printable(workdir, 120), '이'), missing=True)
        return None, _problem(name, 'cannot be read: the workdir %s cannot be opened (%s)'
                              % (printable(workdir, 120), os.strerror(exc.errno)),
                              '읽을 수 없습니다. 작업 디렉터리 %s 열 수 없습니다 (%s)'
                              % (with_particle(printable(workdir, 120), '을'), os.strerror(exc.errno)))
    fd = None
    try:
        owner = os.fstat(directory).st_uid  # the workdir's
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            flags = os.O_RDONLY | nofollow | cloexec | (os.O_NONBLOCK if last else getattr(os, 'O_DIRECTORY', 0))
            try:
                if last:
                    # Refuse a device or FIFO before opening it: opening some devices acts.
                    kind = file_kind(os.stat(part, dir_fd=directory, follow_symlinks=False).st_mode)
                    if kind not in ('regular', 'other'):
                        en, ko = KIND_WORDS[kind]
                        return None, _not_regular(name, en, ko)
                fd = os.open(part, flags | getattr(os, 'O_NOCTTY', 0), dir_fd=directory)
            except OSError as exc:
                return None, _open_problem(name, workdir, directory, part, exc)
            if not last:
                os.close(directory)
                directory, fd = fd, None
    finally:
        os.close(directory)
    info = os.fstat(fd)
    kind = file_kind(info.st_mode)
    if kind != 'regular':
        os.close(fd)
        en, ko = KIND_WORDS[kind]
        return None, _not_regular(name, en, ko)
    if info.st_nlink > 1 and info.st_uid != owner:
        os.close(fd)
        return None, _hard_link(name, info, owner)
    if info.st_size > limit:
        os.close(fd)
        return None, _too_large(name, info.st_size, limit)
    return fd, info.st_size


def _hard_link(name, info, owner):
    return _problem(name, 'is a hard link (one of %d names) to a file of uid %d, not of the workdir\'s owner (uid %d): '
                    'the lab reads only files with one name or of the workdir\'s owner; replace it with a copy of '
                    'your own file' % (info.st_nlink, info.st_uid, owner),
                    'uid %d 소유 파일에 대한 하드 링크입니다(이름 %d개). 작업 디렉터리 소유자(uid %d)의 파일이 아닙니다. '
                    '실습은 이름이 하나인 파일이나 작업 디렉터리 소유자의 파일만 읽습니다. 링크 대신 자신의 파일 사본을 두세요'
                    % (info.st_uid, info.st_nlink, owner))


def _not_regular(name, en, ko):
    return _problem(name, 'is %s, not a regular file: the lab reads only plain files; replace it with '
                    'the file itself' % en,
                    '일반 파일이 아니라 %s 입니다. 실습은 일반 파일만 읽습니다. 파일 자체로 바꾸세요' % ko)


KIND_WORDS = {
    'directory': ('a directory', '디렉터리'),
    'fifo': ('a FIFO (named pipe)', 'FIFO(이름 있는 파이프)'),
    'device': ('a device', '장치 파일'),
    'socket': ('a socket', '소켓'),
    'other': ('not a regular file', '특수 파일'),
}


def file_kind(mode):
    if stat.S_ISREG(mode):
        return 'regular'
    if stat.S_ISDIR(mode):
        return 'directory'
    if stat.S_ISFIFO(mode):
        return 'fifo'
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return 'device'
    if stat.S_ISSOCK(mode):
        return 'socket'
    return 'other'


def _open_problem(name, workdir, directory, part, exc):
    if exc.errno == errno.ENOENT:
        return _problem(name, 'is missing in %s' % printable(workdir, 120),
                        '파일이 %s 에 없습니다' % printable(workdir, 120), missing=True)
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        try:
            target = os.readlink(part, dir_fd=directory)
        except (OSError, TypeError, NotImplementedError):
            target = None
        if target is not None:
            return _problem(name, 'is a symbolic link (to %s): the lab reads only regular files inside the workdir; '
                            'replace the link with the file itself' % printable(target, 120),
                            '심볼릭 링크입니다 (%s 가리킴). 실습은 작업 디렉터리 안의 일반 파일만 읽습니다. '
                            '링크 대신 파일 자체를 두세요' % with_particle(printable(target, 120), '을'))
        return _problem(name, 'is not a regular file inside the workdir (%s)' % os.strerror(exc.errno),
                        '작업 디렉터리 안의 일반 파일이 아닙니다 (%s)' % os.strerror(exc.errno))
    if exc.errno == errno.EISDIR:
        en, ko = KIND_WORDS['directory']
        return _problem(name, 'is %s, not a regular file' % en, '일반 파일이 아니라 %s 입니다' % ko)
    return _problem(name, 'cannot be read (%s)' % os.strerror(exc.errno),
                    '읽을 수 없습니다 (%s)' % os.strerror(exc.errno))


def _too_large(name, size, limit):
    return _problem(name, 'is %s; the lab reads at most %s: the file should hold only what the step asks for'
                    % (_size(size), _size(limit)),
                    '%s 입니다. 실습은 최대 %s 까지만 읽습니다. 단계가 요구하는 내용만 담으세요' % (_size(size), _size(limit)))


def _size(count):
    if count >= 1024 * 1024:
        return '%.1f MiB' % (count / 1024.0 / 1024.0)
    if count >= 1024:
        return '%d KiB' % (count // 1024)
    return '%d bytes' % count


# ---------------------------------------------------------------- reading
def read_bytes(workdir, name, limit=MAX_BYTES):
    """The bytes of a regular file inside workdir (at most limit of them), as a LearnerFile."""
    fd, size = _open_regular(workdir, name, limit)
    if fd is None:
        return size
    try:
        chunks = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        return _problem(name, 'cannot be read (%s)' % os.strerror(exc.errno),
                        '읽을 수 없습니다 (%s)' % os.strerror(exc.errno))
    finally:
        os.close(fd)
    if total > limit:  # it grew after fstat
        return _too_large(name, total, limit)
    return LearnerFile(name, b''.join(chunks))
