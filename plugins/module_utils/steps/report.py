# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 8, who holds the GPUs: report.json's three values, computed from
the cluster (all namespaces).

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import text as learner_text
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import evidence as kai_word
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import learner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import shared_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    FRACTION_PODS, Check, Step, bilingual, failed, joined, passed, say, say_both)

STEP_ID = 'report'
FILE = 'report.json'
GPU_ALLOCATED, RESERVATION_PODS, SHARED_GPU = 'gpu_allocated', 'reservation_pods', 'shared_gpu'
REPORT_KEYS = (GPU_ALLOCATED, RESERVATION_PODS, SHARED_GPU)
# No cluster of this lab comes near it; a bound keeps a learner's 1e300 out of the grade.
MAX_COUNT = 100000


def fr1_of(all_pods, namespace):
    found = [p for p in all_pods if kai.name_of(p) == FRACTION_PODS[0] and kai.meta(p).get('namespace') == namespace]
    return found[0] if found else None


def report(all_pods, namespace, configmaps):
    """The three values from the cluster: all pods (every namespace) and the
    lab namespace's ConfigMaps fr-1's environment refers to. shared_gpu is
    the device KAI's binder gave fr-1 (step 7's proof, kai_gpu.kai_shared_device),
    None when fr-1 is missing or its environment is not KAI's word."""
    fr1 = fr1_of(all_pods, namespace)
    return {
        GPU_ALLOCATED: kai_gpu.gpu_allocated(all_pods),
        RESERVATION_PODS: len(kai_gpu.reservation_pods(all_pods)),
        SHARED_GPU: kai_gpu.kai_shared_device(fr1, configmaps)[0] if fr1 else None,
    }


# ---------------------------------------------------------------- solving

def solve(runner):
    view = runner.view
    fr1 = view.pod(FRACTION_PODS[0])
    values = report(view.pods(), view.namespace, view.configmaps(fr1) if fr1 else {})
    runner.write_file(FILE, json.dumps(values, indent=2, sort_keys=True) + '\n')
    return {'report': values}


# ---------------------------------------------------------------- checking

