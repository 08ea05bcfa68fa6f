# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""KAI's word as a check's proof: seen live in the cluster, or kept by an
earlier grade in the grader's record (grade_record) once the live one is
gone (events past their TTL, conditions KAI v0.17+ clears, the gang's
PodGroup deleted with its Job).

The record stands in for KAI's word only: a check still reads the learner's
files and the objects that exist now, and compares them with the proof.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gsb.kai_lab.plugins.module_utils.record import proofs as grade_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import provenance
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import fill, printable
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    FAILED, PASSED, UNVERIFIED, Result, bilingual, passed)

# Evidence key of a passed check listing Events it did not take as proof (a learner's forgeries).
NOT_PROOF_KEY = 'not_proof'
MAX_NAMED = 5

WORDS = {
    'forged': {'en': 'Event {event} ({reason} on {object}) is not KAI\'s word about your pods: this Event is not about '
                     'any PodGroup of your pods ({why})',
               'ko': '{object} 의 {reason} 이벤트 {event:은} 여러분 파드에 대한 KAI의 말이 아닙니다: 이 이벤트는 '
                     '여러분 파드의 어떤 PodGroup 에 대한 것도 아닙니다 ({why_ko})'},
    'forged_hint': {'en': 'Only KAI\'s own Events about the lab\'s pods count. Do the step as the lab text says '
                          '(KAI writes its Events itself) and delete Events you created.',
                    'ko': '실습 파드에 대한 KAI 자신의 이벤트만 인정됩니다. 실습 설명대로 단계를 수행하고 (KAI가 이벤트를 '
                          '직접 씁니다) 직접 만든 이벤트는 지우세요.'},
    'not_scheduler': {'en': 'its reporter is not KAI\'s scheduler', 'ko': '보고자가 KAI 스케줄러가 아닙니다'},
    'no_uid': {'en': 'it names no object uid', 'ko': '객체 uid 가 없습니다'},
    'unknown': {'en': '{object} is no object of this step that exists or existed',
                'ko': '{object:은} 지금 있거나 있었던 이 단계의 객체가 아닙니다'},
    'other_uid': {'en': '{object} is uid {uid}, the Event names uid {claimed}',
                  'ko': '{object} 의 uid 는 {uid} 인데 이벤트는 uid {claimed:을} 가리킵니다'},
    'too_late': {'en': 'it was stored at {stored}, after the lab moved on to step {step} ({before}), yet names {object}, '
                       'which is gone',
                 'ko': '{object:은} 이미 없는데, 실습이 {step}단계로 넘어간 뒤({before})인 {stored} 에 저장되었습니다'},
    'too_early': {'en': 'it was stored at {stored}, before {object} was created at {created}',
                  'ko': '{object:이} {created} 에 만들어지기 전인 {stored} 에 저장되었습니다'},
    'own_too_early': {'en': 'its {field} {time} is before {object} was created at {created}',
                      'ko': '{object:은} {created} 에 만들어졌는데 이벤트의 {field:은} 그 전인 {time} 입니다'},
    'as_verified': {'en': 'OK, equal to the cluster as verified at {at}, before step {step} changed it: {values}',
                    'ko': '{at} 에 확인한 클러스터와 같음 ({step}단계가 바꾸기 전): {values}'},
    'after_placed': {'en': 'it was stored at {stored}, after {pod} was placed at {placed}: KAI reports a pod as '
                           'unschedulable only while it waits',
                     'ko': '{pod:이} {placed} 에 배치된 뒤인 {stored} 에 저장되었습니다: KAI는 파드가 기다리는 동안에만 '
                           '배치할 수 없다고 알립니다'},
}


def _say(key, lang, **values):
    template = WORDS[key][lang]
    return fill(template, **values)


def _both(key, **values):
    return bilingual(_say(key, 'en', **values), _say(key, 'ko', **values))


