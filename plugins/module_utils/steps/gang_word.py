# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 5: which of KAI's gang words are about the learner's gang.

The gang's PodGroup is the one its pods name: in the Job form (KAI >=
v0.14.7) pg-gang-<job uid> of Job gang's pods, in the PodGroup form a
PodGroup of minMember 3 that live pods name in their pod-group-name
annotation. Any other PodGroup of the namespace (p1's, a PodGroup made by
hand whose status was patched) is not the gang's, and KAI's word on it,
live or copied, proves nothing about the gang.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.record import proofs as grade_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import printable
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import evidence
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import say_both

GANG = 'gang'
GANG_SIZE = 3
# The pods of the PodGroup form, as the solver and the hint name them.
GANG_POD_NAMES = ['%s-%d' % (GANG, i) for i in range(GANG_SIZE)]

WORDS = {
    'not_gangs': {'en': 'PodGroup {podgroup} is not the gang\'s PodGroup: {why_en}',
                  'ko': 'PodGroup {podgroup:은} 갱의 PodGroup 이 아닙니다: {why_ko}'},
    'unnamed': {'en': 'no pod names it in its {annotation} annotation',
                'ko': '어떤 파드도 {annotation} 어노테이션으로 이를 가리키지 않습니다'},
    'not_a_gang': {'en': 'its minMember is {min_member}, not {size}',
                   'ko': 'minMember 가 {size:이} 아니라 {min_member} 입니다'},
    'pod_without_podgroup': {'en': 'pod {pod} names no PodGroup that exists', 'ko': '{pod} 파드가 가리키는 PodGroup 이 없습니다'},
    'status_not_gangs': {'en': 'the gang reason is in a PodGroup\'s status, which is KAI\'s word about your gang only '
                               'on the gang\'s PodGroup: {why_en}',
                         'ko': '갱 이유가 PodGroup 의 status 에 있지만, 그것은 갱의 PodGroup 일 때만 여러분 갱에 대한 '
                               'KAI의 말입니다: {why_ko}'},
}


def gang_evidence(snapshot):
    """KAI's gang messages still in the cluster: [(kind, object name, message, proof for the record, event)];
    event is None for a live PodGroup's condition."""
    seen = [(kai_events.involved(e).get('kind'), kai_events.involved(e).get('name'), e.get('message') or '',
             grade_record.proof_from_event(e), e)
            for e in sorted(snapshot.events, key=kai_events.event_time)
            if e.get('reason') == 'Unschedulable' and kai.GANG_MESSAGE_MARK in (e.get('message') or '')]
    seen += [('PodGroup', kai.name_of(pg), r['message'], grade_record.proof_from_condition(pg, r), None)
             for pg in snapshot.podgroups for r in kai.scheduling_reasons(pg) if kai.GANG_MESSAGE_MARK in r['message']]
    return seen


def gang_objects(snapshot, supported, step_id):
    """The gang's objects KAI's word may be about (evidence.Known).

    Job form (KAI >= v0.14.7): Job gang's pods and its PodGroup
    pg-gang-<job uid>, live, or once gone (step 6 deletes the Job) the ones
    the record saw or the Job's own events name ('Created pod: <name>').
    PodGroup form: the gang's PodGroup is the one its pods name
    (gang_podgroups: a PodGroup of minMember 3 that live pods name in their
    pod-group-name annotation) with those pods; once gone, PodGroup gang and
    pods gang-0..2. No other PodGroup of the namespace is the gang's.
    """
    known = evidence.Known(snapshot, *evidence.moved_on(snapshot, step_id))
    if not supported:
        for name, pods in sorted(gang_podgroups(snapshot).items()):
            known.add_live('PodGroup', snapshot.podgroup(name))
            for pod in pods:
                known.add_live('Pod', pod)
        if snapshot.podgroup(GANG) is None:
            known.add_gone('PodGroup', GANG)
        for name in GANG_POD_NAMES:
            if snapshot.pod(name) is None:
                known.add_gone('Pod', name)
        return known
    job_uid = None
    for pod in snapshot.pods:
        if kai.owner_uid(pod, 'Job', GANG):
            job_uid = job_uid or kai.owner_uid(pod, 'Job', GANG)
            known.add_live('Pod', pod)
    job_uid = job_uid or known.from_events('Job', GANG) or known.recorded_owner_uid(GANG)
    if not job_uid:
        return known
    name = kai.workload_podgroup_name(GANG, job_uid)
    podgroup = snapshot.podgroup(name)
    if podgroup is not None:
        known.add_live('PodGroup', podgroup)
    else:
        known.add_gone('PodGroup', name)
    for event in kai_events.events_for(snapshot.events, 'Job', GANG):
        if kai_events.involved(event).get('uid') == job_uid and (event.get('message') or '').startswith('Created pod: '):
            known.add_gone('Pod', event['message'][len('Created pod: '):])
    for pod_name in recorded_pods(known):
        known.add_gone('Pod', pod_name)
    return known


