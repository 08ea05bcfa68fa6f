# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read and write files in a directory the learner controls, safely.

The learner's workdir is untrusted input: a file there may be a symlink to
/etc/shadow or /dev/zero, a FIFO, a directory, 1 GB of zeros, a YAML alias
bomb, a date where a string belongs, 1,000 levels of nesting, or text with
control characters that forge a console line. Every read of a learner file
and every write the collection makes there goes through this module.

Reading (grader and solver)::

    got = read_yaml_documents(workdir, 'queues.yaml')
    if got.problem:            # {'en': ..., 'ko': ...}: a failing check's message
        ...                    # got.missing is True when the file does not exist
    else:
        docs = got.content     # list of JSON-compatible documents

    docs = read_yaml_documents(workdir, 'queues.yaml').require()
    # .require() returns .content or raises LearnerFileError (.problem, .missing)

- ``read_text``, ``read_yaml_documents``, ``read_json`` and ``read_bytes``
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
- YAML is checked event by event first: aliases (``*name``, the alias bomb)
  are refused, nesting deeper than ``MAX_DEPTH`` is refused, an unquoted date
  or timestamp stays the string it was written as, and tags with no JSON
  equivalent (``!!set``, ``!!binary``, ``!!omap``, ``!!pairs``, ``!!python/*``,
  any custom ``!tag``) are refused. What it returns always serialises with
  ``json.dumps``.
- JSON deeper than ``MAX_DEPTH`` is refused before it is parsed (no
  RecursionError in the parser nor later in ``json.dumps`` of the result).

Printing: ``printable(text, limit)`` is the one way to put learner text into a
message, evidence, the console table or JUnit XML: control and format
characters removed, line breaks and tabs turned into spaces (no forged
console line), at most ``limit`` characters with an ellipsis.

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

import codecs
import errno
import json
import os
import re
import stat
import tempfile
import time
import unicodedata

try:
    import yaml
    HAS_YAML = True
except ImportError:  # reported by common.require_libraries before any use
    yaml = None
    HAS_YAML = False

MAX_BYTES = 256 * 1024
MAX_DEPTH = 64
EXCERPT = 160
_CHUNK = 64 * 1024


def both(en, ko):
    """A problem stated in both languages."""
    return {'en': en, 'ko': ko}


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


# ---------------------------------------------------------------- printing
_SPACES = re.compile(r'\s+', re.UNICODE)
_DROP = frozenset(('Cc', 'Cf', 'Cs', 'Co', 'Cn', 'Zl', 'Zp'))


def printable(value, limit=EXCERPT):
    """One safe line of learner text: no control characters, at most limit characters.

    Line breaks, tabs and other whitespace become single spaces; control,
    format (e.g. bidi overrides), private-use, surrogate and unassigned code
    points are removed, so the result is valid in XML and cannot start a new
    console line. Longer text is cut and ends with an ellipsis.
    """
    if value is None:
        return ''
    if not isinstance(value, str):
        value = str(value)
    # Work on a bounded slice: the caller may hand in a whole file.
    value = value[:limit * 4 + 16]
    value = _SPACES.sub(' ', value)
    value = ''.join(ch for ch in value if unicodedata.category(ch) not in _DROP).strip()
    if len(value) > limit:
        value = value[:max(limit - 1, 0)].rstrip() + u'\u2026'
    return value


def bounded(value, depth=16, items=100, text=500):
    """A JSON-compatible copy of evidence, bounded for grade.json and the module's result.

    Strings go through printable(text); lists and mappings keep their first
    items entries; nesting below depth becomes '...'; any other type (a date,
    bytes) becomes its printable string. Iterative in effect: depth is small.
    """
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return printable(value, text)
    if depth <= 0:
        return u'\u2026'
    if isinstance(value, dict):
        return dict((printable(key, 100), bounded(item, depth - 1, items, text))
                    for key, item in list(value.items())[:items])
    if isinstance(value, (list, tuple, set, frozenset)):
        return [bounded(item, depth - 1, items, text) for item in list(value)[:items]]
    return printable(value, text)


# ---------------------------------------------------------------- opening
def _problem(name, en, ko, missing=False):
    return LearnerFile(name, problem=both('%s %s' % (printable(name, 80), en), '%s: %s' % (printable(name, 80), ko)),
                       missing=missing)


def _components(name):
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
    parts = _components(name)
    if parts is None:
        return None, _problem(name, 'is not a file name inside the workdir (absolute, empty or with ..)',
                              '작업 디렉터리 안의 파일 이름이 아닙니다 (절대 경로, 빈 이름 또는 .. 포함)')
    nofollow = getattr(os, 'O_NOFOLLOW', 0)
    cloexec = getattr(os, 'O_CLOEXEC', 0)
    try:
        directory = os.open(workdir, os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0) | cloexec)
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
                    kind = _kind(os.stat(part, dir_fd=directory, follow_symlinks=False).st_mode)
                    if kind not in ('regular', 'other'):
                        en, ko = _KIND_WORDS[kind]
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
    kind = _kind(info.st_mode)
    if kind != 'regular':
        os.close(fd)
        en, ko = _KIND_WORDS[kind]
        return None, _not_regular(name, en, ko)
    if info.st_size > limit:
        os.close(fd)
        return None, _too_large(name, info.st_size, limit)
    return fd, info.st_size


def _not_regular(name, en, ko):
    return _problem(name, 'is %s, not a regular file: the lab reads only plain files; replace it with '
                    'the file itself' % en,
                    '%s 이며 일반 파일이 아닙니다. 실습은 일반 파일만 읽습니다. 파일 자체로 바꾸세요' % ko)


_KIND_WORDS = {
    'directory': ('a directory', '디렉터리'),
    'fifo': ('a FIFO (named pipe)', 'FIFO(이름 있는 파이프)'),
    'device': ('a device', '장치 파일'),
    'socket': ('a socket', '소켓'),
    'other': ('not a regular file', '특수 파일'),
}


def _kind(mode):
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
        en, ko = _KIND_WORDS['directory']
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
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
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


def _unreadable(name, fmt, error):
    error = printable(error, 200)
    return LearnerFile(name, problem=both('%s cannot be read as %s: %s' % (printable(name, 80), fmt, error),
                                          '%s 을(를) %s(으)로 읽을 수 없습니다: %s' % (printable(name, 80), fmt, error)))


def parse_json(name, raw):
    """A JSON text as a LearnerFile: bounded depth, problems instead of exceptions."""
    if json_depth(raw) > MAX_DEPTH:
        return _too_deep(name, 'JSON')
    try:
        return LearnerFile(name, json.loads(raw))
    except (ValueError, RecursionError) as exc:
        return _unreadable(name, 'JSON', str(exc))


def read_json(workdir, name, limit=MAX_BYTES):
    """The parsed JSON of a learner file, as a LearnerFile."""
    got = read_text(workdir, name, limit)
    if got.problem:
        return got
    return parse_json(name, got.content)


class YamlRefused(Exception):
    """A YAML construct the lab does not accept; carries en and ko words."""

    def __init__(self, en, ko):
        super(YamlRefused, self).__init__(en)
        self.problem = both(en, ko)


# Tags that mean the same in JSON; any other explicit tag is refused.
_JSON_TAGS = frozenset('tag:yaml.org,2002:%s' % t for t in ('str', 'int', 'float', 'bool', 'null', 'seq', 'map'))
_TIMESTAMP = 'tag:yaml.org,2002:timestamp'


def _refuse(events):
    """Raise YamlRefused for the first alias, non-JSON tag or nesting past MAX_DEPTH in a YAML event stream."""
    depth = 0
    for event in events:
        line = event.start_mark.line + 1 if event.start_mark else 0
        if isinstance(event, yaml.AliasEvent):
            raise YamlRefused(
                'uses a YAML alias (*%s, line %d): aliases are not accepted (they can multiply a small '
                'file into gigabytes); write the value out in full' % (printable(event.anchor, 60), line),
                'YAML 별칭(*%s, %d행)을 씁니다. 별칭은 받지 않습니다 (작은 파일을 수 GB로 불릴 수 있음). '
                '값을 그대로 적으세요' % (printable(event.anchor, 60), line))
        tag = getattr(event, 'tag', None)
        if tag not in (None, '!', _TIMESTAMP) and tag not in _JSON_TAGS:
            raise YamlRefused(
                'uses the YAML tag %s (line %d), which has no JSON equivalent: Kubernetes objects hold only '
                'mappings, lists, strings, numbers, booleans and null' % (printable(tag, 60), line),
                'JSON 에 없는 YAML 태그 %s 를 씁니다 (%d행). 쿠버네티스 객체는 매핑, 리스트, 문자열, 숫자, '
                '불리언, null 만 가집니다' % (printable(tag, 60), line))
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise YamlRefused(
                    'nests its YAML more than %d levels deep (line %d); the lab\'s files need only a few levels'
                    % (MAX_DEPTH, line),
                    'YAML 중첩이 %d 단계를 넘습니다 (%d행). 실습 파일은 몇 단계면 충분합니다' % (MAX_DEPTH, line))
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1


def _as_written(loader, node):
    """A date or timestamp stays the string the learner wrote (JSON has no date)."""
    return loader.construct_scalar(node)


def _loader_class():
    """yaml's safe loader (libyaml's when present: 4x faster), dates kept as strings."""
    base = getattr(yaml, 'CSafeLoader', None) or yaml.SafeLoader
    loader = type('JsonSafeLoader', (base,), {})
    loader.add_constructor(_TIMESTAMP, _as_written)
    return loader


_LOADER = _loader_class() if HAS_YAML else None


def parse_yaml_documents(name, raw):
    """The non-empty documents of a YAML text as a LearnerFile (content: a list).

    A first pass over the parser's events (no composition, so no alias is
    expanded and nothing recurses) refuses aliases, non-JSON tags and deep
    nesting; only then are the documents built.
    """
    try:
        _refuse(yaml.parse(raw, Loader=_LOADER))
        docs = [doc for doc in yaml.load_all(raw, Loader=_LOADER) if doc is not None]
    except YamlRefused as exc:
        return LearnerFile(name, problem=both('%s %s' % (printable(name, 80), exc.problem['en']),
                                              '%s: %s' % (printable(name, 80), exc.problem['ko'])))
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        # ValueError: e.g. an integer of more digits than Python converts.
        return _unreadable(name, 'YAML', str(exc))
    return LearnerFile(name, docs)


def read_yaml_documents(workdir, name, limit=MAX_BYTES):
    """The documents of a learner's YAML file, as a LearnerFile (content: a list)."""
    got = read_text(workdir, name, limit)
    if got.problem:
        return got
    return parse_yaml_documents(name, got.content)


# ---------------------------------------------------------------- writing
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
    return 'symlink' if stat.S_ISLNK(mode) else _kind(mode)


def write_file(directory, name, content, mode=0o600):
    """Write content (str as UTF-8, or bytes) to directory/name atomically; returns the path.

    A temporary file from mkstemp in the same directory is filled, synced and
    renamed over the target: a symlink at the target is replaced, not
    followed; a directory there is refused.
    """
    if isinstance(content, str):
        content = content.encode('utf-8')
    path = os.path.join(directory, name)
    if _components(name) != [name]:
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
        en, ko = _KIND_WORDS[_kind(info.st_mode)]
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
                    chunk = os.read(source, _CHUNK)
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
        en, ko = _KIND_WORDS[kind]
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
