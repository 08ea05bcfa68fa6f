# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 7, two pods share one GPU: fr-1 and fr-2 ask for half a GPU each
(gpu-fraction "0.5", no nvidia.com/gpu) and run on one card that one
reservation pod holds.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    import yaml
except ImportError:  # reported by common.require_libraries before any use
    yaml = None

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import printable
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import learner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import shared_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    FRACTION_PODS, RESEARCH, TRAIN_PODS, Check, Step, bilingual, failed, gpu_pod, joined, passed, say, say_both)

FILE = 'fraction.yaml'
FRACTION = '0.5'
# GPUs of the lab node (fake-gpu-operator's gpuCount).
NODE_GPUS = 4


def fraction_pods(namespace):
    return [gpu_pod(name, namespace, RESEARCH, gpus=0,
                    annotations={kai_gpu.FRACTION_ANNOTATION: FRACTION}) for name in FRACTION_PODS]


# ---------------------------------------------------------------- solving

def running(view, name):
    pod = view.pod(name)
    return pod is not None and kai.pod_phase(pod) == 'Running'


def solve(runner):
    view = runner.view
    manifest = yaml.safe_dump_all(fraction_pods(runner.namespace), sort_keys=False)
    if all(running(view, n) for n in FRACTION_PODS):
        evidence = sharing_evidence(view)
        runner.write_file(FILE, manifest)
        return evidence
    # Free one GPU: delete a remaining train pod (one, newest first).
    remaining = [n for n in reversed(TRAIN_PODS) if view.pod(n) is not None]
    free = NODE_GPUS - kai_gpu.gpu_allocated(view.pods())
    if free < 1 and remaining:
        runner.delete('v1', 'Pod', remaining[0])
        runner.wait_pods([remaining[0]], 'gone', 'the train pod to go')
    runner.write_file(FILE, manifest)
    for pod in fraction_pods(runner.namespace):
        if view.pod(kai.name_of(pod)) is None:
            runner.apply(pod)
    both = ' and '.join(FRACTION_PODS)
    runner.wait_pods(list(FRACTION_PODS), 'Running', '%s to run on a shared GPU' % both)
    if not all(running(view, n) for n in FRACTION_PODS):
        return {}  # only in check mode, whose waiter does not wait: nothing was placed
    evidence = sharing_evidence(view)
    if len(set(evidence['groups'].values())) != 1 or None in evidence['groups'].values():
        runner.not_as_expected('%s in one GPU group' % both, evidence, 'KAI placed them on different GPUs')
    elif evidence['reservation_pods'] != 1 or len(set(evidence['devices'].values())) != 1:
        runner.not_as_expected('one reservation pod whose GPU both pods see', evidence,
                               'fake GPU operator did not annotate the reservation pod, or its namespace differs from KAI\'s')
    return evidence


def sharing_evidence(view):
    pods = dict((n, view.pod(n)) for n in FRACTION_PODS)
    reservations = view.pods(kai_gpu.RESERVATION_NAMESPACE)
    return {
        'groups': dict((n, kai_gpu.gpu_group(p)) for n, p in pods.items()),
        'devices': dict((n, view.visible_devices(p)) for n, p in pods.items()),
        'reservation_pods': len(reservations),
        'reserved_gpus': [kai_gpu.reserved_gpu(p) for p in reservations],
    }


# ---------------------------------------------------------------- checking

