# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 6, build evicts train: with tr-1 and tr-2 (priority train) holding the
GPUs, bd-1 (priority build) runs because KAI evicts one preemptible pod.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.record import proofs as grade_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import fill, with_particle
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import evictions
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import evidence
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import learner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    BUILD_CLASS, BUILD_POD, P1, RESEARCH, TRAIN_CLASS, TRAIN_PODS, Check, Step, bilingual, failed, gpu_pod, passed)


def train_pods(namespace):
    return [gpu_pod(name, namespace, RESEARCH, priority_class=TRAIN_CLASS) for name in TRAIN_PODS]


def build_pod(namespace):
    return gpu_pod(BUILD_POD, namespace, RESEARCH, priority_class=BUILD_CLASS)


# ---------------------------------------------------------------- solving

def evicted_pods(view):
    return [e['victim'] for e in kai_events.eviction_events(view.events()) if e['victim']]


def research_pods(view):
    return set(kai.name_of(p) for p in view.pods(view.namespace) if kai.pod_queue(p) == RESEARCH)


def solve(runner):
    view = runner.view
    build = view.pod(BUILD_POD)
    if build is not None and kai.pod_phase(build) == 'Running':
        return {'pod': view.pod_state(BUILD_POD), 'evicted': evicted_pods(view)}
    # Remove the gang (the steps this one clears) so its PodGroup no longer holds the queue.
    runner.clear()
    for pod in train_pods(runner.namespace):
        if view.pod(kai.name_of(pod)) is None:
            runner.apply(pod)
    runner.wait_pods(list(TRAIN_PODS), 'Running', '%s to fill the GPUs' % ' and '.join(TRAIN_PODS))
    before = research_pods(view)
    if build is None:
        runner.apply(build_pod(runner.namespace))
    runner.wait_pods([BUILD_POD], 'Running', '%s to run by preempting a %s pod' % (BUILD_POD, TRAIN_CLASS))
    gone = sorted(before - research_pods(view))
    evicted = evicted_pods(view)
    if len(gone) != 1 or gone[0] not in evicted:
        runner.not_as_expected('exactly one %s pod of queue %s evicted by KAI' % (TRAIN_CLASS, RESEARCH),
                               {'gone': gone, 'evict_events_for': evicted},
                               'KAI preempted differently than the lab expects (check priority classes %s/%s)'
                               % (TRAIN_CLASS, BUILD_CLASS))
        return {}  # check mode: the build pod was not created, nothing was evicted
    return {'pod': view.pod_state(BUILD_POD), 'evicted': gone[0]}


# ---------------------------------------------------------------- checking

WORDS = {
    'preempt.build_running': {
        'desc': {'en': '{build_pod} (priority {build_class}) runs in queue {build_queue}',
                 'ko': '{build_pod} ({build_class} 우선순위) 이 {build_queue} 큐에서 실행 중'},
        'fail': {'en': '{build_pod}: {problem}', 'ko': '{build_pod}: {problem}'},
        'hint': {'en': 'Pod {build_pod}: priorityClassName {build_class}, {build_gpus} GPU, queue {build_queue}, '
                       'schedulerName {scheduler}.',
                 'ko': '{build_pod} 파드: priorityClassName {build_class}, GPU {build_gpus}개, {build_queue} 큐, '
                       'schedulerName {scheduler}.'},
    },
    'preempt.evicted': {
        'desc': {'en': 'KAI evicted one {train_class} pod of {train_queue} for {build_pod}',
                 'ko': 'KAI가 {build_pod:을} 위해 {train_queue} 의 {train_class} 파드 하나를 밀어냄'},
        'fail': {'en': '{problem}', 'ko': '{problem}'},
        'hint': {'en': '{train_list} (priorityClassName {train_class}) must fill all {gpus} GPUs before {build_pod} is '
                       'created.',
                 'ko': '{build_pod:을} 만들기 전에 {train_list} 파드(priorityClassName {train_class})로 GPU {gpus}개를 모두 '
                       '채워야 합니다.'},
    },
}


def check_build_running(snapshot):
    pod = learner.require_running(snapshot, BUILD_POD)
    problems = []
    priority_class = (pod.get('spec') or {}).get('priorityClassName')
    if priority_class != BUILD_CLASS:
        problems.append(bilingual('priorityClassName is %s, expected %s' % (priority_class, BUILD_CLASS),
                                  'priorityClassName 이 %s 입니다. 필요한 값은 %s 입니다' % (priority_class, BUILD_CLASS)))
    if kai.pod_queue(pod) != RESEARCH:
        problems.append(bilingual('queue is %s, expected %s' % (kai.pod_queue(pod), RESEARCH),
                                  '큐가 %s 입니다. 필요한 값은 %s 입니다' % (kai.pod_queue(pod), RESEARCH)))
    return learner.fail_on(problems) or passed({'phase': kai.pod_phase(pod), 'priorityClassName': BUILD_CLASS})


CANDIDATES = (P1,) + TRAIN_PODS
# KAI preempts one preemptible pod of research for bd-1: p1 (step 2's, which it says may be evicted) or a train pod.
EVICTS = evictions.Evicts(evictions.PREEMPT, BUILD_POD, CANDIDATES)


