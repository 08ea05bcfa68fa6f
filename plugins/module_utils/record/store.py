# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the grader's record lives, and reading and writing it safely.

The record lives in the grader's state directory
(<state>/grade-records/<namespace>.json), outside the learner's workdir and
outside the cluster, written atomically with mode 0600. Loading never raises:
a missing, corrupt, foreign or hostile record counts as empty, with a note
saying why. update() changes it under an exclusive lock (flock of
.<namespace>.json.lock beside it): loaded afresh, changed, saved by rename,
so concurrent grades (two kai-lab check of different steps) keep each
other's entries.

What a record holds and which proof a check accepts from it: record/proofs.py.

Layer: the grader's record; may use the KAI domain, the learner's files, this host's files (host).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import errno
import fcntl
import json
import os
import re
import stat
import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.host.files import write_private
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import fill

SCHEMA_VERSION = 1
RECORD_DIR = 'grade-records'
MAX_RECORD_BYTES = 1024 * 1024
MAX_PROOFS = 10
MAX_TEXT = 1000
# How long a grade waits for another one changing the record (each takes milliseconds).
LOCK_WAIT = 10.0

CHECK_ID = re.compile(r'^[a-z][a-z0-9_]{0,40}\.[a-z][a-z0-9_]{0,40}$')
NAMESPACE = re.compile(r'^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$')
STAMP = re.compile(r'^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$')
PROOF_FIELDS = ('kind', 'uid', 'reason', 'message', 'source', 'time', 'object', 'object_uid')

WORDS = {
    'corrupt': {'en': 'the grade record {path} cannot be read ({error}); it is ignored',
                'ko': '채점 기록 {path:을} 읽을 수 없어({error}) 무시합니다'},
    'not_file': {'en': 'the grade record {path} is not a regular file; it is ignored',
                 'ko': '채점 기록 {path:이} 일반 파일이 아니어서 무시합니다'},
    'untrusted': {'en': 'the grade record {path} is writable by others or owned by another user; it is ignored',
                  'ko': '채점 기록 {path:을} 다른 사용자가 쓸 수 있거나 소유자가 달라 무시합니다'},
    'too_big': {'en': 'the grade record {path} is larger than {limit} bytes; it is ignored',
                'ko': '채점 기록 {path:이} {limit} 바이트보다 커서 무시합니다'},
    'foreign': {'en': 'the grade record {path} belongs to {what}, not to this lab; it is ignored',
                'ko': '채점 기록 {path:은} 이 실습이 아닌 {what} 의 것이라 무시합니다'},
    'entry': {'en': 'the grade record {path} has a malformed entry {check}; it is ignored',
              'ko': '채점 기록 {path} 의 {check} 항목 형식이 잘못되어 무시합니다'},
    'inside_workdir': {'en': 'the grade record path {path} is inside the learner\'s files ({workdir}); '
                             'no record is read or written there',
                       'ko': '채점 기록 경로 {path:이} 학습자 파일({workdir}) 안에 있어 기록을 읽거나 쓰지 않습니다'},
    'busy': {'en': 'the grade record {path} stayed locked by another grade for {seconds} s; this grade\'s checks are '
                   'not kept in it: check again',
             'ko': '채점 기록 {path:을} 다른 채점이 {seconds}초 동안 잠그고 있어 이번 결과를 기록하지 못했습니다. '
                   '다시 확인하세요'},
    'bad_namespace': {'en': 'namespace {namespace!r} is not a Kubernetes name; no grade record is kept',
                      'ko': '네임스페이스 {namespace!r:이} Kubernetes 이름이 아니어서 채점 기록을 남기지 않습니다'},
}


def say(key, lang, words=None, **values):
    """words[key] (words: WORDS unless given) in lang (en when lang is unknown), filled with values."""
    entry = (WORDS if words is None else words)[key]
    template = entry.get(lang) or entry['en']
    try:
        return fill(template, **values)
    except (KeyError, IndexError, ValueError):
        return template


def both(key, words=None, **values):
    return {'en': say(key, 'en', words, **values), 'ko': say(key, 'ko', words, **values)}


def text(value, limit=MAX_TEXT):
    return value[:limit] if isinstance(value, str) else ''


# ---------------------------------------------------------------- where

def record_path(state_dir, namespace):
    """<state_dir>/grade-records/<namespace>.json, or None for a namespace that is no Kubernetes name."""
    if not isinstance(namespace, str) or not NAMESPACE.match(namespace):
        return None
    return os.path.join(state_dir, RECORD_DIR, namespace + '.json')


def inside(path, directory):
    """Whether path is directory or lies below it (symlinks resolved)."""
    real_path = os.path.realpath(path)
    real_dir = os.path.realpath(directory)
    return real_path == real_dir or real_path.startswith(real_dir.rstrip(os.sep) + os.sep)


def usable_path(path, workdir):
    """(path, None) when the grader may keep its record at path, else (None, note).

    A record inside the learner's files could be written by the learner, so
    such a path is refused whatever configured it.
    """
    if not path:
        return None, None
    if workdir and inside(path, workdir):
        return None, both('inside_workdir', path=path, workdir=workdir)
    return path, None


def empty(namespace, namespace_uid=None):
    return {'schema_version': SCHEMA_VERSION, 'namespace': namespace, 'namespace_uid': namespace_uid or '',
            'checks': {}}


def valid_proof(proof):
    return isinstance(proof, dict) and proof.get('kind') in ('event', 'condition') and \
        all(isinstance(proof.get(field, ''), str) for field in PROOF_FIELDS)


