# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 3, the empty-limit trap: queue nolimit has no GPU limit, which KAI
reads as 0, so nl-1 stays Pending with OverLimit; nolimit.txt holds KAI's
reason.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.record import proofs as grade_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import evidence
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import learner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    NL1, NOLIMIT_QUEUE, Check, Step, bilingual, failed, gpu_pod, passed, queue_manifest)

FILE = 'nolimit.txt'


def nolimit_queue():
    queue = NOLIMIT_QUEUE
    return queue_manifest(queue['name'], queue['parent'], queue['gpu_quota'], queue['gpu_limit'])


def nl1(namespace):
    return gpu_pod(NL1, namespace, NOLIMIT_QUEUE['name'])


# ---------------------------------------------------------------- solving

def solve(runner):
    recorded = runner.read_file(FILE)
    if recorded and kai.REASON_OVER_LIMIT in recorded and runner.view.pod(NL1) is not None:
        # Already done: nl-1 has moved on (step 4), the record stays.
        return {'recorded': recorded.strip(), 'pod': runner.view.pod_state(NL1)}
    runner.apply(nolimit_queue())
    if runner.view.pod(NL1) is None:
        runner.apply(nl1(runner.namespace))
    # Capture the reason while nl-1 is Pending: KAI v0.17+ clears it once scheduled.
    podgroup = runner.wait_podgroup(NL1, lambda pg: kai.has_reason(pg, kai.REASON_OVER_LIMIT),
                                    '%s\'s PodGroup to carry the %s reason' % (NL1, kai.REASON_OVER_LIMIT))
    if kai.pod_phase(runner.view.pod(NL1)) != 'Pending':
        runner.not_as_expected('%s Pending' % NL1, runner.view.pod_state(NL1),
                               'the %s queue has a GPU limit other than unset/0' % NOLIMIT_QUEUE['name'])
    text = kai.condition_text(podgroup) if podgroup else None
    if text:
        runner.write_file(FILE, text.strip() + '\n')
    return {'pod': runner.view.pod_state(NL1), 'reasons': kai.scheduling_reasons(podgroup) if podgroup else []}


# ---------------------------------------------------------------- checking

WORDS = {
    'nolimit.queue': {
        'desc': {'en': 'Queue {nolimit} under {nolimit_parent} with GPU quota {nolimit_quota}',
                 'ko': '{nolimit_parent} 아래 GPU quota {nolimit_quota} 인 {nolimit} 큐'},
        'fail': {'en': 'queue {nolimit}: {problem}', 'ko': '{nolimit} 큐: {problem}'},
        'hint': {'en': 'Create Queue {nolimit} with parentQueue {nolimit_parent} and resources.gpu.quota {nolimit_quota} '
                       'and no limit.',
                 'ko': 'parentQueue {nolimit_parent}, resources.gpu.quota {nolimit_quota}, limit 없이 {nolimit} 큐를 '
                       '만드세요.'},
    },
    'nolimit.reason': {
        'desc': {'en': '{nolimit_file} holds KAI\'s {over_limit} reason for {nl1}',
                 'ko': '{nolimit_file} 에 {nl1} 에 대한 KAI의 {over_limit} 이유'},
        'fail': {'en': '{nolimit_file}: {problem}', 'ko': '{nolimit_file}: {problem}'},
        'hint': {'en': 'While {nl1} is Pending: kubectl -n {namespace} get podgroup <{nl1}\'s PodGroup> -o yaml, copy '
                       'status.schedulingConditions[0].message (it starts with {over_limit}) into {nolimit_path}.',
                 'ko': '{nl1:이} Pending 일 때 kubectl -n {namespace} get podgroup <{nl1} 의 PodGroup> -o yaml 에서 '
                       'status.schedulingConditions[0].message ({over_limit:으로} 시작) 를 {nolimit_path} 에 '
                       '복사하세요.'},
    },
}


def check_queue(snapshot):
    queue = snapshot.queue(NOLIMIT_QUEUE['name'])
    if queue is None:
        return failed(bilingual('not in the cluster', '클러스터에 없습니다'))
    summary = kai.queue_summary(queue)
    if summary['parent'] != NOLIMIT_QUEUE['parent'] or summary['gpu']['quota'] != NOLIMIT_QUEUE['gpu_quota']:
        values = (summary['parent'], summary['gpu']['quota'], NOLIMIT_QUEUE['parent'], NOLIMIT_QUEUE['gpu_quota'])
        return failed(bilingual('parentQueue %s, gpu quota %s; expected %s and %s' % values,
                                'parentQueue %s, gpu quota %s 입니다. 필요한 값은 parentQueue %s, gpu quota %s 입니다'
                                % values), summary)
    return passed(summary)


