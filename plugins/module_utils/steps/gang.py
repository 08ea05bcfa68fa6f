# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 5, all or nothing (gang): three one-GPU pods of research where two
GPUs are free stay Pending together; gang.txt holds KAI's gang reason.

The KAI-version difference of the lab lives here, once: KAI from v0.14.7
groups a batch Job into one PodGroup and honours kai.scheduler/batch-min-member
(the lab's Job); before it each Job pod gets its own PodGroup of one, so the
gang is written as an explicit PodGroup of minMember 3 and three pods.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.record import proofs as grade_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import evidence
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import learner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import gang_word
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.gang_word import (  # noqa: F401 (GANG_POD_NAMES)
    GANG, GANG_POD_NAMES, GANG_SIZE, sort_words)
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    BUILD_POD, RESEARCH, TRAIN_CLASS, TRAIN_PODS, Check, Step, bilingual, failed, gpu_pod, say_both)

FILE = 'gang.txt'
# For the wording only; whether a version has it is kai_profiles' job_gang.
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
    """From the version's profile (kai_profiles), the one place KAI-version facts live;
    a version no profile covers raises KaiProfileError naming the known lines."""
    return kai_profiles.profile_for(kai_version)['job_gang']


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
        expected='%d gang pods Pending with the gang reason' % GANG_SIZE,
        cause='the pods are not in one PodGroup of minMember %d (missing %s on the Job, or KAI older than '
              'v%d.%d.%d) or KAI is not running' % ((GANG_SIZE, kai.BATCH_MIN_MEMBER_ANNOTATION) + JOB_GANG_MIN_VERSION))
    if podgroup is None or not kai.condition_text(podgroup):
        # Only in check mode, whose waiter does not wait: no decision of KAI to record.
        return {}
    placed = [kai.name_of(p) for p in pods if kai.pod_phase(p) != 'Pending' or kai.pod_node(p)]
    if placed:
        runner.not_as_expected('all %d gang pods Pending' % GANG_SIZE, [runner.view.pod_state(n) for n in names],
                               'some gang pods were placed: %s' % ', '.join(placed))
    runner.write_file(FILE, kai.condition_text(podgroup).strip() + '\n')
    return {'podgroup': kai.podgroup_summary(podgroup), 'pods': names}


def remove(runner):
    """Delete the gang in the form of the KAI that runs and wait for its pods to go (a later step's clears)."""
    form = gang_form(runner.kai_version)
    for api_version, kind, name in form.removal:
        runner.delete(api_version, kind, name)
    runner.wait_pods(form.pod_names(runner.view), 'gone', 'the gang pods to go')


# ---------------------------------------------------------------- checking

