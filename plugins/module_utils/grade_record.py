# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The grader's own record of what it verified, kept for the whole lab.

KAI's proof of steps 3, 5 and 6 lives in Events (gone after the API server's
event TTL) and in PodGroup conditions (cleared by KAI v0.17+ once scheduled,
deleted with the gang's Job). A grade run while a step is fresh keeps, per
check it passed: when, the evidence it saw and, for KAI's word, the proof
itself (an event's uid, reason, message, source and time, or a PodGroup
condition). A later grade whose live proof is gone uses the recorded proof
in its place and says so; the learner's files and the objects that still
exist are always read live, so the record proves what KAI said, never what a
file says now.

The record lives in the grader's state directory
(<state>/grade-records/<namespace>.json), outside the learner's workdir and
outside the cluster, written atomically with mode 0600. Loading never raises:
a missing, corrupt, foreign or hostile record counts as empty, with a note
saying why.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import re
import stat
import tempfile
import time

from ansible_collections.gsb.kai_lab.plugins.module_utils import kai

SCHEMA_VERSION = 1
RECORD_DIR = 'grade-records'
# Keys a check puts in its evidence: live proofs to keep, the pods the proof
# is about (name -> uid), and, when the record stood in, what it used.
PROOF_KEY = 'kai_proof'
SUBJECTS_KEY = 'subjects'
RECORDED_KEY = 'recorded'

MAX_RECORD_BYTES = 1024 * 1024
MAX_PROOFS = 10
MAX_TEXT = 1000
MAX_EVIDENCE_BYTES = 8 * 1024

CHECK_ID = re.compile(r'^[a-z][a-z0-9_]{0,40}\.[a-z][a-z0-9_]{0,40}$')
NAMESPACE = re.compile(r'^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$')
STAMP = re.compile(r'^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$')
PROOF_FIELDS = ('kind', 'uid', 'reason', 'message', 'source', 'time', 'object', 'object_uid')

WORDS = {
    'corrupt': {'en': 'the grade record {path} cannot be read ({error}); it is ignored',
                'ko': '채점 기록 {path} 을(를) 읽을 수 없어({error}) 무시합니다'},
    'not_file': {'en': 'the grade record {path} is not a regular file; it is ignored',
                 'ko': '채점 기록 {path} 이(가) 일반 파일이 아니어서 무시합니다'},
    'untrusted': {'en': 'the grade record {path} is writable by others or owned by another user; it is ignored',
                  'ko': '채점 기록 {path} 을(를) 다른 사용자가 쓸 수 있거나 소유자가 달라 무시합니다'},
    'too_big': {'en': 'the grade record {path} is larger than {limit} bytes; it is ignored',
                'ko': '채점 기록 {path} 이(가) {limit} 바이트보다 커서 무시합니다'},
    'foreign': {'en': 'the grade record {path} belongs to {what}, not to this lab; it is ignored',
                'ko': '채점 기록 {path} 은(는) 이 실습이 아닌 {what} 의 것이라 무시합니다'},
    'entry': {'en': 'the grade record {path} has a malformed entry {check}; it is ignored',
              'ko': '채점 기록 {path} 의 {check} 항목 형식이 잘못되어 무시합니다'},
    'inside_workdir': {'en': 'the grade record path {path} is inside the learner\'s files ({workdir}); '
                             'no record is read or written there',
                       'ko': '채점 기록 경로 {path} 가 학습자 파일({workdir}) 안에 있어 기록을 읽거나 쓰지 않습니다'},
    'bad_namespace': {'en': 'namespace {namespace!r} is not a Kubernetes name; no grade record is kept',
                      'ko': '네임스페이스 {namespace!r} 가 Kubernetes 이름이 아니어서 채점 기록을 남기지 않습니다'},
    'used_event': {'en': 'verified at {at} from KAI\'s event {reason} on {object} ({source}, {time}): "{message}"',
                   'ko': '{at} 에 KAI 이벤트로 확인됨: {object} 의 {reason} ({source}, {time}) "{message}"'},
    'used_condition': {'en': 'verified at {at} from KAI\'s condition {reason} on {object}: "{message}"',
                       'ko': '{at} 에 KAI 조건으로 확인됨: {object} 의 {reason} "{message}"'},
    'stale': {'en': 'the recorded proof is about {name} {old}, but {name} is now another pod ({new})',
              'ko': '기록된 증거는 {name} {old} 에 대한 것이지만 지금의 {name} 은(는) 다른 파드({new})입니다'},
    'unwritable': {'en': 'the grade record {path} could not be written ({error}); this grade\'s proofs are not kept',
                   'ko': '채점 기록 {path} 을(를) 쓸 수 없어({error}) 이번 채점의 증거가 남지 않습니다'},
    'kept': {'en': 'grade record {path}: {count} check(s) kept now ({checks})',
             'ko': '채점 기록 {path}: 이번에 {count}개 검사 저장 ({checks})'},
    'keep_proof': {'en': 'Checking each step right after doing it keeps KAI\'s proof for the whole lab: '
                         'ansible-playbook playbooks/grade.yml -e kai_lab_grade_steps={step}',
                   'ko': '각 단계를 마친 직후 확인하면 KAI의 증거가 실습 내내 남습니다: '
                         'ansible-playbook playbooks/grade.yml -e kai_lab_grade_steps={step}'},
}


def say(key, lang, **values):
    """WORDS[key] in lang (en when lang is unknown), filled with values."""
    entry = WORDS[key]
    template = entry.get(lang) or entry['en']
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError):
        return template


