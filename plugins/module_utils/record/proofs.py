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

Where the record lives and how it is read and written (never raising, mode
0600, never inside the learner's workdir): record/store.py.

Layer: the grader's record; may use the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.record.store import (
    CHECK_ID, MAX_PROOFS, RecordBusy, both, clean_entry, load, say, text, update, usable_path, valid_proof)

# Keys a check puts in its evidence: live proofs to keep, the pods the proof
# is about (name -> uid), and, when the record stood in, what it used.
PROOF_KEY = 'kai_proof'
SUBJECTS_KEY = 'subjects'
RECORDED_KEY = 'recorded'
MAX_EVIDENCE_BYTES = 8 * 1024

WORDS = {
    'used_event': {'en': 'verified at {at} from KAI\'s event {reason} on {object} ({source}, {time}): "{message}"',
                   'ko': '{at} 에 KAI 이벤트로 확인됨: {object} 의 {reason} ({source}, {time}) "{message}"'},
    'used_condition': {'en': 'verified at {at} from KAI\'s condition {reason} on {object}: "{message}"',
                       'ko': '{at} 에 KAI 조건으로 확인됨: {object} 의 {reason} "{message}"'},
    'stale': {'en': 'the recorded proof is about {name} {old}, but {name} is now another pod ({new})',
              'ko': '기록된 증거는 {name} {old} 에 대한 것이지만 지금의 {name:은} 다른 파드({new})입니다'},
    'unwritable': {'en': 'the grade record {path} could not be written ({error}); this grade\'s proofs are not kept',
                   'ko': '채점 기록 {path:을} 쓸 수 없어({error}) 이번 채점의 증거가 남지 않습니다'},
    'kept': {'en': 'grade record {path}: {count} check(s) kept now ({checks})',
             'ko': '채점 기록 {path}: 이번에 {count}개 검사 저장 ({checks})'},
    'keep_proof': {'en': 'Checking each step right after doing it keeps KAI\'s proof for the whole lab: '
                         'ansible-playbook playbooks/grade.yml -e kai_lab_grade_steps={step}',
                   'ko': '각 단계를 마친 직후 확인하면 KAI의 증거가 실습 내내 남습니다: '
                         'ansible-playbook playbooks/grade.yml -e kai_lab_grade_steps={step}'},
}


def utc_stamp(now=None):
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(time.time() if now is None else now))


# ---------------------------------------------------------------- proofs

def proof_from_event(event):
    """What a check keeps of one of KAI's Events."""
    summary = kai_events.event_summary(event)
    involved = event.get('involvedObject') or {}
    return {
        'kind': 'event',
        'uid': text(kai.meta(event).get('uid')),
        'reason': text(summary['reason']),
        'message': text(summary['message']),
        'source': text(summary['source']),
        'time': text(summary['time']),
        'object': text(summary['object']),
        'object_uid': text(involved.get('uid')),
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
        'uid': text(kai.meta(podgroup).get('uid')),
        'reason': text(reason.get('reason')),
        'message': text(reason.get('message')),
        'source': 'PodGroup status',
        'time': text(when),
        'object': 'PodGroup/%s' % text(kai.name_of(podgroup)),
        'object_uid': text(kai.meta(podgroup).get('uid')),
    }


def proof_object(proof):
    """(kind, name) of the object a proof is about ('PodGroup/pg-x' -> ('PodGroup', 'pg-x'))."""
    kind, _sep, name = (proof.get('object') or '').partition('/')
    return kind, name


def subjects_of(pods):
    """name -> uid of the pods a proof is about (pods that exist)."""
    return dict((kai.name_of(p), kai.meta(p).get('uid') or '') for p in pods if p is not None)


# ---------------------------------------------------------------- use

def _bounded_evidence(evidence):
    """The check's evidence as kept in the record: itself, or a note when too large."""
    try:
        dumped = json.dumps(evidence, sort_keys=True, default=str, allow_nan=False)
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
                     'proofs': [p for p in proofs if valid_proof(p)][:MAX_PROOFS],
                     # As many as a record may hold (grade_record_store): a longer list would void the entry.
                     'subjects': dict(sorted((k, v) for k, v in subjects.items()
                                             if isinstance(k, str) and isinstance(v, str))[:MAX_PROOFS])}
            updated['checks'][check['id']] = clean_entry(entry)
            added.append(check['id'])
    return updated, added


