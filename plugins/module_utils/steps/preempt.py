# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 6, build evicts train: with tr-1 and tr-2 (priority train) holding the
GPUs, bd-1 (priority build) runs because KAI evicts one preemptible pod."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils import grade_record
from ansible_collections.gsb.kai_lab.plugins.module_utils import kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import evidence
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import learner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    BUILD_CLASS, BUILD_POD, P1, RESEARCH, TRAIN_CLASS, TRAIN_PODS, Check, Step, bilingual, failed, gpu_pod, passed)
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.gang import gang_form


def train_pods(namespace):
    return [gpu_pod(name, namespace, RESEARCH, priority_class=TRAIN_CLASS) for name in TRAIN_PODS]


def build_pod(namespace):
    return gpu_pod(BUILD_POD, namespace, RESEARCH, priority_class=BUILD_CLASS)


# ---------------------------------------------------------------- solving

def evicted_pods(view):
    return [e['victim'] for e in kai.eviction_events(view.events()) if e['victim']]


def research_pods(view):
    return set(kai.name_of(p) for p in view.pods(view.namespace) if kai.pod_queue(p) == RESEARCH)


def solve(runner):
    view = runner.view
    build = view.pod(BUILD_POD)
    if build is not None and kai.pod_phase(build) == 'Running':
        return {'pod': view.pod_state(BUILD_POD), 'evicted': evicted_pods(view)}
    # Remove the gang so its PodGroup no longer holds the queue.
    form = gang_form(runner.kai_version)
    for api_version, kind, name in form.removal:
        runner.delete(api_version, kind, name)
    runner.wait_pods(form.pod_names(view), 'gone', 'the gang pods to go')
    for pod in train_pods(runner.namespace):
        if view.pod(kai.name_of(pod)) is None:
            runner.apply(pod)
    runner.wait_pods(list(TRAIN_PODS), 'Running', 'tr-1 and tr-2 to fill the GPUs')
    before = research_pods(view)
    if build is None:
        runner.apply(build_pod(runner.namespace))
    runner.wait_pods([BUILD_POD], 'Running', 'bd-1 to run by preempting a train pod')
    gone = sorted(before - research_pods(view))
    evicted = evicted_pods(view)
    if len(gone) != 1 or gone[0] not in evicted:
        runner.not_as_expected('exactly one train pod of queue research evicted by KAI',
                               {'gone': gone, 'evict_events_for': evicted},
                               'KAI preempted differently than the lab expects (check priority classes train/build)')
        return {}  # check mode: bd-1 was not created, nothing was evicted
    return {'pod': view.pod_state(BUILD_POD), 'evicted': gone[0]}


# ---------------------------------------------------------------- checking

WORDS = {
    'preempt.build_running': {
        'desc': {'en': 'bd-1 (priority build) runs in queue research', 'ko': 'bd-1 (build 우선순위) 이 research 큐에서 실행 중'},
        'fail': {'en': 'bd-1: {problem}', 'ko': 'bd-1: {problem}'},
        'hint': {'en': 'Pod bd-1: priorityClassName build, 1 GPU, queue research, schedulerName kai-scheduler.',
                 'ko': 'bd-1 파드: priorityClassName build, GPU 1개, research 큐, schedulerName kai-scheduler.'},
    },
    'preempt.evicted': {
        'desc': {'en': 'KAI evicted one train pod of research for bd-1', 'ko': 'KAI가 bd-1 을 위해 research 의 train 파드 하나를 밀어냄'},
        'fail': {'en': '{problem}', 'ko': '{problem}'},
        'hint': {'en': 'tr-1 and tr-2 (priorityClassName train) must fill all 4 GPUs before bd-1 is created.',
                 'ko': 'bd-1 을 만들기 전에 tr-1, tr-2 (priorityClassName train) 로 GPU 4개를 모두 채워야 합니다.'},
    },
}


def check_build_running(snapshot):
    pod = learner.require_running(snapshot, BUILD_POD)
    problems = []
    priority_class = (pod.get('spec') or {}).get('priorityClassName')
    if priority_class != BUILD_CLASS:
        problems.append(bilingual('priorityClassName is %s, expected build' % priority_class,
                                  'priorityClassName 이 %s 입니다. build 여야 합니다' % priority_class))
    if kai.pod_queue(pod) != RESEARCH:
        problems.append(bilingual('queue is %s, expected research' % kai.pod_queue(pod),
                                  '큐가 %s 입니다. research 여야 합니다' % kai.pod_queue(pod)))
    return learner.fail_on(problems) or passed({'phase': kai.pod_phase(pod), 'priorityClassName': BUILD_CLASS})