def named_podgroups(snapshot):
    """{PodGroup name: [the live pods that name it in their pod-group-name annotation]}."""
    named = {}
    for pod in snapshot.pods:
        if kai.podgroup_name_of_pod(pod):
            named.setdefault(kai.podgroup_name_of_pod(pod), []).append(pod)
    return named


def gang_podgroups(snapshot):
    """{name: pods} of the live PodGroups that are a gang of the lab's size: minMember 3 and named by live
    pods. A PodGroup's status is KAI's word only about the pods that name it."""
    return dict((name, pods) for name, pods in named_podgroups(snapshot).items()
                if snapshot.podgroup(name) is not None
                and kai.whole_number(kai.podgroup_summary(snapshot.podgroup(name))['min_member']) == GANG_SIZE)


def not_the_gangs(snapshot, kind, name):
    """Why a live Pod's or PodGroup's gang word is not about the gang (en, ko): its PodGroup has no pods or
    another minMember."""
    group = name if kind == 'PodGroup' else kai.podgroup_name_of_pod(snapshot.pod(name))
    podgroup = snapshot.podgroup(group) if group else None
    if podgroup is None:
        return say_both(WORDS['pod_without_podgroup'], pod=printable(name, 120))
    if group not in named_podgroups(snapshot):
        why = say_both(WORDS['unnamed'], annotation=kai.PODGROUP_ANNOTATION)
    else:
        why = say_both(WORDS['not_a_gang'], size=GANG_SIZE, min_member=printable(
            str(kai.podgroup_summary(podgroup)['min_member']), 20))
    return say_both(WORDS['not_gangs'], podgroup=printable(group, 120), why_en=why['en'], why_ko=why['ko'])


def recorded_pods(known):
    """The gang's pods the grader's record saw (Job gang's pods are named gang-<suffix>)."""
    return sorted(name for kind, name in known.seen if kind == 'Pod' and name.startswith(GANG + '-'))


def live_object(snapshot, kind, name, uid):
    """Whether a Pod or PodGroup of this name exists now with this uid."""
    obj = snapshot.pod(name) if kind == 'Pod' else snapshot.podgroup(name) if kind == 'PodGroup' else None
    return obj is not None and bool(uid) and kai.meta(obj).get('uid') == uid


def sort_words(snapshot, supported, step_id):
    """(bound, rejected, others, not_gang, known) of KAI's gang words in the cluster (gang_evidence items):
    about the gang's objects; Events that are not KAI's word about them [(event, why)]; KAI's word about a
    gang of the learner's that is not the form this KAI asks for (another live gang PodGroup, or a gone
    object KAI's own events name); PodGroup conditions about no gang [(item, why)]; and the gang's objects
    (evidence.Known) they were tested against. supported: this KAI groups the lab's Job (Job form); step_id: the
    gang's step, whose objects are known from events stored before the lab moved on from it."""
    known = gang_objects(snapshot, supported, step_id)
    gangs = gang_podgroups(snapshot)
    bound, rejected, others, not_gang = [], [], [], []
    for item in gang_evidence(snapshot):
        kind, name, _message, _proof, event = item
        why = known.why_not(event) if event is not None else (
            None if (kind, name) in known.objects else {'en': 'not the gang', 'ko': '갱이 아닙니다'})
        if why is None:
            bound.append(item)
        elif event is not None and not live_object(snapshot, kind, name, kai_events.involved(event).get('uid')):
            if known.gone_word(event):
                others.append(item)  # KAI's word about another object of the learner's, gone
            else:
                rejected.append((event, why))
        elif (name if kind == 'PodGroup' else kai.podgroup_name_of_pod(snapshot.pod(name))) in gangs:
            others.append(item)  # a gang of the learner's own, not the form this KAI asks for
        elif event is not None:
            rejected.append((event, not_the_gangs(snapshot, kind, name)))
        else:
            why = not_the_gangs(snapshot, kind, name)
            not_gang.append((item, say_both(WORDS['status_not_gangs'], why_en=why['en'], why_ko=why['ko'])))
    return bound, rejected, others, not_gang, known