WORDS = {
    'fraction.manifest': {
        'desc': {'en': '{fraction_file}: {fraction_list} with {fraction_annotation} {fraction} and no GPU limits',
                 'ko': '{fraction_file}: {fraction_annotation} {fraction}, GPU limit 없는 {fraction_list}'},
        'fail': {'en': '{fraction_file}: {problem}', 'ko': '{fraction_file}: {problem}'},
        'hint': {'en': 'Annotation {fraction_annotation}: "{fraction}", schedulerName {scheduler}, queue {fraction_queue}, '
                       'and no {gpu_resource} under resources.',
                 'ko': '어노테이션 {fraction_annotation}: "{fraction}", schedulerName {scheduler}, {fraction_queue} 큐, '
                       'resources 에 {gpu_resource} 없이 작성하세요.'},
        'fraction_with_gpu': {'en': 'pod {name} has both the {annotation} annotation and {resource} limits; KAI\'s '
                                    'admission webhook rejects it ("{denial}")',
                              'ko': '{name} 파드에 {annotation} 어노테이션과 {resource} limits 가 함께 있습니다. '
                                    'KAI 어드미션 웹훅이 거부합니다 ("{denial}")'},
    },
    'fraction.shared': {
        'desc': {'en': '{fraction_list} run on one GPU held by one reservation pod',
                 'ko': '{fraction_list:이} 예약 파드 하나가 잡은 GPU 하나에서 실행 중'},
        'fail': {'en': '{problem}', 'ko': '{problem}'},
        'hint': {'en': 'Free one GPU first (delete the remaining {train_class} pod), then kubectl apply -f {fraction_path}.',
                 'ko': '먼저 남은 {train_class} 파드를 지워 GPU 하나를 비운 뒤 kubectl apply -f {fraction_path} 하세요.'},
        'holders': {'en': '{count} reservation pods of KAI hold GPUs on {node} ({names}); {pods_en} share one GPU '
                          'only when one reservation pod holds it',
                    'ko': '{node} 에서 KAI 예약 파드 {count}개가 GPU 를 잡고 있습니다 ({names}). {pods_ko:는} 예약 파드 '
                          '하나가 잡은 GPU 하나를 함께 써야 합니다'},
        'no_holder': {'en': 'no reservation pod of KAI holds a GPU on {node}: KAI\'s binder reserves the shared GPU with '
                            'one (label app: {namespace} in namespace {namespace})',
                      'ko': '{node} 에서 GPU 를 잡은 KAI 예약 파드가 없습니다: KAI 바인더는 나눠 쓰는 GPU 를 예약 파드 하나로 '
                            '잡습니다 ({namespace} 네임스페이스, 레이블 app: {namespace})'},
        # The live pods' own request: what KAI's scheduler and binder act on.
        'not_fraction': {'en': 'pod {name} in the cluster does not ask KAI for {fraction} of a GPU: {why}',
                         'ko': '클러스터의 {name} 파드는 KAI에 GPU {fraction:을} 요청하지 않습니다: {why}'},
        'no_annotation': {'en': 'it has no {annotation} annotation', 'ko': '{annotation} 어노테이션이 없습니다'},
        'other_fraction': {'en': 'its {annotation} annotation is "{found}"',
                           'ko': '{annotation} 어노테이션 값이 "{found}" 입니다'},
        'whole_gpu': {'en': 'it asks for {resource} under resources', 'ko': 'resources 에 {resource:이} 있습니다'},
        'apart': {'en': '{pods_en} were given different GPUs by KAI\'s binder ({variable} in each pod\'s ConfigMap): '
                        'they do not share one',
                  'ko': '{pods_ko:는} KAI 바인더에게서 서로 다른 GPU 를 받았습니다 (각 파드 ConfigMap 의 {variable}): '
                        'GPU 하나를 나눠 쓰지 않습니다'},
        'other_gpu': {'en': 'reservation pod {holder} of KAI on {node} holds another GPU than the one KAI\'s binder gave '
                            '{pods_en} ({variable} in their ConfigMaps)',
                      'ko': '{node} 의 KAI 예약 파드 {holder:이} 잡은 GPU 는 KAI 바인더가 {pods_ko} 에 준 GPU (그 '
                            'ConfigMap 의 {variable}) 와 다릅니다'},
    },
}


def asks_for_whole_gpu(pod):
    return kai_gpu.gpu_limit(pod) or any(kai_gpu.GPU_RESOURCE in ((c.get('resources') or {}).get('requests') or {})
                                         for c in (pod.get('spec') or {}).get('containers') or [])


def fraction_pod_problems(snapshot, docs, name):
    pods = [d for d in docs if d.get('kind') == 'Pod' and kai.name_of(d) == name]
    if not pods:
        return [bilingual('no Pod %s' % name, '%s 파드가 없습니다' % name)]
    pod = pods[0]
    problems = []
    fraction = kai.annotations(pod).get(kai_gpu.FRACTION_ANNOTATION)
    if fraction is None:
        why = say_both(WORDS['fraction.shared']['no_annotation'], annotation=kai_gpu.FRACTION_ANNOTATION)
        problems.append(bilingual('%s: %s' % (name, why['en']), '%s: %s' % (name, why['ko'])))
    elif not isinstance(fraction, str):
        values = (name, kai_gpu.FRACTION_ANNOTATION, fraction, kai_gpu.FRACTION_ANNOTATION, FRACTION)
        problems.append(bilingual('%s %s annotation is %r, not a string: annotation values must be quoted, '
                                  'e.g. %s: "%s"' % values,
                                  '%s 의 %s 어노테이션 값(%r)이 문자열이 아닙니다. 따옴표로 감싸야 합니다 '
                                  '(예: %s: "%s")' % values))
    elif fraction != FRACTION:
        values = (name, kai_gpu.FRACTION_ANNOTATION, fraction, FRACTION)
        problems.append(bilingual('%s %s annotation is %s, expected "%s"' % values,
                                  '%s 의 %s 어노테이션 값이 %s 입니다. 필요한 값은 "%s" 입니다' % values))
    if asks_for_whole_gpu(pod):
        problems.append(say_both(WORDS['fraction.manifest']['fraction_with_gpu'], name=name,
                                 annotation=kai_gpu.FRACTION_ANNOTATION, resource=kai_gpu.GPU_RESOURCE,
                                 denial=kai_gpu.FRACTION_WITH_GPU_LIMIT_DENIAL))
    return problems + learner.pod_spec_problems(snapshot, pod, None)