def nl1_objects(snapshot):
    """What KAI's OverLimit word may be about (evidence.Known): nl-1 and the PodGroup of its pod-group-name.

    nl-1 gone (moved, deleted): the nl-1 the record saw, else the one its
    own events stored before the lab moved on (evidence.moved_on) name, and pod-grouper's PodGroup for it,
    pg-nl-1-<its uid>. Both carry when KAI placed nl-1 (once it did).
    """
    known = evidence.Known(snapshot, *evidence.moved_on(snapshot, STEP.id))
    pod = snapshot.pod(NL1)
    if pod is not None:
        uid = known.add_live('Pod', pod)
        name = kai.podgroup_name_of_pod(pod) or kai.workload_podgroup_name(NL1, uid)
    else:
        uid = known.add_gone('Pod', NL1)
        name = kai.workload_podgroup_name(NL1, uid) if uid else None
    podgroup = snapshot.podgroup(name) if name else None
    if podgroup is not None:
        # KAI's OverLimit word about nl-1's PodGroup is from before it placed nl-1, as that about nl-1.
        known.add_live('PodGroup', podgroup, placed=known.placed('Pod', NL1))
    elif name:
        known.add_gone('PodGroup', name)
    return known, podgroup


def claims_nl1(event, known):
    """Whether an event says it is about nl-1 or its PodGroup (or a PodGroup that is no live object)."""
    obj = kai_events.involved(event)
    if obj.get('kind') == 'Pod':
        return obj.get('name') == NL1
    if obj.get('kind') != 'PodGroup':
        return False
    return ('PodGroup', obj.get('name')) in known.objects or known.snapshot.podgroup(obj.get('name') or '') is None


def over_limit_proofs(snapshot):
    """(proofs, rejected, known): KAI's OverLimit word for nl-1 still in the cluster (its PodGroup's
    conditions, then the events about nl-1 or that PodGroup), the events claiming to be it that are not
    ((event, why)), and the objects they were tested against."""
    known, podgroup = nl1_objects(snapshot)
    proofs, rejected = [], []
    if podgroup is not None:
        proofs.extend(grade_record.proof_from_condition(podgroup, r) for r in kai.scheduling_reasons(podgroup)
                      if r['reason'] == kai.REASON_OVER_LIMIT)
    for event in sorted(snapshot.events, key=kai_events.event_time):
        if event.get('reason') != 'Unschedulable' or kai.REASON_OVER_LIMIT not in (event.get('message') or '') \
                or not claims_nl1(event, known):
            continue
        why = known.why_not(event)
        if why is None:
            proofs.append(grade_record.proof_from_event(event))
        else:
            rejected.append((event, why))
    return proofs, rejected, known


def check_reason(snapshot):
    raw = learner.text_file(snapshot, FILE)
    if kai.OVER_LIMIT_MESSAGE_MARK not in raw:
        if kai.REASON_OVER_LIMIT in raw:
            return failed(bilingual('holds the reason code but not KAI\'s message; copy the whole condition message '
                                    '("... quota has reached the allowable limit of GPUs ...")',
                                    '이유 코드만 있고 KAI의 메시지가 없습니다. 조건 메시지 전체를 복사하세요 '
                                    '("... quota has reached the allowable limit of GPUs ...")'))
        return failed(bilingual('does not hold KAI\'s %s reason (got: %s)' % (kai.REASON_OVER_LIMIT, raw[:120]),
                                'KAI의 %s 이유가 아닙니다 (내용: %s)' % (kai.REASON_OVER_LIMIT, raw[:120])))
    proofs, rejected, known = over_limit_proofs(snapshot)
    entry = None
    if proofs:
        said = proofs[0]['message']
    else:
        entry, stale = evidence.recalled(snapshot, 'nolimit.reason', known)
        if entry is None and rejected:
            return evidence.forged(rejected, {'file': raw})
        if entry is None:
            return evidence.gone('nolimit', bilingual(
                'KAI\'s %s record for %s (its PodGroup condition and events) is gone, '
                'so the text cannot be matched with the cluster' % (kai.REASON_OVER_LIMIT, NL1),
                '%s 에 대한 KAI의 %s 기록(PodGroup 조건과 이벤트)이 없어 클러스터와 대조할 수 없습니다'
                % (NL1, kai.REASON_OVER_LIMIT)),
                stale, {'file': raw})
        said = grade_record.best_proof(entry)['message']
    # The learner's file is read now, whichever proof of KAI's word is used.
    if 'Limit is 0 GPUs' in said and 'Limit is 0 GPUs' not in raw:
        return failed(bilingual('does not match KAI\'s message for %s: %s' % (NL1, said[:160]),
                                '%s 에 대한 KAI 메시지와 다릅니다: %s' % (NL1, said[:160])), {'file': raw, 'kai': said})
    if entry is not None:
        return evidence.from_record(entry, file=raw, kai=said)
    return evidence.live(proofs, known.pods([NL1]), rejected, file=raw, kai=said)


STEP = Step(
    'nolimit', {'en': 'The empty-limit trap', 'ko': '빈 limit 함정'}, [FILE],
    '%s Pending with %s; %s holds the reason' % (NL1, kai.REASON_OVER_LIMIT, FILE), solve, (
        Check('nolimit.queue', 1, check_queue, WORDS['nolimit.queue']),
        Check('nolimit.reason', 2, check_reason, WORDS['nolimit.reason']),
    ), words=[WORDS], queues={NOLIMIT_QUEUE['name']: NOLIMIT_QUEUE['parent']},
    objects=lambda namespace: {'pods': [nl1(namespace)]})