class Known(object):
    """The objects of this lab a step's proof may be about: (kind, name) -> uid and creation time.

    Filled by the step: first the objects that exist now (their uid and
    creationTimestamp), then, for one that is gone, the uid the grader's
    record saw, else the one uid the lab's events give it
    (kai_events.uid_from_events) -- but only from events the API server stored
    before `before`, a time the learner cannot move later: when the lab
    reached step `step` (began, moved_on: the pods a later step declares it
    began by). The Events of step 3's nl-1 or step 5's gang once deleted were
    stored before step 6 began, while an Event a learner creates now is
    stored now (metadata.creationTimestamp is set by the API server, not by
    the Event's creator).

    An Event is KAI's word about one of these objects when its reporter is
    KAI's scheduler, its involvedObject has that kind, name and uid, it was
    stored and its own times (firstTimestamp, lastTimestamp, eventTime:
    all that are set) are no earlier than the object was created, (for one
    known from events only) it was stored no later than `before`, and (an
    Unschedulable Event about a pod KAI has placed, or about its PodGroup)
    it was stored no later than KAI placed that pod.
    """

    def __init__(self, snapshot, before=None, step=None):
        self.snapshot = snapshot
        self.before = before
        self.step = step
        self.objects = {}
        # What the grader's record saw: (kind, name) -> uid.
        self.seen = recorded_objects(getattr(snapshot, 'record', None))

    def add(self, kind, name, uid, created='', before='', placed=None):
        """placed: (pod name, when KAI placed it) for a pod KAI placed, or for the PodGroup of one."""
        if name and uid and (kind, name) not in self.objects:
            self.objects[(kind, name)] = {'uid': uid, 'created': created or '', 'before': before or '',
                                          'placed': placed}
        return self.uid(kind, name)

    def add_live(self, kind, obj, placed=None):
        """An object that exists now; returns its uid. A pod's placed is when KAI's binder bound it."""
        if kind == 'Pod' and placed is None and provenance.bound_at(obj):
            placed = (kai.name_of(obj), provenance.bound_at(obj))
        return self.add(kind, kai.name_of(obj), kai.meta(obj).get('uid'), kai.meta(obj).get('creationTimestamp'),
                        placed=placed)

    def placed(self, kind, name):
        """(pod name, when KAI placed it) of a known object, or None."""
        return (self.objects.get((kind, name)) or {}).get('placed')

    def add_gone(self, kind, name):
        """An object that does not exist now: its uid from the record, else from the lab's events; returns it."""
        if (kind, name) in self.seen:
            return self.add(kind, name, self.seen[(kind, name)])
        if self.before:
            return self.add(kind, name, self.from_events(kind, name), before=self.before)
        return None

    def from_events(self, kind, name):
        """The uid the events stored before `before` give an object (None without `before`)."""
        if not self.before:
            return None
        return kai_events.uid_from_events(self.snapshot.events, kind, name, stored_before=self.before)

    def recorded_owner_uid(self, owner):
        """The uid in the name of a PodGroup pg-<owner>-<uid> the record saw (pod-grouper names it after
        its pod or Job), or None."""
        for kind, name in sorted(self.seen):
            if kind == 'PodGroup' and kai.owner_uid_in_podgroup_name(name, owner):
                return kai.owner_uid_in_podgroup_name(name, owner)
        return None

    def pods(self, names):
        """The known pods of these names, as the record's subjects take them (name and uid)."""
        return [{'metadata': {'name': name, 'uid': self.uid('Pod', name)}} for name in names if self.uid('Pod', name)]

    def uid(self, kind, name):
        return (self.objects.get((kind, name)) or {}).get('uid')

    def why_not(self, event, reporter=True):
        """None when event is KAI's word about one of these objects, else why not (en, ko)."""
        obj = kai_events.involved(event)
        kind, name, claimed = obj.get('kind'), obj.get('name'), obj.get('uid')
        what = '%s/%s' % (printable(kind, 40), printable(name, 120))
        if reporter and not kai_events.reported_by_scheduler(event):
            return _both('not_scheduler')
        known = self.objects.get((kind, name))
        if known is None:
            return _both('unknown', object=what)
        if not claimed:
            return _both('no_uid')
        if claimed != known['uid']:
            return _both('other_uid', object=what, uid=known['uid'], claimed=printable(claimed, 64))
        stored = printable(kai_events.event_stored(event), 40)
        if not kai_events.event_is_about(event, kind, name, known['uid'], known['created']):
            return _both('too_early', object=what, stored=stored, created=known['created'])
        for field, value in provenance.own_times_before(event, known['created'])[:1]:
            return _both('own_too_early', object=what, field=field, time=printable(value, 40), created=known['created'])
        if event.get('reason') == 'Unschedulable' and known['placed'] \
                and not kai_events.not_before(known['placed'][1], kai_events.event_stored(event)):
            return _both('after_placed', stored=stored, pod=printable(known['placed'][0], 120), placed=known['placed'][1])
        if known['before'] and not kai_events.not_before(known['before'], kai_events.event_stored(event)):
            return _both('too_late', object=what, stored=stored, before=known['before'],
                         step=self.step)
        return None

    def gone_word(self, event):
        """Whether event looks like KAI's word about another object that is gone (not one of the step's):
        KAI's reporter, the uid its other events give, stored before `before`."""
        obj = kai_events.involved(event)
        return kai_events.reported_by_scheduler(event) and bool(obj.get('uid')) and bool(self.before) \
            and obj.get('uid') == self.from_events(obj.get('kind'), obj.get('name'))


