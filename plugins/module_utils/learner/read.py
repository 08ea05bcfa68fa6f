# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read files in a directory the learner controls, safely.

The learner's workdir is untrusted input (a symlink to /etc/shadow, a FIFO,
1 GB of zeros, 1,000 levels of nesting): every read of a learner file goes
through here (YAML through learner/yaml_docs.py, writes through learner/write.py).
``got = read_text(workdir, name)`` gives ``got.content``, or ``got.problem``
(``{'en', 'ko'}``, a failing check's message; ``got.missing`` when there is
no file); ``got.require()`` returns the content or raises LearnerFileError.

- ``read_text``, ``read_json``, ``read_bytes`` (and learner_yaml's ``read_yaml_documents``)
  return a ``LearnerFile`` (``.name``, ``.content``, ``.problem``,
  ``.missing``, ``.require()``). They never raise for what the file holds and
  never block: the file is opened relative to the workdir, one path component
  at a time, with ``O_NOFOLLOW|O_NONBLOCK`` (a symlink anywhere is refused,
  ``..`` and absolute names are refused), then ``fstat`` must show a regular
  file (FIFOs, devices, sockets and directories are refused before any read)
  of at most ``MAX_BYTES`` (256 KiB); the read itself is bounded too.
- Text is UTF-8 (a BOM is dropped); bytes that are not UTF-8 become U+FFFD,
  so such a file fails its check on its content, never with a
  UnicodeDecodeError.
- JSON deeper than ``MAX_DEPTH`` is refused before it is parsed (no
  RecursionError in the parser nor later in ``json.dumps`` of the result).
- ``open_workdir(path)`` opens the workdir once, from ``/`` one component at
  a time with ``O_NOFOLLOW|O_DIRECTORY``, refusing a link at any level and a
  directory on the way that someone other than root (or us) could change.
  It gives a ``Workdir``: the path as given (a str, for messages) carrying
  ``.fd``. Every function here and in learner_write takes it wherever it
  takes a directory and then works relative to that descriptor only, so a
  learner swapping the workdir, or a directory above it, for a link after
  the check changes nothing (issue 18). A plain path still works (the
  class summary's directory on the controller) and is opened per call.

Layer: the learner's files; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import codecs
import errno
import json
import os
import re
import stat

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import both, printable

MAX_BYTES = 256 * 1024
MAX_DEPTH = 64
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


# ---------------------------------------------------------------- the workdir
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


def directory_fd(directory):
    """A new descriptor of directory (a Workdir's own, duplicated; or a path opened now); the caller closes it."""
    fd = getattr(directory, 'fd', None)
    if fd is not None:
        return os.dup(fd)
    return os.open(directory, os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0) | getattr(os, 'O_CLOEXEC', 0))


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


def open_workdir(path, create=False, mode=0o700):
    """The workdir as a Workdir, opened without following a link at any level; LearnerFileError names what is wrong.

    From ``/`` each component is opened with O_NOFOLLOW|O_DIRECTORY relative
    to the one before (``..`` too), so what is opened is the path as
    written, no link anywhere. Each directory looked into on the way must be
    changeable by root (or us) only, or sticky: otherwise its owner could
    swap what comes next. The workdir itself may be the learner's, and so
    may the directories on the way when the workdir is theirs too (a
    learner's ~/gsb-kai): all they could swap in is a directory they can
    move, and whatever is opened must be owned by them (``_owned_way``).
    With create, missing directories are made (mode, whatever the umask) by
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
                    'Use a directory whose parents only root can change, e.g. /root/gsb-kai' % (here, others[0]),
                    '%s 안에 있고, %s 가 그 디렉터리를 바꿀 수 있습니다. 다른 사용자가 작업 디렉터리를 링크로 바꿔칠 수 '
                    '있습니다. root 만 바꿀 수 있는 곳의 디렉터리(예: /root/gsb-kai)를 쓰세요' % (here, others[1]))
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
            raise _workdir_problem(
                path, 'is inside a directory its owner (uid %d) can change, but is not that user\'s (uid %d owns it): '
                'another user could swap it for another directory. Give the workdir to uid %d, or use a directory '
                'whose parents only root can change, e.g. /root/gsb-kai' % (way_owner[0], os.fstat(fd).st_uid, way_owner[0]),
                '소유자(uid %d)가 바꿀 수 있는 디렉터리 안에 있지만 그 사용자의 것이 아닙니다 (소유자 uid %d). 작업 디렉터리를 '
                'uid %d 에게 주거나 root 만 바꿀 수 있는 곳(예: /root/gsb-kai)을 쓰세요'
                % (way_owner[0], os.fstat(fd).st_uid, way_owner[0]))
    except BaseException:
        os.close(fd)
        raise
    return Workdir(path, fd, '/' + '/'.join(real))


def _only_its_owner(info):
    """Whether only the directory's owner (not root, not us) can change it: no group or other write."""
    group = info.st_mode & stat.S_IWGRP and info.st_gid not in (0, os.getegid())
    return info.st_uid not in (0, os.geteuid()) and not info.st_mode & stat.S_IWOTH and not group


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
                    % (' (%s 를 가리킴)' % target[4:] if target else ''))
            return _workdir_problem(
                path, 'goes through the symbolic link %s%s: the lab opens its workdir without following '
                'links. Set kai_lab_workdir to the real path' % (where, ' (%s)' % target.strip() if target else ''),
                '심볼릭 링크 %s 를 거칩니다. 실습은 링크를 따라가지 않습니다. 실제 경로를 지정하세요' % where)
        if stat.S_ISDIR(mode):  # not a directory when it was opened, one again now: someone is swapping it
            return _workdir_problem(
                path, 'changed while the lab opened it (%s was a link then, a directory now): the lab works only in a '
                'real directory that stays one. Stop changing it, then run again' % where,
                '여는 동안 바뀌었습니다 (%s 가 그때는 링크, 지금은 디렉터리). 실습은 그대로 있는 실제 디렉터리에서만 '
                '동작합니다. 바꾸지 말고 다시 실행하세요' % where)
        return _workdir_problem(path, 'is not a directory (%s is not one)' % where,
                                '디렉터리가 아닙니다 (%s 가 디렉터리가 아님)' % where)
    return _workdir_problem(path, 'cannot be opened (%s: %s)' % (where, os.strerror(exc.errno)),
                            '열 수 없습니다 (%s: %s)' % (where, os.strerror(exc.errno)))


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
                                  '파일이 없습니다. 작업 디렉터리 %s 가 없습니다' % printable(workdir, 120), missing=True)
        return None, _problem(name, 'cannot be read: the workdir %s cannot be opened (%s)'
                              % (printable(workdir, 120), os.strerror(exc.errno)),
                              '읽을 수 없습니다. 작업 디렉터리 %s 를 열 수 없습니다 (%s)'
                              % (printable(workdir, 120), os.strerror(exc.errno)))
    fd = None
    try:
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
    if info.st_size > limit:
        os.close(fd)
        return None, _too_large(name, info.st_size, limit)
    return fd, info.st_size