def evictions_by_build(events):
    """(summary, event) of KAI's Evict events of a step-6 candidate made for bd-1, oldest first."""
    found = []
    for event in sorted(events, key=kai.event_time):
        summaries = kai.eviction_events([event])  # [] unless KAI reported it
        if not summaries:
            continue
        summary = summaries[0]
        for_build = ('pg-%s-' % BUILD_POD) in summary['message'] or BUILD_POD in summary['message']
        if summary['victim'] in (P1,) + TRAIN_PODS and for_build:
            found.append((summary, event))
    return found


def recorded_evictions(entry):
    """The Evict events an earlier grade kept (grade_record proofs), as events again."""
    return [{'reason': 'Evict', 'message': p.get('message') or '', 'source': {'component': p.get('source')},
             'involvedObject': {'kind': (p.get('object') or '').split('/', 1)[0]}, 'lastTimestamp': p.get('time')}
            for p in (entry or {}).get('proofs') or [] if p.get('reason') == 'Evict']


def still_there(snapshot, victim):
    """A failed Result when the evicted pod still exists (not being deleted), else None."""
    remaining = snapshot.pod(victim)
    if remaining is not None and not kai.meta(remaining).get('deletionTimestamp'):
        return failed(bilingual('%s was marked for eviction but still exists' % victim,
                                '%s 이(가) 밀려나야 했지만 아직 있습니다' % victim))
    return None


def check_evicted(snapshot):
    candidates = (P1,) + TRAIN_PODS
    evictions = [e for e in kai.eviction_events(snapshot.events) if e['victim'] in candidates]
    by_build = evictions_by_build(snapshot.events)
    if by_build:
        summary, event = by_build[-1]
        return still_there(snapshot, summary['victim']) or evidence.live(
            [grade_record.proof_from_event(event)], [snapshot.pod(BUILD_POD)],
            victim=summary['victim'], event=summary['message'])
    trains_gone = [n for n in TRAIN_PODS if snapshot.pod(n) is None]
    step6_events = [e for name in (BUILD_POD,) + TRAIN_PODS for e in learner.pod_events(snapshot, name)]
    if snapshot.pod(BUILD_POD) is not None and trains_gone and not step6_events:
        # bd-1 runs and a train pod is gone, but the events of step 6 have expired: an earlier
        # grade may have kept KAI's Evict event (a proof about this bd-1, by its uid).
        entry, stale = evidence.recalled(snapshot, 'preempt.evicted')
        recorded = evictions_by_build(recorded_evictions(entry))
        if not recorded:
            return evidence.gone('preempt', expired_eviction(trains_gone), stale)
        summary = recorded[-1][0]
        return still_there(snapshot, summary['victim']) or evidence.from_record(
            entry, victim=summary['victim'], event=summary['message'])
    return failed(bilingual('no Evict event from KAI for a train pod of research; bd-1 did not preempt anything '
                            '(were tr-1 and tr-2 running with priorityClassName train when bd-1 came?)',
                            'research 의 train 파드에 대한 KAI의 Evict 이벤트가 없습니다. bd-1 이 선점하지 않았습니다 '
                            '(bd-1 을 만들 때 tr-1, tr-2 가 priorityClassName train 으로 실행 중이었나요?)'),
                  {'evictions': evictions})


def expired_eviction(trains_gone):
    """Why the eviction cannot be verified: KAI evicts one train pod; when both
    are gone the other was deleted in step 7, and only the events told which."""
    if len(trains_gone) == 1:
        return bilingual('no events are left to show that KAI evicted %s for bd-1' % trains_gone[0],
                         'KAI가 bd-1 을 위해 %s 을(를) 밀어냈다는 것을 보여줄 이벤트가 남아 있지 않습니다' % trains_gone[0])
    names = ', '.join(trains_gone)
    return bilingual('no events are left to show which one of %s KAI evicted for bd-1 (the other is deleted in step 7)'
                     % names,
                     '%s 중 KAI가 bd-1 을 위해 밀어낸 하나가 어느 것인지 보여줄 이벤트가 남아 있지 않습니다 '
                     '(다른 하나는 7단계에서 지웁니다)' % names)


STEP = Step(
    'preempt', 6, {'en': 'build evicts train', 'ko': 'build가 train을 밀어낸다'}, [],
    'bd-1 Running; exactly one preemptible research pod evicted by KAI', solve, (
        Check('preempt.build_running', 2, check_build_running, WORDS['preempt.build_running']),
        Check('preempt.evicted', 2, check_evicted, WORDS['preempt.evicted']),
    ))