WORDS = {
    'gang.reason': {
        'desc': {'en': '{gang_file} holds KAI\'s gang reason ({gang_found} found, {gang_size} required)',
                 'ko': '{gang_file} 에 KAI의 갱 이유 ({gang_found}개 찾음, {gang_size}개 필요)'},
        'fail': {'en': '{gang_file}: {problem}', 'ko': '{gang_file}: {problem}'},
        'hint': {'en': 'With the {gang_size} gang pods Pending, copy the PodGroup\'s status.schedulingConditions[0].message '
                       '("... {gang_mark}") into {gang_path}.',
                 'ko': '갱 파드 {gang_size}개가 Pending 일 때 PodGroup 의 status.schedulingConditions[0].message '
                       '("... {gang_mark}") 를 {gang_path} 에 복사하세요.'},
        'grouped_alone': {
            'en': 'this KAI ({version}) groups each pod of a Job alone, before v{job_gang_since} it ignores '
                  '{min_member_annotation}: Job {gang}\'s pods {pods} got a PodGroup of one each and were '
                  'placed one by one, so there was no gang and no gang reason to copy',
            'ko': '이 KAI({version})는 v{job_gang_since} 이전이라 Job 의 파드를 하나씩 따로 묶고 {min_member_annotation:을} '
                  '무시합니다: Job {gang} 의 파드 {pods:이} 각자 PodGroup 하나씩 받아 따로 배치되었으므로 갱이 없었고 '
                  '복사할 갱 이유도 없습니다'},
        'grouped_alone_hint': {
            'en': 'On the sim write the gang as an explicit PodGroup: delete Job {gang}, create PodGroup {gang} '
                  '({podgroup_api}, minMember {gang_size}, queue {gang_queue}, priorityClassName {gang_class}) and pods '
                  '{gang_pods} ({gang_gpus} GPU each, queue {gang_queue}, schedulerName {scheduler}, annotation '
                  '{podgroup_annotation}: {gang}), then copy the PodGroup\'s reason.',
            'ko': '실습 환경(sim)에서는 갱을 PodGroup 으로 직접 만드세요: Job {gang:을} 지우고 PodGroup {gang} '
                  '({podgroup_api}, minMember {gang_size}, queue {gang_queue}, priorityClassName {gang_class}) 하나와 '
                  '{gang_pods} 파드 (각 GPU {gang_gpus}개, {gang_queue} 큐, schedulerName {scheduler}, 어노테이션 '
                  '{podgroup_annotation}: {gang}) 를 만든 뒤 PodGroup 의 이유를 복사하세요.'},
        'bare_podgroup': {
            'en': 'the gang KAI reported is {objects}, not Job {gang}\'s: on KAI {version} the lab asks for Job {gang} '
                  '(parallelism {gang_size}, annotation {min_member_annotation}: "{min_member}"), which KAI groups into '
                  'PodGroup {gang_podgroup}',
            'ko': 'KAI가 보고한 갱은 Job {gang} 의 것이 아니라 {objects} 입니다: KAI {version} 에서 실습은 Job {gang:을} '
                  '요구하며(parallelism {gang_size}, 어노테이션 {min_member_annotation}: "{min_member}"), KAI가 이를 '
                  'PodGroup {gang_podgroup:으로} 묶습니다'},
        'other_size': {
            'en': 'KAI\'s gang reason about your gang does not say {gang_size} are required: the gang KAI saw is not of '
                  '{gang_size} pods ({min_member_annotation} on Job {gang}, minMember of a PodGroup made by hand), so '
                  'this text is not what KAI wrote about it',
            'ko': '여러분 갱에 대한 KAI의 갱 이유는 {gang_size}개가 필요하다고 하지 않습니다: KAI가 본 갱은 파드 {gang_size}개의 '
                  '갱이 아니므로 (Job {gang} 의 {min_member_annotation}, 직접 만든 PodGroup 의 minMember) 이 글은 KAI가 '
                  '그 갱에 대해 쓴 것이 아닙니다'},
        'bare_podgroup_hint': {
            'en': 'Delete the hand-made PodGroup and its pods, create Job {gang} as the lab text says (the annotation on '
                  'the Job, the queue label on the Job and its pod template) and copy its PodGroup\'s reason.',
            'ko': '직접 만든 PodGroup 과 파드를 지우고 실습 설명대로 Job {gang:을} 만든 뒤(어노테이션은 Job 에, 큐 레이블은 '
                  'Job 과 파드 템플릿에) 그 PodGroup 의 이유를 복사하세요.'},
    },
}


def job_pods_grouped_alone(snapshot):
    """Job gang's pods, each in a PodGroup of its own: how KAI before v0.14.7
    groups a Job, ignoring kai.scheduler/batch-min-member. {pod: PodGroup}."""
    pods = [p for p in snapshot.pods if kai.owner_uid(p, 'Job', GANG) or kai.labels(p).get('job-name') == GANG]
    groups = dict((kai.name_of(p), kai.podgroup_name_of_pod(p)) for p in pods)
    if len(groups) >= 2 and None not in groups.values() and len(set(groups.values())) == len(groups):
        return groups
    return {}