def _not_regular(name, en, ko):
    return _problem(name, 'is %s, not a regular file: the lab reads only plain files; replace it with '
                    'the file itself' % en,
                    '%s 이며 일반 파일이 아닙니다. 실습은 일반 파일만 읽습니다. 파일 자체로 바꾸세요' % ko)


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
                            '심볼릭 링크입니다 (%s 를 가리킴). 실습은 작업 디렉터리 안의 일반 파일만 읽습니다. '
                            '링크 대신 파일 자체를 두세요' % printable(target, 120))
        return _problem(name, 'is not a regular file inside the workdir (%s)' % os.strerror(exc.errno),
                        '작업 디렉터리 안의 일반 파일이 아닙니다 (%s)' % os.strerror(exc.errno))
    if exc.errno == errno.EISDIR:
        en, ko = KIND_WORDS['directory']
        return _problem(name, 'is %s, not a regular file' % en, '%s 이며 일반 파일이 아닙니다' % ko)
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


def decode_text(name, data):
    """The text of data as a LearnerFile: UTF-8, a BOM dropped, bytes that are not UTF-8 as U+FFFD.

    Replacement, not refusal: the check then judges the text it can see and
    fails with its own words (the replacement characters show in the
    evidence), and the solver compares and backs up the bytes as they are.
    """
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    return LearnerFile(name, data.decode('utf-8', 'replace'))


def read_text(workdir, name, limit=MAX_BYTES):
    """The UTF-8 text of a learner file, as a LearnerFile."""
    got = read_bytes(workdir, name, limit)
    if got.problem:
        return got
    return decode_text(name, got.content)


def json_depth(raw):
    """How deeply the arrays and objects of a JSON text nest (strings ignored), without parsing it."""
    depth = deepest = 0
    for token in _JSON_STRUCTURE.findall(raw):
        if token in '[{':
            depth += 1
            if depth > deepest:
                deepest = depth
        elif token in ']}':
            depth -= 1
    return deepest


_JSON_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


def _too_deep(name, fmt):
    return _problem(name, 'nests its %s more than %d levels deep; the lab\'s files need only a few levels'
                    % (fmt, MAX_DEPTH),
                    '%s 중첩이 %d 단계를 넘습니다. 실습 파일은 몇 단계면 충분합니다' % (fmt, MAX_DEPTH))


def unreadable(name, fmt, error):
    error = printable(error, 200)
    return LearnerFile(name, problem=both('%s cannot be read as %s: %s' % (printable(name, 80), fmt, error),
                                          '%s 을(를) %s(으)로 읽을 수 없습니다: %s' % (printable(name, 80), fmt, error)))


def _no_constant(name):
    # NaN and Infinity are no JSON (RFC 8259); Python's parser accepts them unless told not to.
    raise ValueError('%s is not a JSON value' % name)


def parse_json(name, raw):
    """A JSON text as a LearnerFile: bounded depth, problems instead of exceptions."""
    if json_depth(raw) > MAX_DEPTH:
        return _too_deep(name, 'JSON')
    try:
        return LearnerFile(name, json.loads(raw, parse_constant=_no_constant))
    except (ValueError, RecursionError) as exc:
        return unreadable(name, 'JSON', str(exc))


def read_json(workdir, name, limit=MAX_BYTES):
    """The parsed JSON of a learner file, as a LearnerFile."""
    got = read_text(workdir, name, limit)
    if got.problem:
        return got
    return parse_json(name, got.content)