def recall(record, check_id, live_pods=None, live_podgroups=None):
    """(entry, problem): the recorded proof of check_id still about the pods that exist now.

    live_pods: the lab's pods now, live_podgroups its PodGroups. An entry
    whose subject pod exists under another uid is about a pod the learner has
    since replaced: (None, problem). So is a proof whose object (a Pod or
    PodGroup) exists now under another uid: such proofs are dropped, and an
    entry left with none is (None, problem). No entry, or one without a
    proof: (None, None).
    """
    entry = ((record or {}).get('checks') or {}).get(check_id)
    if not entry or not entry.get('proofs'):
        return None, None
    live = subjects_of(live_pods or [])
    for name, uid in sorted((entry.get('subjects') or {}).items()):
        if name in live and uid and live[name] != uid:
            return None, both('stale', WORDS, name=name, old=uid, new=live[name])
    objects = dict((('Pod', name), uid) for name, uid in live.items())
    objects.update((('PodGroup', kai.name_of(pg)), kai.meta(pg).get('uid') or '') for pg in live_podgroups or [])
    proofs, problem = [], None
    for proof in entry['proofs']:
        now = objects.get(proof_object(proof))
        if now is not None and proof.get('object_uid') and now != proof['object_uid']:
            problem = problem or both('stale', WORDS, name=proof['object'], old=proof['object_uid'], new=now)
            continue
        proofs.append(proof)
    if not proofs:
        return None, problem
    return (entry if len(proofs) == len(entry['proofs']) else dict(entry, proofs=proofs)), None


def best_proof(entry):
    """The proof to show: KAI's event when there is one (it has a uid and a source), else a condition."""
    events = [p for p in entry['proofs'] if p.get('kind') == 'event']
    return (events or entry['proofs'])[0]


def describe(entry, lang, proof=None):
    """'verified at <when> from KAI's event <reason> on <object> ...' in lang."""
    proof = proof or best_proof(entry)
    at = entry['verified_at'][:16].replace('T', ' ') + ' UTC'
    key = 'used_event' if proof.get('kind') == 'event' else 'used_condition'
    return say(key, lang, WORDS, at=at, reason=proof.get('reason'), object=proof.get('object'), source=proof.get('source'),
               time=proof.get('time'), message=text(proof.get('message'), 300))


def recorded_evidence(entry, proof=None):
    """What a check reports as its evidence when the record stood in for KAI's live word."""
    proof = proof or best_proof(entry)
    return {RECORDED_KEY: {'verified_at': entry['verified_at'], 'proof': proof,
                           'en': describe(entry, 'en', proof), 'ko': describe(entry, 'ko', proof)}}


def keep_proof_hint(step_id, lang):
    """The hint for a check left unverified with no record: check each step as it is done."""
    return say('keep_proof', lang, WORDS, step=step_id)


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
    _unused, added = remember(record, grade, now)
    used = [c['id'] for s in grade.get('steps') or [] for c in s.get('checks') or []
            if isinstance(c.get('evidence'), dict) and c['evidence'].get(RECORDED_KEY)]
    kept = []
    if path and write and added:
        def change(fresh):  # under the record's lock: what concurrent grades kept since stays
            merged, now_added = remember(fresh, grade, now)
            return (merged if now_added else None), now_added
        try:
            kept = update(path, snapshot.namespace, getattr(snapshot, 'namespace_uid', None), change)
        except RecordBusy as exc:
            notes.append(exc.problem)
        except (IOError, OSError) as exc:
            notes.append(both('unwritable', WORDS, path=path, error=exc.strerror or str(exc)))
    lang = grade.get('lang') or 'en'
    grade['record'] = {'path': path, 'notes': [n.get(lang) or n['en'] for n in notes], 'used': used, 'kept': kept}
    return grade


def table_lines(grade):
    """Console lines about the record for the grade's table."""
    info = grade.get('record') or {}
    lang = grade.get('lang') or 'en'
    lines = ['note: %s' % note for note in info.get('notes') or []]
    if info.get('kept'):
        lines.append(say('kept', lang, WORDS, path=info['path'], count=len(info['kept']), checks=', '.join(info['kept'])))
    return lines
