# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""KAI's evictions in the lab: one record that every step reads.

A step whose work makes KAI evict declares it (Step.evicts, an Evicts: the
action, preempt or reclaim, the pod whose PodGroup KAI makes room for, the
pods it may evict); a step whose own pods KAI may evict later says so
(Step.evictable). KAI's Evict events are tested against the objects of each
declaration as steps/evidence.py tests KAI's word (reporter, the victim's
PodGroup by name and uid, stored after the evicting pod was created and
before KAI placed it), so the record says, for each eviction: which pod, by
which action, for whom, and which step declared it. A step asks it about its
pods (expected: evicted by a declared eviction of a later step, which is no
mistake) or about its own eviction (found), and no step reads another
step's internals for it.

KAI's message (pkg/scheduler/api/unschedule_info.go, v0.12.0 to v0.18):
preempt 'Pod ns/victim was preempted by higher priority workload ns/pg',
reclaim 'Pod ns/victim was preempted by workload ns/pg.' followed by the
queues' shares; the Event's annotation evictor-action-type says the same.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.record import proofs as grade_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import fill
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import evidence
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import PASSED, Result, Stop, bilingual

PREEMPT, RECLAIM = kai_events.PREEMPT, kai_events.RECLAIM

WORDS = {
    'not_victims_podgroup': {'en': '{object} is not the PodGroup of {victim} ({podgroup})',
                             'ko': '{object:은} {victim} 의 PodGroup({podgroup})이 아닙니다'},
    'unknown_victim': {'en': 'no pod {victim} of this lab is known (not now, not in the record, not in its own events '
                             'before {by} came)',
                       'ko': '이 실습의 {victim} 파드를 알 수 없습니다 (지금도, 기록에도, {by} 이전의 자기 이벤트에도 없음)'},
    'not_for_build': {'en': 'its preemptor is {preemptor}, not {by}\'s PodGroup {podgroup}',
                      'ko': '선점한 쪽이 {by} 의 PodGroup {podgroup:이} 아니라 {preemptor} 입니다'},
    'after_build': {'en': 'it was stored at {stored}, after {by} was scheduled at {scheduled}',
                    'ko': '{by:이} {scheduled} 에 배치된 뒤인 {stored} 에 저장되었습니다'},
    'before_build': {'en': 'it was stored at {stored}, before {by} was created at {created}',
                     'ko': '{by:이} {created} 에 만들어지기 전인 {stored} 에 저장되었습니다'},
    'other_action': {'en': 'KAI\'s action is {action}, not {declared}', 'ko': 'KAI의 동작이 {declared:이} 아니라 {action} 입니다'},
    'stands': {'en': 'OK, as verified at {at}, before KAI evicted {pods} in step {step} ({action} for {by})',
               'ko': '{at} 에 확인됨, {step}단계에서 KAI가 {pods:을} 밀어내기 전 ({by:을} 위한 {action})'},
}


class Evicts(object):
    """An eviction a step's work makes KAI do: action (PREEMPT or RECLAIM), for the PodGroup of pod `by`,
    of one or more of `victims` (pod names)."""

    def __init__(self, action, by, victims):
        self.action = action
        self.by = by
        self.victims = tuple(victims)


class Eviction(object):
    """One of KAI's evictions found in the lab: the victim, the action, the pod it was made for, the step
    that declared it (id, number), KAI's event and its summary."""

    def __init__(self, victim, declared, step, event):
        self.victim = victim
        self.action = declared.action
        self.by = declared.by
        self.step_id = step.id
        self.step = step.number
        self.event = event
        self.summary = kai_events.event_summary(event)
        self.summary['victim'] = victim
        # The PodGroup KAI evicted: the victim's, by the name and uid KAI's event gives.
        self.podgroup = kai_events.involved(event).get('name')


def _why(key, **values):
    return bilingual(WORDS[key]['en'].format(**values), fill(WORDS[key]['ko'], **values))


def declared():
    """[(step, Evicts)] of every step, in the step list's order."""
    # The step list holds the steps that import this module; read when called.
    from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry
    return [(step, evicts) for step in registry.STEPS for evicts in step.evicts]