WORDS = {
    'report.file': {
        'desc': {'en': '{report_file} has the {report_count} keys', 'ko': '{report_file} 에 키 {report_count}개'},
        'fail': {'en': '{report_file}: {problem}', 'ko': '{report_file}: {problem}'},
        'hint': {'en': 'A JSON object with {report_keys[0]} (number), {report_keys[1]} (number) and {report_keys[2]} '
                       '(string), in {report_path}.',
                 'ko': '{report_keys[0]}(숫자), {report_keys[1]}(숫자), {report_keys[2]}(문자열) 를 가진 JSON 객체를 '
                       '{report_path} 에 작성하세요.'},
    },
    'report.values': {
        'desc': {'en': '{report_file} values equal what the cluster shows now',
                 'ko': '{report_file} 값이 지금 클러스터와 같음'},
        'fail': {'en': '{report_file}: {problem}', 'ko': '{report_file}: {problem}'},
        'hint': {'en': 'Compute each value from this cluster with kubectl (all namespaces for {report_keys[0]}) and '
                       'write it again.',
                 'ko': '이 클러스터에서 kubectl 로 각 값을 다시 계산해 작성하세요 ({report_keys[0]:은} 모든 네임스페이스).'},
        'copied': {'en': '{key} is {claimed}, a GPU this cluster never handed out: this {file} was not computed '
                         'from this cluster. Read the {visible_devices} that {pod} got here',
                   'ko': '{key:이} {claimed} 인데, 이 클러스터가 내준 적 없는 GPU 입니다: 이 클러스터에서 계산한 '
                         '{file:이} 아닙니다. 여기서 {pod} 파드가 받은 {visible_devices:을} 읽으세요'},
        # A value that is not the cluster's: where to look, never the value (grade.json keeps it for the instructor).
        'wrong': {'en': '{key} is {claimed}, not what this cluster shows: {where}',
                  'ko': '{key:이} {claimed} 인데, 이 클러스터와 다릅니다: {where}'},
        'where': {
            GPU_ALLOCATED: {'en': 'add up the {gpu_resource} limits of the pods that are placed on a node and '
                                  'Pending or Running, in every namespace (kubectl get pods -A -o wide)',
                            'ko': '모든 네임스페이스에서 노드에 배치된 Pending·Running 파드의 {gpu_resource} limits 를 '
                                  '더하세요 (kubectl get pods -A -o wide)'},
            RESERVATION_PODS: {'en': 'count the pods in namespace {reservation_ns} (kubectl -n {reservation_ns} '
                                     'get pods)',
                               'ko': '{reservation_ns} 네임스페이스의 파드 수를 세세요 (kubectl -n {reservation_ns} '
                                     'get pods)'},
            SHARED_GPU: {'en': 'read the {visible_devices} that {fr1} got (kai-lab task {report_id} says where)',
                         'ko': '{fr1} 파드가 받은 {visible_devices:을} 읽으세요 (어디서 읽는지는 kai-lab task '
                               '{report_id} 에 있습니다)'},
        },
        'missing_value': {'en': 'missing', 'ko': '없음'},
        'no_pod': {'en': '{key} is the GPU KAI gave pod {pod}, and there is no pod {pod} in {namespace}',
                   'ko': '{key:은} KAI가 {pod} 파드에 준 GPU 인데, {namespace} 에 {pod} 파드가 없습니다'},
        'no_gpu': {'en': '{key} is the GPU KAI gave pod {pod}, and the cluster shows none: {why}',
                   'ko': '{key:은} KAI가 {pod} 파드에 준 GPU 인데, 클러스터에 그런 GPU 가 없습니다: {why}'},
    },
}


