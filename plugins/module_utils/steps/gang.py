# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 5, all or nothing (gang): three one-GPU pods of research where two
GPUs are free stay Pending together; gang.txt holds KAI's gang reason.

The KAI-version difference of the lab lives here, once: KAI from v0.14.7
groups a batch Job into one PodGroup and honours kai.scheduler/batch-min-member
(the lab's Job); before it each Job pod gets its own PodGroup of one, so the
gang is written as an explicit PodGroup of minMember 3 and three pods.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils import grade_record
from ansible_collections.gsb.kai_lab.plugins.module_utils import kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import evidence
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import learner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    BUILD_POD, RESEARCH, TRAIN_CLASS, TRAIN_PODS, Check, Step, bilingual, failed, gpu_pod)

FILE = 'gang.txt'
GANG = 'gang'
GANG_SIZE = 3
JOB_GANG_MIN_VERSION = (0, 14, 7)


def gang_job(namespace):
    """Step 5 as the lab writes it (KAI >= v0.14.7)."""
    template = gpu_pod(GANG, namespace, RESEARCH)
    return {
        'apiVersion': 'batch/v1', 'kind': 'Job',
        'metadata': {'name': GANG, 'namespace': namespace,
                     'labels': {kai.QUEUE_LABEL: RESEARCH},
                     'annotations': {kai.BATCH_MIN_MEMBER_ANNOTATION: str(GANG_SIZE)}},
        'spec': {'parallelism': GANG_SIZE, 'completions': GANG_SIZE, 'backoffLimit': 0,
                 'template': {'metadata': {'labels': {kai.QUEUE_LABEL: RESEARCH}},
                              'spec': dict(template['spec'], restartPolicy='Never')}},
    }


def gang_podgroup(namespace):
    """Step 5 for KAI before v0.14.7: the same gang as an explicit PodGroup."""
    return {
        'apiVersion': kai.PODGROUP_API, 'kind': 'PodGroup',
        'metadata': {'name': GANG, 'namespace': namespace},
        'spec': {'minMember': GANG_SIZE, 'queue': RESEARCH, 'priorityClassName': TRAIN_CLASS},
    }


GANG_POD_NAMES = ['%s-%d' % (GANG, i) for i in range(GANG_SIZE)]


def gang_pods(namespace):
    return [gpu_pod(name, namespace, RESEARCH, annotations={kai.PODGROUP_ANNOTATION: GANG}) for name in GANG_POD_NAMES]


class GangForm(object):
    """How the gang is written for one range of KAI versions: the objects to
    create, how its pods are found, and what removes it (step 6)."""

    def __init__(self, objects, pod_names, removal, note=None):
        self.objects = objects
        self.pod_names = pod_names
        self.removal = removal
        self.note = note


JOB_FORM = GangForm(
    objects=lambda namespace: [gang_job(namespace)],
    pod_names=lambda view: sorted(kai.name_of(p) for p in view.pods(view.namespace, label_selector='job-name=%s' % GANG)),
    removal=[('batch/v1', 'Job', GANG)])
PODGROUP_FORM = GangForm(
    objects=lambda namespace: [gang_podgroup(namespace)] + gang_pods(namespace),
    pod_names=lambda view: list(GANG_POD_NAMES),
    removal=[('v1', 'Pod', name) for name in GANG_POD_NAMES] + [(kai.PODGROUP_API, 'PodGroup', GANG)],
    note='KAI %%s has no Job gang grouping (needs >= v%d.%d.%d): using an explicit PodGroup' % JOB_GANG_MIN_VERSION)


def job_gang_supported(kai_version):
    return kai.version_at_least(kai_version, JOB_GANG_MIN_VERSION)


def gang_form(kai_version):
    return JOB_FORM if job_gang_supported(kai_version) else PODGROUP_FORM


# ---------------------------------------------------------------- solving

def happened_here(view):
    """Did this cluster see the gang: its events, or a later step's pods?"""
    if any(kai.GANG_MESSAGE_MARK in (e.get('message') or '') for e in view.events()):
        return True
    return any(view.pod(name) is not None for name in TRAIN_PODS + (BUILD_POD,))