def evictable():
    """{pod name: the step that says KAI may evict it later}."""
    from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry
    return dict((name, step) for step in registry.STEPS for name in step.evictable)


def objects(snapshot, events, evicts, step):
    """(known, PodGroup names): the evicting pod and each candidate victim (evidence.Known), with their
    PodGroups' names.

    The evicting pod: the one that exists now, else the one the record saw.
    A victim: live, else the one the record saw (also as the uid in its
    recorded PodGroup's name), else the one its own events stored before the
    evicting pod was created name. A victim's PodGroup is gone with it; its
    name (pg-<victim>-<victim's uid>) ties it to that pod, and its uid is the
    one KAI's events about it give.
    """
    known = evidence.Known(snapshot, evidence.began(snapshot, (evicts.by,)), step.number)
    groups = {}
    for name in (evicts.by,) + evicts.victims:
        pod = snapshot.pod(name)
        uid = known.add_live('Pod', pod) if pod is not None else (
            known.add_gone('Pod', name) or known.add('Pod', name, known.recorded_owner_uid(name)))
        if not uid:
            continue
        groups[name] = (kai.podgroup_name_of_pod(pod) if pod is not None else None) or kai.workload_podgroup_name(name, uid)
        podgroup = snapshot.podgroup(groups[name])
        if podgroup is not None:
            known.add_live('PodGroup', podgroup)
        else:
            known.add('PodGroup', groups[name], known.seen.get(('PodGroup', groups[name]))
                      or kai_events.uid_from_events(events, 'PodGroup', groups[name]))
    return known, groups


def scan(snapshot, events, evicts, step):
    """(found, rejected, known): KAI's Evict events of one of evicts' victims made for evicts.by by its
    action [(summary, event)], oldest first; the Evict events naming a victim that are not KAI's word
    about these pods [(event, why)]; and the objects they were tested against."""
    known, groups = objects(snapshot, events, evicts, step)
    by = known.objects.get(('Pod', evicts.by)) or {}
    scheduled = kai.scheduled_at(snapshot.pod(evicts.by))
    found, rejected = [], []
    for event in sorted(events, key=kai_events.event_time):
        if event.get('reason') != 'Evict':
            continue
        message = event.get('message') or ''
        victim = kai_events.victim_of(message)
        if victim not in evicts.victims:
            continue
        why = known.why_not(event)
        obj = '%s/%s' % (kai_events.involved(event).get('kind'), kai_events.involved(event).get('name'))
        preemptor = kai_events.preemptor(message)
        if why is None and victim not in groups:
            why = _why('unknown_victim', victim=victim, by=evicts.by)
        elif why is None and kai_events.involved(event).get('name') != groups[victim]:
            why = _why('not_victims_podgroup', object=obj, victim=victim, podgroup=groups[victim])
        elif why is None and (evicts.by not in groups or preemptor != groups[evicts.by]):
            why = _why('not_for_build', preemptor=preemptor, by=evicts.by,
                       podgroup=groups.get(evicts.by, kai.workload_podgroup_name(evicts.by, '<uid>')))
        elif why is None and kai_events.eviction_action(message) != evicts.action:
            why = _why('other_action', action=kai_events.eviction_action(message), declared=evicts.action)
        elif why is None and not kai_events.not_before(kai_events.event_stored(event), by.get('created')):
            why = _why('before_build', stored=kai_events.event_stored(event), created=by.get('created'), by=evicts.by)
        elif why is None and scheduled and kai.meta(event).get('creationTimestamp') \
                and not kai_events.not_before(scheduled, kai_events.event_stored(event)):
            # KAI evicts first and places the evicting pod after: an Evict stored later is not how it got its GPU.
            # (A recorded proof keeps the event's last time only, which a repeated Evict moves on.)
            why = _why('after_build', stored=kai_events.event_stored(event), scheduled=scheduled, by=evicts.by)
        if why is None:
            summary = kai_events.event_summary(event)
            summary['victim'] = victim
            found.append((summary, event))
        else:
            rejected.append((event, why))
    return found, rejected, known