def count_of(value):
    """Whether value is a count report.json may hold: a whole number in [0, MAX_COUNT] (3.0 too).

    NaN, Infinity (Python's JSON reads 1e999 as one), negative and huge
    numbers are no GPU count; they would make grade.json no JSON.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and (not math.isfinite(value) or value != int(value)):
        return False
    return 0 <= value <= MAX_COUNT


def check_file(snapshot):
    claims = learner.json_object(snapshot, FILE)
    missing = [k for k in REPORT_KEYS if k not in claims]
    extra = sorted(set(claims) - set(REPORT_KEYS))
    problems = []
    if missing:
        problems.append(bilingual('missing key(s) %s' % ', '.join(missing),
                                  '키 %s 없습니다' % learner_text.with_particle(', '.join(missing), '이')))
    if extra:
        problems.append(bilingual('unexpected key(s) %s' % ', '.join(extra),
                                  '필요 없는 키 %s 있습니다' % learner_text.with_particle(', '.join(extra), '이')))
    for key in (GPU_ALLOCATED, RESERVATION_PODS):
        if key in claims and not count_of(claims[key]):
            shown = learner_text.printable(repr(claims[key]), 60)
            problems.append(bilingual('%s must be a number, a whole one from 0 to %d, not %s' % (key, MAX_COUNT, shown),
                                      '%s %s 아니라 숫자, 0 에서 %d 사이의 정수여야 합니다'
                                      % (learner_text.with_particle(key, '은'), learner_text.with_particle(shown, '이'),
                                         MAX_COUNT)))
    if SHARED_GPU in claims and not isinstance(claims[SHARED_GPU], str):
        problems.append(bilingual('%s must be a string' % SHARED_GPU,
                                  '%s 문자열이어야 합니다' % learner_text.with_particle(SHARED_GPU, '은')))
    return learner.fail_on(problems) or passed(claims)


def device_ids(snapshot):
    """Every GPU id this cluster has handed out (reservation pods' annotations)."""
    return set(kai_gpu.reserved_gpu(p) for p in snapshot.all_pods if kai_gpu.reserved_gpu(p))


def no_shared_gpu(snapshot):
    """Why the cluster shows no GPU KAI gave fr-1 (en, ko): fr-1 is missing, or its device is not KAI's word
    (steps/shared_gpu.py's words, as step 7 says them)."""
    pod = fr1_of(snapshot.all_pods, snapshot.namespace)
    values = dict(key=SHARED_GPU, pod=FRACTION_PODS[0], namespace=snapshot.namespace)
    if pod is None:
        return say_both(WORDS['report.values']['no_pod'], **values)
    fault = kai_gpu.kai_shared_device(pod, snapshot.configmaps)[1]
    why = shared_gpu.device_problem(snapshot, FRACTION_PODS[0], fault)
    return bilingual(say(WORDS['report.values']['no_gpu'], 'en', why=why['en'], **values),
                     say(WORDS['report.values']['no_gpu'], 'ko', why=why['ko'], **values))


def check_values(snapshot):
    claims = learner.json_object(snapshot, FILE)
    actual = report(snapshot.all_pods, snapshot.namespace, snapshot.configmaps)
    evidence = {'report': claims, 'cluster': actual}
    if claims != actual:
        # A later step changed the cluster since: the report is compared with the cluster this check verified it
        # on, not with what the later step made of it.
        then = kai_word.verified_before_moving_on(snapshot, STEP_ID, 'report.values', 'cluster', claims)
        if then is not None:
            return then
    if actual[SHARED_GPU] is None:
        # No proof of fr-1's GPU to compare with: say why, never a value the learner is to find.
        problems = differences(claims, actual, (GPU_ALLOCATED, RESERVATION_PODS), snapshot.lab)
        return failed(joined(([problems] if problems else []) + [no_shared_gpu(snapshot)]), evidence,
                      shared_gpu.device_hint(snapshot, FRACTION_PODS[0]))
    claimed_gpu = claims.get(SHARED_GPU)
    if actual[SHARED_GPU] and isinstance(claimed_gpu, str) and claimed_gpu.startswith('GPU-') \
            and claimed_gpu != actual[SHARED_GPU] and claimed_gpu not in device_ids(snapshot):
        return failed(say_both(WORDS['report.values']['copied'], **dict(
            snapshot.lab, claimed=learner_text.printable(claimed_gpu, 80), key=SHARED_GPU, pod=FRACTION_PODS[0],
            file=FILE)), evidence)
    problems = differences(claims, actual, REPORT_KEYS, snapshot.lab)
    if problems:
        return failed(problems, evidence)
    return passed(evidence)


def _shown(value, lang):
    """A value of the learner's report as it wrote it (JSON), or 'missing'."""
    if value is None:
        return say(WORDS['report.values']['missing_value'], lang)
    return learner_text.printable(json.dumps(value, ensure_ascii=False, allow_nan=True), 60)


def differences(claims, actual, keys, lab):
    """The keys whose claimed value is not the cluster's, as one problem (en, ko) saying where to look for each
    (never the cluster's value: finding it is the step), or None."""
    wrong = [k for k in keys if claims.get(k) != actual[k]]
    if not wrong:
        return None
    values = dict(lab, report_id=STEP_ID)
    return dict((lang, '; '.join(say(WORDS['report.values']['wrong'], lang, key=k, claimed=_shown(claims.get(k), lang),
                                     where=say(WORDS['report.values']['where'][k], lang, **values))
                                 for k in wrong)) for lang in ('en', 'ko'))


STEP = Step(
    STEP_ID, {'en': 'Who holds the GPUs', 'ko': 'GPU는 누가 쥐고 있나'}, [FILE],
    '%s values equal the cluster' % FILE, solve, (
        Check('report.file', 1, check_file, WORDS['report.file'], files_only=True),
        Check('report.values', 2, check_values, WORDS['report.values']),
    ), words=[WORDS])