def _valid_entry(entry):
    if not isinstance(entry, dict):
        return False
    if not isinstance(entry.get('verified_at'), str) or not STAMP.match(entry['verified_at']):
        return False
    proofs = entry.get('proofs', [])
    if not isinstance(proofs, list) or len(proofs) > MAX_PROOFS or not all(valid_proof(p) for p in proofs):
        return False
    subjects = entry.get('subjects', {})
    return isinstance(subjects, dict) and len(subjects) <= MAX_PROOFS and \
        all(isinstance(k, str) and isinstance(v, str) for k, v in subjects.items())


def clean_entry(entry):
    """A valid entry cut to the sizes the grader writes."""
    return {
        'verified_at': entry['verified_at'],
        'evidence': entry.get('evidence'),
        'proofs': [dict((f, text(p.get(f, ''))) for f in PROOF_FIELDS) for p in entry.get('proofs', [])],
        'subjects': dict((text(k, 253), text(v, 64)) for k, v in entry.get('subjects', {}).items()),
    }


def _read_bounded(path):
    """The bytes of a regular file owned by this user and writable only by it; raises OSError/ValueError with a key."""
    flags = os.O_RDONLY | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_NONBLOCK', 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError('not_file')
        if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise ValueError('untrusted')
        if info.st_size > MAX_RECORD_BYTES:
            raise ValueError('too_big')
        data = os.read(fd, MAX_RECORD_BYTES + 1)
        if len(data) > MAX_RECORD_BYTES:
            raise ValueError('too_big')
        return data
    finally:
        os.close(fd)


def load(path, namespace, namespace_uid=None):
    """(record, notes): the record at path for this namespace, or an empty one.

    Never raises. notes lists, in both languages, why a record or an entry
    was ignored. namespace_uid, when known, must match the record's: a
    namespace recreated since (a new lab) makes an older record foreign.
    """
    notes = []
    if not path:
        return empty(namespace, namespace_uid), notes
    try:
        data = _read_bounded(path)
    except ValueError as exc:
        key = str(exc)
        return empty(namespace, namespace_uid), [both(key, path=path, limit=MAX_RECORD_BYTES)]
    except (IOError, OSError) as exc:
        if not os.path.lexists(path):
            return empty(namespace, namespace_uid), notes
        if os.path.islink(path):
            return empty(namespace, namespace_uid), [both('not_file', path=path)]
        return empty(namespace, namespace_uid), [both('corrupt', path=path, error=exc.strerror or str(exc))]
    try:
        stored = json.loads(data.decode('utf-8'))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        return empty(namespace, namespace_uid), [both('corrupt', path=path, error=str(exc)[:120])]
    if not isinstance(stored, dict) or stored.get('schema_version') != SCHEMA_VERSION \
            or not isinstance(stored.get('checks'), dict):
        return empty(namespace, namespace_uid), [both('corrupt', path=path, error='not a grade record of schema %d'
                                                      % SCHEMA_VERSION)]
    if stored.get('namespace') != namespace:
        return empty(namespace, namespace_uid), [both('foreign', path=path,
                                                      what='namespace %s' % text(str(stored.get('namespace')), 80))]
    stored_uid = stored.get('namespace_uid') or ''
    if namespace_uid and stored_uid and stored_uid != namespace_uid:
        return empty(namespace, namespace_uid), [both('foreign', path=path,
                                                      what='an earlier lab (namespace uid %s)' % text(stored_uid, 64))]
    record = empty(namespace, namespace_uid or (stored_uid if isinstance(stored_uid, str) else ''))
    for check_id, entry in sorted(stored['checks'].items()):
        if isinstance(check_id, str) and CHECK_ID.match(check_id) and _valid_entry(entry):
            record['checks'][check_id] = clean_entry(entry)
        else:
            notes.append(both('entry', path=path, check=text(str(check_id), 80)))
    return record, notes


class RecordBusy(Exception):
    """The record's lock was not had within the wait; problem is the note (en, ko)."""

    def __init__(self, problem):
        super(RecordBusy, self).__init__(problem['en'])
        self.problem = problem


def lock_path(path):
    return os.path.join(os.path.dirname(path), '.%s.lock' % os.path.basename(path))


@contextlib.contextmanager
def locked(path, wait=None, clock=time.monotonic, sleep=time.sleep):
    """An exclusive lock on the record at path (flock of a lock file beside it, 0600, ours), waiting at most wait
    seconds (default LOCK_WAIT; then RecordBusy); released when the block ends, or when the process does."""
    wait = LOCK_WAIT if wait is None else wait
    os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)  # another grade may make it at the same moment
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_CLOEXEC', 0),
                 0o600)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            raise OSError(errno.EPERM, 'the lock file %s is not a file of ours' % lock_path(path))
        give_up = clock() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except (IOError, OSError) as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
            if clock() >= give_up:
                raise RecordBusy(both('busy', path=path, seconds=wait))
            sleep(0.01)
        yield
    finally:
        os.close(fd)


def update(path, namespace, namespace_uid, change, wait=None):
    """Change the record under its lock: loaded afresh (a concurrent grade may have saved since this one
    loaded it), change(record) -> (new record or None for no change, result), saved atomically; returns result.
    Raises RecordBusy, or IOError/OSError when it cannot be written."""
    with locked(path, wait):
        record, _notes = load(path, namespace, namespace_uid)
        changed, result = change(record)
        if changed is not None:
            save(path, changed)
    return result


def save(path, record):
    """Write the record: mode 0600 (its directory 0700 when made), whole or not at all (host/files.py)."""
    return write_private(path, json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + '\n')