def evictions_by_build(snapshot, events):
    """(found, rejected, known): KAI's Evict events of a candidate made for bd-1 [(summary, event)], oldest
    first; the Evict events naming a candidate that are not KAI's word about these pods (nor another step's
    declared eviction) [(event, why)]; and the objects they were tested against (evictions.scan)."""
    found, rejected, known = evictions.scan(snapshot, events, EVICTS, STEP)
    return found, evictions.others(snapshot, rejected, STEP.id), known


def recorded_evictions(entry):
    """The Evict events an earlier grade kept (grade_record proofs), as events again."""
    return [evidence.as_event(p) for p in (entry or {}).get('proofs') or [] if p.get('reason') == 'Evict']


def still_there(snapshot, victim):
    """A failed Result when the evicted pod still exists (not being deleted), else None."""
    remaining = snapshot.pod(victim)
    if remaining is not None and not kai.meta(remaining).get('deletionTimestamp'):
        return failed(bilingual('%s was marked for eviction but still exists' % victim,
                                '%s 밀려나야 했지만 아직 있습니다' % with_particle(victim, '이')))
    return None


def check_evicted(snapshot):
    seen = [e for e in kai_events.eviction_events(snapshot.events) if e['victim'] in CANDIDATES]
    by_build, rejected, known = evictions_by_build(snapshot, snapshot.events)
    if by_build:
        summary, event = by_build[-1]
        return still_there(snapshot, summary['victim']) or evidence.live(
            [grade_record.proof_from_event(event)], known.pods([BUILD_POD]), rejected,
            victim=summary['victim'], event=summary['message'])
    trains_gone = [n for n in TRAIN_PODS if snapshot.pod(n) is None]
    step6_events = [e for name in (BUILD_POD,) + TRAIN_PODS for e in learner.pod_events(snapshot, name)]
    if snapshot.pod(BUILD_POD) is not None and trains_gone and not step6_events:
        # bd-1 runs and a train pod is gone, but the events of step 6 have expired: an earlier
        # grade may have kept KAI's Evict event (a proof about this bd-1, by its uid).
        entry, stale = evidence.recalled(snapshot, 'preempt.evicted')
        recorded_events = recorded_evictions(entry)
        back = [still_there(snapshot, kai_events.victim_of(e['message'])) for e in recorded_events
                if kai_events.victim_of(e['message']) in CANDIDATES]
        if any(back):
            return [b for b in back if b][0]
        recorded = evictions_by_build(snapshot, recorded_events)[0]
        if recorded:
            summary = recorded[-1][0]
            return evidence.from_record(entry, victim=summary['victim'], event=summary['message'])
        if not rejected:
            return evidence.gone('preempt', expired_eviction(trains_gone, snapshot.lab['deleted_in']), stale)
    if rejected:
        return evidence.forged(rejected, {'evictions': seen})
    values = {'train': TRAIN_CLASS, 'queue': RESEARCH, 'build': BUILD_POD, 'trains': ', '.join(TRAIN_PODS)}
    return failed(bilingual('no Evict event from KAI for a {train} pod of {queue}; {build} did not preempt anything '
                            '(were {trains} running with priorityClassName {train} when {build} came?)'.format(**values),
                            fill('{queue} 의 {train} 파드에 대한 KAI의 Evict 이벤트가 없습니다. {build:이} 선점하지 않았습니다 '
                                 '({build:을} 만들 때 {trains:이} priorityClassName {train:으로} 실행 중이었나요?)',
                                 **values)),
                  {'evictions': seen})


def expired_eviction(trains_gone, deleted_in):
    """Why the eviction cannot be verified: KAI evicts one train pod; when both
    are gone the other was deleted by the step that says it deletes it
    (deleted_in: pod -> that step's number), and only the events told which."""
    if len(trains_gone) == 1:
        return bilingual('no events are left to show that KAI evicted %s for %s' % (trains_gone[0], BUILD_POD),
                         'KAI가 %s 위해 %s 밀어냈다는 것을 보여줄 이벤트가 남아 있지 않습니다'
                         % (with_particle(BUILD_POD, '을'), with_particle(trains_gone[0], '을')))
    values = (', '.join(trains_gone), BUILD_POD, min(deleted_in.get(name, 0) for name in trains_gone))
    return bilingual('no events are left to show which one of %s KAI evicted for %s (the other is deleted in step %d)'
                     % values,
                     '%s 중 KAI가 %s 위해 밀어낸 하나가 어느 것인지 보여줄 이벤트가 남아 있지 않습니다 '
                     '(다른 하나는 %d단계에서 지웁니다)' % (values[0], with_particle(values[1], '을'), values[2]))


STEP = Step(
    'preempt', {'en': '%s evicts %s' % (BUILD_CLASS, TRAIN_CLASS), 'ko': '%s %s 밀어낸다' % (with_particle(BUILD_CLASS, '이'), with_particle(TRAIN_CLASS, '을'))},
    [], '%s Running; exactly one preemptible %s pod evicted by KAI' % (BUILD_POD, RESEARCH), solve, (
        Check('preempt.build_running', 2, check_build_running, WORDS['preempt.build_running']),
        Check('preempt.evicted', 2, check_evicted, WORDS['preempt.evicted']),
    ), words=[WORDS], began_by=[BUILD_POD], evicts=[EVICTS], evictable=TRAIN_PODS, clears=['gang'],
    objects=lambda namespace: {'pods': train_pods(namespace) + [build_pod(namespace)]})
