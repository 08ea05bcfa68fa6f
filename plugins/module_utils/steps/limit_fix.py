# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 4, fix the limit: patch only nolimit's GPU limit to -1; nl-1 runs.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import learner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    NL1, NOLIMIT_QUEUE, Check, Step, bilingual, failed, passed)

# Only spec.resources.gpu.limit changes, as `kubectl patch` would.
LIMIT_PATCH = {'spec': {'resources': {'gpu': {'limit': kai.UNLIMITED}}}}


# ---------------------------------------------------------------- solving

def patched_field(patch):
    """The one field a merge patch sets, dotted, and its value ({'spec': {'a': 1}} -> ('spec.a', 1))."""
    path = []
    while isinstance(patch, dict) and len(patch) == 1:
        path.append(list(patch)[0])
        patch = patch[path[-1]]
    return '.'.join(path), patch


def solve(runner):
    queue = runner.view.queue(NOLIMIT_QUEUE['name'])
    if queue is None and runner.check_mode:
        # Step 3 would have created it; the patch would follow.
        runner.changed = True
        return {}
    if queue is None:
        needed = runner.needed()[0]
        runner.not_as_expected('queue %s from step %d' % (NOLIMIT_QUEUE['name'], needed.number), None,
                               'step %d (%s) has not been done' % (needed.number, needed.id))
    if kai.queue_resource(queue)['limit'] != kai.UNLIMITED:
        runner.patch(kai.QUEUE_API, 'Queue', NOLIMIT_QUEUE['name'], LIMIT_PATCH,
                     'queue %s %s to %s' % ((NOLIMIT_QUEUE['name'],) + patched_field(LIMIT_PATCH)))
    runner.wait_pods([NL1], 'Running', '%s to run after the limit fix' % NL1)
    return {'queue': kai.queue_summary(runner.view.queue(NOLIMIT_QUEUE['name'])), 'pod': runner.view.pod_state(NL1)}


# ---------------------------------------------------------------- checking

WORDS = {
    'limit_fix.queue': {
        'desc': {'en': '{nolimit}\'s GPU limit patched to {limit_value}, nothing else changed',
                 'ko': '{nolimit} 의 GPU limit 만 {limit_value:으로} patch'},
        'fail': {'en': 'queue {nolimit}: {problem}', 'ko': '{nolimit} 큐: {problem}'},
        'hint': {'en': "kubectl patch queue {nolimit} --type merge -p '{limit_patch}'",
                 'ko': "kubectl patch queue {nolimit} --type merge -p '{limit_patch}'"},
    },
    'limit_fix.running': {
        'desc': {'en': '{nl1} runs after the fix', 'ko': '수정 후 {nl1} 실행 중'},
        'fail': {'en': '{nl1}: {problem}', 'ko': '{nl1}: {problem}'},
        'hint': {'en': 'After the patch KAI places {nl1} in its next cycle; kubectl -n {namespace} get pod {nl1} -w.',
                 'ko': 'patch 후 다음 스케줄링 주기에 배치됩니다. kubectl -n {namespace} get pod {nl1} -w 로 확인하세요.'},
    },
}


def check_queue(snapshot):
    queue = snapshot.queue(NOLIMIT_QUEUE['name'])
    if queue is None:
        return failed(bilingual('not in the cluster', '클러스터에 없습니다'))
    summary = kai.queue_summary(queue)
    gpu = summary['gpu']
    if gpu['limit'] != kai.UNLIMITED:
        found = (gpu['limit'] if gpu['limit_set'] else 'unset (0)', gpu['limit'] if gpu['limit_set'] else '없음(0)')
        return failed(bilingual('gpu limit is %s, expected %s' % (found[0], kai.UNLIMITED),
                                'gpu limit 이 %s 입니다. 필요한 값은 %s 입니다' % (found[1], kai.UNLIMITED)), summary)
    if gpu['quota'] != NOLIMIT_QUEUE['gpu_quota'] or summary['parent'] != NOLIMIT_QUEUE['parent']:
        return failed(bilingual('more than the limit changed: quota %s, parent %s' % (gpu['quota'], summary['parent']),
                                'limit 외에도 바뀌었습니다: quota %s, parent %s' % (gpu['quota'], summary['parent'])), summary)
    return passed(summary)


def check_running(snapshot):
    pod = learner.require_running(snapshot, NL1)
    return passed({'phase': kai.pod_phase(pod), 'node': kai.pod_node(pod)})


STEP = Step(
    'limit_fix', {'en': 'Fix the limit', 'ko': 'limit 고치기'}, [],
    '%s gpu limit %s; %s Running' % (NOLIMIT_QUEUE['name'], kai.UNLIMITED, NL1), solve, (
        Check('limit_fix.queue', 1, check_queue, WORDS['limit_fix.queue']),
        Check('limit_fix.running', 2, check_running, WORDS['limit_fix.running']),
    ), words=[WORDS], needs=['nolimit'])