def both(key, **values):
    return {'en': say(key, 'en', **values), 'ko': say(key, 'ko', **values)}


def utc_stamp(now=None):
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(time.time() if now is None else now))


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


# ---------------------------------------------------------------- proofs

def _text(value, limit=MAX_TEXT):
    return value[:limit] if isinstance(value, str) else ''


def proof_from_event(event):
    """What a check keeps of one of KAI's Events."""
    summary = kai.event_summary(event)
    involved = event.get('involvedObject') or {}
    return {
        'kind': 'event',
        'uid': _text(kai.meta(event).get('uid')),
        'reason': _text(summary['reason']),
        'message': _text(summary['message']),
        'source': _text(summary['source']),
        'time': _text(summary['time']),
        'object': _text(summary['object']),
        'object_uid': _text(involved.get('uid')),
    }


def proof_from_condition(podgroup, reason):
    """What a check keeps of a reason in a PodGroup's schedulingConditions ({reason, message})."""
    conditions = ((podgroup or {}).get('status') or {}).get('schedulingConditions') or []
    when = ''
    for condition in conditions:
        if any((r.get('reason'), r.get('message') or '') == (reason.get('reason'), reason.get('message'))
               for r in condition.get('reasons') or []):
            when = condition.get('lastTransitionTime') or ''
            break
    return {
        'kind': 'condition',
        'uid': _text(kai.meta(podgroup).get('uid')),
        'reason': _text(reason.get('reason')),
        'message': _text(reason.get('message')),
        'source': 'PodGroup status',
        'time': _text(when),
        'object': 'PodGroup/%s' % _text(kai.name_of(podgroup)),
        'object_uid': _text(kai.meta(podgroup).get('uid')),
    }


def subjects_of(pods):
    """name -> uid of the pods a proof is about (pods that exist)."""
    return dict((kai.name_of(p), kai.meta(p).get('uid') or '') for p in pods if p is not None)


# ---------------------------------------------------------------- the record

def empty(namespace, namespace_uid=None):
    return {'schema_version': SCHEMA_VERSION, 'namespace': namespace, 'namespace_uid': namespace_uid or '',
            'checks': {}}


def _valid_proof(proof):
    return isinstance(proof, dict) and proof.get('kind') in ('event', 'condition') and \
        all(isinstance(proof.get(field, ''), str) for field in PROOF_FIELDS)


def _valid_entry(entry):
    if not isinstance(entry, dict):
        return False
    if not isinstance(entry.get('verified_at'), str) or not STAMP.match(entry['verified_at']):
        return False
    proofs = entry.get('proofs', [])
    if not isinstance(proofs, list) or len(proofs) > MAX_PROOFS or not all(_valid_proof(p) for p in proofs):
        return False
    subjects = entry.get('subjects', {})
    return isinstance(subjects, dict) and len(subjects) <= MAX_PROOFS and \
        all(isinstance(k, str) and isinstance(v, str) for k, v in subjects.items())


def _clean_entry(entry):
    """A valid entry cut to the sizes the grader writes."""
    return {
        'verified_at': entry['verified_at'],
        'evidence': entry.get('evidence'),
        'proofs': [dict((f, _text(p.get(f, ''))) for f in PROOF_FIELDS) for p in entry.get('proofs', [])],
        'subjects': dict((_text(k, 253), _text(v, 64)) for k, v in entry.get('subjects', {}).items()),
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
                                                      what='namespace %s' % _text(str(stored.get('namespace')), 80))]
    stored_uid = stored.get('namespace_uid') or ''
    if namespace_uid and stored_uid and stored_uid != namespace_uid:
        return empty(namespace, namespace_uid), [both('foreign', path=path,
                                                      what='an earlier lab (namespace uid %s)' % _text(stored_uid, 64))]
    record = empty(namespace, namespace_uid or (stored_uid if isinstance(stored_uid, str) else ''))
    for check_id, entry in sorted(stored['checks'].items()):
        if isinstance(check_id, str) and CHECK_ID.match(check_id) and _valid_entry(entry):
            record['checks'][check_id] = _clean_entry(entry)
        else:
            notes.append(both('entry', path=path, check=_text(str(check_id), 80)))
    return record, notes


def save(path, record):
    """Write the record atomically: a temporary file in the same directory, mode 0600, renamed over path."""
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o700)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix='.%s.' % os.path.basename(path), suffix='.tmp')
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, 'w') as handle:
            fd = None
            json.dump(record, handle, indent=2, sort_keys=True, ensure_ascii=False)
            handle.write('\n')
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if fd is not None:
            os.close(fd)
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


# ---------------------------------------------------------------- use