def check_manifest(snapshot):
    docs = learner.yaml_docs(snapshot, FILE)
    problems = []
    for name in FRACTION_PODS:
        problems.extend(fraction_pod_problems(snapshot, docs, name))
    return learner.fail_on(problems) or passed({'pods': list(FRACTION_PODS), 'gpu-fraction': FRACTION})


def request_problem(pod):
    """Why a live fraction pod does not ask KAI for the lab's fraction and nothing more (en, ko), or None.

    The pod's own request is what KAI's scheduler and binder act on: the
    gpu-fraction annotation equal to the step's fraction, no nvidia.com/gpu.
    """
    words = WORDS['fraction.shared']
    found = kai.annotations(pod).get(kai_gpu.FRACTION_ANNOTATION)
    whys = []
    if found is None:
        whys.append(say_both(words['no_annotation'], annotation=kai_gpu.FRACTION_ANNOTATION))
    elif found != FRACTION:
        whys.append(say_both(words['other_fraction'], annotation=kai_gpu.FRACTION_ANNOTATION,
                             found=printable(str(found), 60)))
    if asks_for_whole_gpu(pod):
        whys.append(say_both(words['whole_gpu'], resource=kai_gpu.GPU_RESOURCE))
    if not whys:
        return None
    why = joined(whys)
    return bilingual(say(words['not_fraction'], 'en', name=kai.name_of(pod), fraction=FRACTION, why=why['en']),
                     say(words['not_fraction'], 'ko', name=kai.name_of(pod), fraction=FRACTION, why=why['ko']))


def check_shared(snapshot):
    """Both pods ask KAI for the fraction, KAI's binder gave both one device (each pod's own ConfigMap) and
    KAI's one reservation pod on their node holds that device. Labels, annotations and env values a pod is
    created with are the learner's, so the device and its holder are read from KAI's objects only."""
    pods = dict((name, learner.require_running(snapshot, name)) for name in FRACTION_PODS)
    groups = dict((n, kai_gpu.gpu_group(p)) for n, p in pods.items())
    shared = dict((n, kai_gpu.kai_shared_device(p, snapshot.configmaps)) for n, p in pods.items())
    devices = dict((n, found[0]) for n, found in shared.items())
    reservations = kai_gpu.reservation_pods(snapshot.reservation_pods)
    evidence = {'groups': groups, 'devices': devices, 'reservation_pods': [kai.name_of(p) for p in reservations]}
    problems, hint = [], None
    for name in FRACTION_PODS:
        request = request_problem(pods[name])
        fault = shared[name][1]
        if request:
            problems.append(request)
        if fault:
            problems.append(shared_gpu.device_problem(snapshot, name, fault))
        if (request or fault) and hint is None:
            hint = shared_gpu.device_hint(snapshot, name)
    if problems:
        return failed(joined(problems), evidence, hint)
    pair = dict(pods_en=' and '.join(FRACTION_PODS), pods_ko=', '.join(FRACTION_PODS), variable=kai_gpu.VISIBLE_DEVICES)
    if len(set(devices.values())) != 1:
        return failed(say_both(WORDS['fraction.shared']['apart'], **pair), evidence)
    device = devices[FRACTION_PODS[0]]
    # Every reservation pod of KAI on the pair's node: the one that holds the shared GPU, and no other (a pod
    # moved into the other's GPU group would leave the reservation pod of its own GPU behind).
    nodes = set(kai.pod_node(p) for p in pods.values())
    held = [p for p in kai_gpu.kai_reservation_pods(reservations) if kai.pod_node(p) in nodes]
    where = ', '.join(sorted(printable(str(n), 120) for n in nodes))
    if len(held) != 1:
        words = WORDS['fraction.shared']['no_holder' if not held else 'holders']
        return failed(say_both(words, count=len(held), node=where, namespace=kai_gpu.RESERVATION_NAMESPACE,
                               names=', '.join(sorted(printable(kai.name_of(p), 120) for p in held)), **pair), evidence)
    if kai_gpu.reserved_gpu(held[0]) != device:
        return failed(say_both(WORDS['fraction.shared']['other_gpu'], holder=printable(kai.name_of(held[0]), 120),
                               node=where, **pair), evidence)
    return passed(evidence)


STEP = Step(
    'fraction', {'en': 'Two pods share one GPU', 'ko': '두 파드가 GPU 하나를 나눠 쓴다'}, [FILE],
    '%s Running on one GPU with one reservation pod' % ' and '.join(FRACTION_PODS), solve, (
        Check('fraction.manifest', 1, check_manifest, WORDS['fraction.manifest'], files_only=True),
        Check('fraction.shared', 3, check_shared, WORDS['fraction.shared']),
    ), words=[WORDS, shared_gpu.WORDS], deletes=TRAIN_PODS, evictable=FRACTION_PODS,
    objects=lambda namespace: {'pods': fraction_pods(namespace), 'fraction_pods': fraction_pods(namespace)})