def record(snapshot):
    """Every eviction of KAI in the lab that a step declared, oldest first ([Eviction]); read once per snapshot."""
    cached = getattr(snapshot, '_kai_lab_evictions', None)
    if cached is not None:
        return cached
    seen = []
    for step, evicts in declared():
        seen.extend(Eviction(summary['victim'], evicts, step, event)
                    for summary, event in scan(snapshot, snapshot.events, evicts, step)[0])
    seen.sort(key=lambda e: kai_events.event_time(e.event))
    try:
        snapshot._kai_lab_evictions = seen
    except AttributeError:
        pass
    return seen


def expected(snapshot, victim):
    """The evictions of pod victim that are no mistake: KAI's, by a step's declared eviction, of a pod its
    own step says KAI may evict later ([Eviction], oldest first)."""
    owner = evictable().get(victim)
    if owner is None:
        return []
    return [e for e in record(snapshot) if e.victim == victim and e.step > owner.number]


def evictors(victim):
    """The steps (in order) whose declared evictions may take pod victim, with the pod each evicts for:
    [(step, by)]."""
    owner = evictable().get(victim)
    return [(step, evicts.by) for step, evicts in declared()
            if victim in evicts.victims and (owner is None or step.number > owner.number)]


def others(snapshot, rejected, step_id):
    """rejected [(event, why)] without the events another step's declared eviction found: KAI's word about
    that step's eviction, not a forgery offered for this one."""
    if not rejected:
        return rejected
    theirs = set(id(e.event) for e in record(snapshot) if e.step_id != step_id)
    return [(event, why) for event, why in rejected if id(event) not in theirs]


def evicted_in_view(events, victim):
    """The solver's view: KAI's Evict events of pod victim by a declared eviction (its action, for the
    PodGroup of its evicting pod) in the events of a cluster the solver drives ([summary])."""
    found = []
    for step, evicts in declared():
        if victim not in evicts.victims:
            continue
        group = kai.workload_podgroup_name(evicts.by, '')
        for summary in kai_events.eviction_events(events):
            if summary['victim'] == victim and kai_events.eviction_action(summary['message']) == evicts.action \
                    and (kai_events.preemptor(summary['message']) or '').startswith(group):
                found.append(dict(summary, step=step.number, by=evicts.by))
    return found


def verified_before_eviction(snapshot, check, step):
    """A passed Result for a check of step that does not pass now because KAI evicted the step's pods in a
    later step that declares it (expected: Step.evictable, Evicts), from the grader's record of the check
    passing on live evidence before that eviction; else None. What a later step's declared eviction takes
    away is no mistake of the earlier step."""
    gone = sorted((e for name in step.evictable for e in expected(snapshot, name)),
                  key=lambda e: kai_events.event_stored(e.event))
    entry = ((getattr(snapshot, 'record', None) or {}).get('checks') or {}).get(check.id)
    kept = (entry or {}).get('evidence')
    if not gone or not isinstance(kept, dict) or kept.get(grade_record.RECORDED_KEY) \
            or not kai_events.not_before(kai_events.event_stored(gone[0].event), entry['verified_at']):
        return None
    first = gone[0]
    at = entry['verified_at'][:16].replace('T', ' ') + ' UTC'
    values = dict(at=at, pods=', '.join(sorted(set(e.victim for e in gone))), step=first.step, action=first.action,
                  by=first.by)
    words = dict((lang, fill(WORDS['stands'][lang], **values)) for lang in ('en', 'ko'))
    return Result(PASSED, evidence={'evicted': [e.summary['message'] for e in gone],
                                    grade_record.RECORDED_KEY: dict(words, verified_at=entry['verified_at'])},
                  message=bilingual(words['en'], words['ko']))


def stands(snapshot, check, step, result):
    """result, or the passed Result of verified_before_eviction for a check of a step with evictable pods (the
    grader asks it of each check that did not pass). When the lab's objects cannot be read (a flood: Stop),
    the check's own result says so."""
    if not step.evictable:
        return result
    try:
        return verified_before_eviction(snapshot, check, step) or result
    except Stop:
        return result