def _bounded_evidence(evidence):
    """The check's evidence as kept in the record: itself, or a note when too large."""
    try:
        dumped = json.dumps(evidence, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        return {'omitted': 'not serialisable'}
    if len(dumped) > MAX_EVIDENCE_BYTES:
        return {'omitted': '%d bytes' % len(dumped)}
    return json.loads(dumped)


def remember(record, grade, now=None):
    """A copy of record with every check the grade verified from live evidence; (record, check ids added)."""
    updated = copy.deepcopy(record)
    added = []
    stamp = utc_stamp(now)
    for step in grade.get('steps') or []:
        for check in step.get('checks') or []:
            evidence = check.get('evidence')
            if check.get('status') != 'passed' or not CHECK_ID.match(check.get('id') or ''):
                continue
            if isinstance(evidence, dict) and evidence.get(RECORDED_KEY):
                continue  # verified from this record: keep the original time and proof
            proofs = (evidence.get(PROOF_KEY) if isinstance(evidence, dict) else None) or []
            subjects = (evidence.get(SUBJECTS_KEY) if isinstance(evidence, dict) else None) or {}
            entry = {'verified_at': stamp, 'evidence': _bounded_evidence(evidence),
                     'proofs': [p for p in proofs if _valid_proof(p)][:MAX_PROOFS],
                     'subjects': dict((k, v) for k, v in subjects.items()
                                      if isinstance(k, str) and isinstance(v, str))}
            updated['checks'][check['id']] = _clean_entry(entry)
            added.append(check['id'])
    return updated, added


def recall(record, check_id, live_pods=None):
    """(entry, problem): the recorded proof of check_id still about the pods that exist now.

    live_pods: the lab's pods now. An entry whose subject pod exists under
    another uid is about a pod the learner has since replaced: (None, problem).
    No entry, or one without a proof: (None, None).
    """
    entry = ((record or {}).get('checks') or {}).get(check_id)
    if not entry or not entry.get('proofs'):
        return None, None
    live = subjects_of(live_pods or [])
    for name, uid in sorted((entry.get('subjects') or {}).items()):
        if name in live and uid and live[name] != uid:
            return None, both('stale', name=name, old=uid, new=live[name])
    return entry, None


def best_proof(entry):
    """The proof to show: KAI's event when there is one (it has a uid and a source), else a condition."""
    events = [p for p in entry['proofs'] if p.get('kind') == 'event']
    return (events or entry['proofs'])[0]


def describe(entry, lang, proof=None):
    """'verified at <when> from KAI's event <reason> on <object> ...' in lang."""
    proof = proof or best_proof(entry)
    at = entry['verified_at'][:16].replace('T', ' ') + ' UTC'
    key = 'used_event' if proof.get('kind') == 'event' else 'used_condition'
    return say(key, lang, at=at, reason=proof.get('reason'), object=proof.get('object'), source=proof.get('source'),
               time=proof.get('time'), message=_text(proof.get('message'), 300))


def recorded_evidence(entry, proof=None):
    """What a check reports as its evidence when the record stood in for KAI's live word."""
    proof = proof or best_proof(entry)
    return {RECORDED_KEY: {'verified_at': entry['verified_at'], 'proof': proof,
                           'en': describe(entry, 'en', proof), 'ko': describe(entry, 'ko', proof)}}


def keep_proof_hint(step_id, lang):
    """The hint for a check left unverified with no record: check each step as it is done."""
    return say('keep_proof', lang, step=step_id)


# ---------------------------------------------------------------- one grade with the record

def grade_with_record(snapshot, run, record_path, workdir, write=True, now=None):
    """Grade with the grader's record and add to it what this grade verified.

    snapshot gets .record (what earlier grades verified; checks use it where
    KAI's live proof is gone); run() returns the grade. The record is read
    from and written to record_path only when it lies outside workdir, and
    written only when write is true and something was verified. The grade
    gets 'record': path, notes (in the grade's language), the checks that
    used the record and those kept now.
    """
    path, refused = usable_path(record_path, workdir)
    notes = [refused] if refused else []
    record, load_notes = load(path, snapshot.namespace, getattr(snapshot, 'namespace_uid', None))
    notes.extend(load_notes)
    snapshot.record = record
    grade = run()
    updated, added = remember(record, grade, now)
    used = [c['id'] for s in grade.get('steps') or [] for c in s.get('checks') or []
            if isinstance(c.get('evidence'), dict) and c['evidence'].get(RECORDED_KEY)]
    kept = []
    if path and write and added:
        try:
            save(path, updated)
            kept = added
        except (IOError, OSError) as exc:
            notes.append(both('unwritable', path=path, error=exc.strerror or str(exc)))
    lang = grade.get('lang') or 'en'
    grade['record'] = {'path': path, 'notes': [n.get(lang) or n['en'] for n in notes], 'used': used, 'kept': kept}
    return grade


def table_lines(grade):
    """Console lines about the record for the grade's table."""
    info = grade.get('record') or {}
    lang = grade.get('lang') or 'en'
    lines = ['note: %s' % note for note in info.get('notes') or []]
    if info.get('kept'):
        lines.append(say('kept', lang, path=info['path'], count=len(info['kept']), checks=', '.join(info['kept'])))
    return lines