def solve(runner):
    recorded = runner.read_file(FILE)
    if recorded and kai.GANG_MESSAGE_MARK in recorded and happened_here(runner.view):
        return {'recorded': recorded.strip()}
    form = gang_form(runner.kai_version)
    if form.note:
        runner.note(form.note % runner.kai_version)
    for obj in form.objects(runner.namespace):
        # A pod already there is the learner's: never replaced.
        if obj['kind'] != 'Pod' or runner.view.pod(kai.name_of(obj)) is None:
            runner.apply(obj)

    def probe():
        names = form.pod_names(runner.view)
        pods = [runner.view.pod(n) for n in names]
        podgroup = runner.view.podgroup_of(pods[0]) if pods and pods[0] else None
        return names, pods, podgroup

    def done(seen):
        names, _pods, podgroup = seen
        return len(names) == GANG_SIZE and podgroup is not None and \
            any(kai.GANG_MESSAGE_MARK in r['message'] for r in kai.scheduling_reasons(podgroup))

    def describe(seen):
        reasons = [r['reason'] for r in kai.scheduling_reasons(seen[2])] if seen[2] else 'no PodGroup'
        return '%d pods, reasons %s' % (len(seen[0]), reasons)

    names, pods, podgroup = runner.wait(
        'the gang\'s PodGroup to carry the gang reason', probe, done, describe,
        expected='three gang pods Pending with the gang reason',
        cause='the pods are not in one PodGroup of minMember 3 (missing kai.scheduler/batch-min-member '
              'on the Job, or KAI older than v0.14.7) or KAI is not running')
    if podgroup is None or not kai.condition_text(podgroup):
        # Only in check mode, whose waiter does not wait: no decision of KAI to record.
        return {}
    placed = [kai.name_of(p) for p in pods if kai.pod_phase(p) != 'Pending' or kai.pod_node(p)]
    if placed:
        runner.not_as_expected('all three gang pods Pending', [runner.view.pod_state(n) for n in names],
                               'some gang pods were placed: %s' % ', '.join(placed))
    runner.write_file(FILE, kai.condition_text(podgroup).strip() + '\n')
    return {'podgroup': kai.podgroup_summary(podgroup), 'pods': names}


# ---------------------------------------------------------------- checking

WORDS = {
    'gang.reason': {
        'desc': {'en': 'gang.txt holds KAI\'s gang reason (2 found, 3 required)',
                 'ko': 'gang.txt 에 KAI의 갱 이유 (2개 찾음, 3개 필요)'},
        'fail': {'en': 'gang.txt: {problem}', 'ko': 'gang.txt: {problem}'},
        'hint': {'en': 'With the three gang pods Pending, copy the PodGroup\'s status.schedulingConditions[0].message '
                       '("... required for gang scheduling").',
                 'ko': '갱 파드 세 개가 Pending 일 때 PodGroup 의 status.schedulingConditions[0].message '
                       '("... required for gang scheduling") 를 복사하세요.'},
    },
}


def check_reason(snapshot):
    raw = learner.text_file(snapshot, FILE)
    if kai.GANG_MESSAGE_MARK not in raw:
        return failed(bilingual('does not hold KAI\'s gang reason ("... required for gang scheduling"); got: %s' % raw[:120],
                                'KAI의 갱 이유("... required for gang scheduling")가 아닙니다. 내용: %s' % raw[:120]))
    if not kai.gang_message_requires(raw, GANG_SIZE):
        return failed(bilingual('the gang was not of %d pods: %s' % (GANG_SIZE, raw[:160]),
                                '갱 크기가 %d 이 아닙니다: %s' % (GANG_SIZE, raw[:160])))
    proofs = [grade_record.proof_from_event(e) for e in sorted(snapshot.events, key=kai.event_time)
              if e.get('reason') == 'Unschedulable' and kai.GANG_MESSAGE_MARK in (e.get('message') or '')]
    proofs += [grade_record.proof_from_condition(pg, r) for pg in snapshot.podgroups for r in kai.scheduling_reasons(pg)
               if kai.GANG_MESSAGE_MARK in r['message']]
    if proofs:
        return evidence.live(proofs, [], file=raw, kai=proofs[0]['message'][:300])
    entry, stale = evidence.recalled(snapshot, 'gang.reason')
    if entry is None:
        return evidence.gone('gang', bilingual('the gang\'s PodGroup and events are gone, so the text cannot be matched '
                                               'with the cluster',
                                               '갱의 PodGroup 과 이벤트가 없어 클러스터와 대조할 수 없습니다'), stale,
                             {'file': raw})
    return evidence.from_record(entry, file=raw, kai=grade_record.best_proof(entry)['message'][:300])


STEP = Step(
    'gang', 5, {'en': 'All or nothing (gang)', 'ko': '전부 아니면 전무 (갱)'}, [FILE],
    'all three gang pods Pending with the gang reason; gang.txt holds it', solve, (
        Check('gang.reason', 3, check_reason, WORDS['gang.reason']),
    ))