def began(snapshot, pods):
    """When the lab reached the step that creates pods, by times the learner cannot move later: the earliest
    of the creation of each of them that exists now and the time the API server stored each Event about a
    Pod of that name or a PodGroup pg-<name>-<uid>, whatever its uid (a pod deleted and created again
    leaves the Events of the first one); None when there is neither. A gone object's Events are from
    before it."""
    times = [kai.meta(snapshot.pod(name)).get('creationTimestamp') for name in pods if snapshot.pod(name) is not None]
    groups = tuple(kai.workload_podgroup_name(name, '') for name in pods)
    times.extend(kai_events.event_stored(e) for e in snapshot.events
                 if (kai_events.involved(e).get('kind') == 'Pod' and kai_events.involved(e).get('name') in pods)
                 or (kai_events.involved(e).get('kind') == 'PodGroup'
                     and (kai_events.involved(e).get('name') or '').startswith(groups)))
    times = [t for t in times if isinstance(t, str) and t]
    return min(times, key=lambda t: t[:19]) if times else None


def moved_on(snapshot, step_id):
    """(time, number): when the lab moved on from step_id, the earliest time a later step began
    (began, of the pods it declares it began by; steps/base.py's Step.began_by) and that step's number,
    or (None, None) when no later step shows it began."""
    # The step list holds this module's steps; read when called (steps/registry.py imports them).
    from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry
    later = registry.STEPS[registry.STEP_IDS.index(step_id) + 1:]
    seen = [(began(snapshot, step.began_by), step.number) for step in later if step.began_by]
    seen = [(time, number) for time, number in seen if time]
    return min(seen, key=lambda pair: pair[0][:19]) if seen else (None, None)


def recorded_objects(record):
    """(kind, name) -> uid of the objects the grader's record saw: the pods its proofs were about and the
    objects of its proofs (each kept only after passing the test of Known)."""
    seen = {}
    for entry in ((record or {}).get('checks') or {}).values():
        for name, uid in sorted((entry.get('subjects') or {}).items()):
            if uid:
                seen.setdefault(('Pod', name), uid)
        for proof in entry.get('proofs') or []:
            kind, name = grade_record.proof_object(proof)
            if kind and name and proof.get('object_uid'):
                seen.setdefault((kind, name), proof['object_uid'])
    return seen


def as_event(proof):
    """A recorded proof as the Event it was kept from, to be tested again like a live one."""
    kind, name = grade_record.proof_object(proof)
    return {'reason': proof.get('reason'), 'message': proof.get('message') or '',
            'source': {'component': proof.get('source')},
            'involvedObject': {'kind': kind, 'name': name, 'uid': proof.get('object_uid')},
            'lastTimestamp': proof.get('time'), 'metadata': {'uid': proof.get('uid')}}


def forged_line(event, why, lang):
    """One line naming an Event that is no proof and why."""
    obj = kai_events.involved(event)
    return _say('forged', lang, event=printable(kai.name_of(event) or '?', 120), reason=printable(event.get('reason'), 40),
                object='%s/%s' % (printable(obj.get('kind'), 40), printable(obj.get('name'), 120)),
                why=why['en'], why_ko=why['ko'])