def check_reason(snapshot):
    supported = job_gang_supported(snapshot.kai_version)
    alone = {} if supported else job_pods_grouped_alone(snapshot)
    recorded = snapshot.file(FILE)
    if alone and (recorded is None or kai.GANG_MESSAGE_MARK not in recorded):
        return failed(say_both(WORDS['gang.reason']['grouped_alone'], **dict(
            snapshot.lab, version=snapshot.kai_version, pods=', '.join(sorted(alone)))),
            {'podgroups': alone}, hint=say_both(WORDS['gang.reason']['grouped_alone_hint'], **snapshot.lab))
    raw = learner.text_file(snapshot, FILE)
    if kai.GANG_MESSAGE_MARK not in raw:
        return failed(bilingual('does not hold KAI\'s gang reason ("... %s"); got: %s' % (kai.GANG_MESSAGE_MARK, raw[:120]),
                                'KAI의 갱 이유("... %s")가 아닙니다. 내용: %s' % (kai.GANG_MESSAGE_MARK, raw[:120])))
    if not kai.gang_message_requires(raw, GANG_SIZE):
        return failed(bilingual('the gang was not of %d pods: %s' % (GANG_SIZE, raw[:160]),
                                '파드 %d개의 갱이 아닙니다: %s' % (GANG_SIZE, raw[:160])))
    bound, rejected, others, not_gang, known = sort_words(snapshot, supported, STEP.id)
    # The file's "3 are required" is KAI's word only where KAI wrote it about the gang.
    if bound and not any(kai.gang_message_requires(s[2], GANG_SIZE) for s in bound):
        return failed(say_both(WORDS['gang.reason']['other_size'], **snapshot.lab), {'file': raw})
    bound = [s for s in bound if kai.gang_message_requires(s[2], GANG_SIZE)]
    if bound:
        # The proof is about the gang's pods whose events it holds (not every pod of the namespace).
        return evidence.live([s[3] for s in bound], known.pods(sorted(set(s[1] for s in bound if s[0] == 'Pod'))),
                             rejected, file=raw, kai=bound[0][2][:300])
    if others and supported:
        podgroups = [s for s in others if s[0] == 'PodGroup'] or others
        names = sorted(set('%s %s' % (s[0], s[1]) for s in podgroups))
        return failed(say_both(WORDS['gang.reason']['bare_podgroup'], **dict(
            snapshot.lab, version=snapshot.kai_version, objects=', '.join(names))),
            {'file': raw, 'gang_of': names}, hint=say_both(WORDS['gang.reason']['bare_podgroup_hint'], **snapshot.lab))
    # KAI's live word is gone (events past their TTL, the PodGroup deleted with
    # its Job): an earlier grade may have kept it, having checked the form then.
    entry, stale = evidence.recalled(snapshot, 'gang.reason', known)
    if entry is None and rejected:
        return evidence.forged(rejected, {'file': raw})
    if entry is None and not_gang:
        _item, why = not_gang[0]
        return failed(why, {'file': raw})
    if entry is None:
        return evidence.gone('gang', bilingual('the gang\'s PodGroup and events are gone, so the text cannot be matched '
                                               'with the cluster',
                                               '갱의 PodGroup 과 이벤트가 없어 클러스터와 대조할 수 없습니다'), stale,
                             {'file': raw})
    return evidence.from_record(entry, file=raw, kai=grade_record.best_proof(entry)['message'][:300])


STEP = Step(
    'gang', {'en': 'All or nothing (gang)', 'ko': '전부 아니면 전무 (갱)'}, [FILE],
    'all %d %s pods Pending with the gang reason; %s holds it' % (GANG_SIZE, GANG, FILE), solve, (
        Check('gang.reason', 3, check_reason, WORDS['gang.reason']),
    ), words=[WORDS, gang_word.WORDS], remove=remove, objects=lambda namespace: {
        'pods': gang_pods(namespace), 'jobs': [gang_job(namespace)], 'podgroups': [gang_podgroup(namespace)],
        'gang_pods': gang_pods(namespace)})