def forged(rejected, evidence=None):
    """Failed: the only Events offered as KAI's word are not about the lab's objects; names the first."""
    event, why = rejected[0]
    evidence = dict(evidence or {})
    evidence[NOT_PROOF_KEY] = not_proof(rejected)
    return Result(FAILED, bilingual(forged_line(event, why, 'en'), forged_line(event, why, 'ko')), evidence,
                  hint=bilingual(WORDS['forged_hint']['en'], WORDS['forged_hint']['ko']))


def not_proof(rejected):
    """The Events a check refused, for its evidence: 'Event <name> (...): why' in English."""
    return [forged_line(event, why, 'en') for event, why in rejected[:MAX_NAMED]]


def live(proofs, subject_pods, rejected=None, **evidence):
    """A passed Result on KAI's proof seen now; the record keeps proofs and subjects.

    rejected: (event, why) of Events the check did not take as proof, named in the evidence.
    """
    evidence[grade_record.PROOF_KEY] = sorted(proofs, key=lambda p: p['kind'] != 'event')
    evidence[grade_record.SUBJECTS_KEY] = grade_record.subjects_of(subject_pods)
    if rejected:
        evidence[NOT_PROOF_KEY] = not_proof(rejected)
    return passed(evidence)


def recalled(snapshot, check_id, known=None):
    """(entry, stale): the recorded proof of check_id about the pods and PodGroups that exist now
    (see grade_record.recall); with known (a Known), only the proofs about its objects are kept."""
    entry, stale = grade_record.recall(getattr(snapshot, 'record', None), check_id, snapshot.pods,
                                       getattr(snapshot, 'podgroups', None))
    if entry is None or known is None:
        return entry, stale
    proofs = [p for p in entry['proofs']
              if known.why_not(as_event(p), reporter=p.get('kind') == 'event') is None]
    if not proofs:
        return None, None
    return dict(entry, proofs=proofs), None


def verified_before_moving_on(snapshot, step_id, check_id, key, value):
    """A passed Result when the lab moved on from step_id (a later step began: moved_on) and an earlier
    grade verified check_id on a cluster whose value (its evidence under key) equals value; else None.

    What a step compared with the cluster then stands, whatever a later step made of the cluster since
    (step 8's report and a step that moves GPUs); the learner's file is still read now.
    """
    when, number = moved_on(snapshot, step_id)
    entry = ((getattr(snapshot, 'record', None) or {}).get('checks') or {}).get(check_id)
    kept = (entry or {}).get('evidence')
    if when is None or not isinstance(kept, dict) or kept.get(grade_record.RECORDED_KEY) or kept.get(key) != value:
        return None
    at = entry['verified_at'][:16].replace('T', ' ') + ' UTC'
    shown = printable(json.dumps(value, sort_keys=True), 300)
    words = dict((lang, _say('as_verified', lang, at=at, step=number, values=shown)) for lang in ('en', 'ko'))
    return Result(PASSED, evidence={key: value, grade_record.RECORDED_KEY: dict(words, verified_at=entry['verified_at'])},
                  message=bilingual(words['en'], words['ko']))


def from_record(entry, **evidence):
    """A passed Result on a recorded proof, saying when it was verified and from what."""
    recorded = grade_record.recorded_evidence(entry)
    evidence.update(recorded)
    words = recorded[grade_record.RECORDED_KEY]
    return Result(PASSED, evidence=evidence, message=bilingual('OK, %s' % words['en'], 'OK, %s' % words['ko']))


def gone(step_id, why, stale, evidence=None):
    """Unverified: KAI's live proof is gone and no earlier grade kept one (or kept one about another pod).

    The hint tells the learner that checking each step as it is done keeps its proof.
    """
    if stale:
        why = bilingual('%s; %s' % (why['en'], stale['en']), '%s; %s' % (why['ko'], stale['ko']))
    return Result(UNVERIFIED, why, evidence, hint=bilingual(grade_record.keep_proof_hint(step_id, 'en'),
                                                            grade_record.keep_proof_hint(step_id, 'ko')))
