# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's eight steps as data: what each writes, creates and expects.

Source: the lab text (shared/lab/lab.en.md, from the Korean original). The
solver (lab_steps) and the grader (grading) both read this; neither repeats
the lab's numbers.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils import kai

STEP_IDS = ('queues', 'podgroup', 'nolimit', 'limit_fix', 'gang', 'preempt', 'fraction', 'report')

# GPUs of the lab node (fake-gpu-operator's gpuCount).
NODE_GPUS = 4

# Step 1: the queue hierarchy. None = the lab asks that nothing be written.
QUEUES = {
    'lab': {'parent': None, 'gpu_quota': 4, 'gpu_limit': -1},
    'research': {'parent': 'lab', 'gpu_quota': 2, 'gpu_limit': 4},
    'ops': {'parent': 'lab', 'gpu_quota': 2, 'gpu_limit': -1},
}
# Step 3: the trap queue; its GPU limit is deliberately not written.
NOLIMIT_QUEUE = {'name': 'nolimit', 'parent': 'lab', 'gpu_quota': 1, 'gpu_limit': None}
CPU_MEMORY = {'quota': -1, 'limit': -1}

# Pods and the queue each goes to.
P1 = 'p1'
NL1 = 'nl-1'
GANG = 'gang'
GANG_SIZE = 3
TRAIN_PODS = ('tr-1', 'tr-2')
BUILD_POD = 'bd-1'
FRACTION_PODS = ('fr-1', 'fr-2')
FRACTION = '0.5'
TRAIN_CLASS = 'train'
BUILD_CLASS = 'build'

# KAI from this version groups a batch Job into one PodGroup and honours
# kai.scheduler/batch-min-member; before it, each Job pod gets its own
# PodGroup of one, so the gang is expressed with an explicit PodGroup.
JOB_GANG_MIN_VERSION = (0, 14, 7)

FILES = {
    'queues': 'queues.yaml',
    'p1': 'p1.yaml',
    'podgroup': 'podgroup.txt',
    'nolimit': 'nolimit.txt',
    'gang': 'gang.txt',
    'fraction': 'fraction.yaml',
    'report': 'report.json',
}

STEPS = [
    {'id': 'queues', 'number': 1, 'files': [FILES['queues']],
     'title': {'en': 'Queue hierarchy', 'ko': '큐 계층'},
     'expects': 'queues lab, research and ops exist as written in queues.yaml'},
    {'id': 'podgroup', 'number': 2, 'files': [FILES['p1'], FILES['podgroup']],
     'title': {'en': 'Pod p1 and its PodGroup', 'ko': 'p1 파드와 PodGroup'},
     'expects': 'p1 Running through KAI; podgroup.txt names its PodGroup'},
    {'id': 'nolimit', 'number': 3, 'files': [FILES['nolimit']],
     'title': {'en': 'The empty-limit trap', 'ko': '빈 limit 함정'},
     'expects': 'nl-1 Pending with OverLimit; nolimit.txt holds the reason'},
    {'id': 'limit_fix', 'number': 4, 'files': [],
     'title': {'en': 'Fix the limit', 'ko': 'limit 고치기'},
     'expects': 'nolimit gpu limit -1; nl-1 Running'},
    {'id': 'gang', 'number': 5, 'files': [FILES['gang']],
     'title': {'en': 'All or nothing (gang)', 'ko': '전부 아니면 전무 (갱)'},
     'expects': 'all three gang pods Pending with the gang reason; gang.txt holds it'},
    {'id': 'preempt', 'number': 6, 'files': [],
     'title': {'en': 'build evicts train', 'ko': 'build가 train을 밀어낸다'},
     'expects': 'bd-1 Running; exactly one preemptible research pod evicted by KAI'},
    {'id': 'fraction', 'number': 7, 'files': [FILES['fraction']],
     'title': {'en': 'Two pods share one GPU', 'ko': '두 파드가 GPU 하나를 나눠 쓴다'},
     'expects': 'fr-1 and fr-2 Running on one GPU with one reservation pod'},
    {'id': 'report', 'number': 8, 'files': [FILES['report']],
     'title': {'en': 'Who holds the GPUs', 'ko': 'GPU는 누가 쥐고 있나'},
     'expects': 'report.json values equal the cluster'},
]

REPORT_KEYS = ('gpu_allocated', 'reservation_pods', 'shared_gpu')


def report(all_pods, namespace, configmaps):
    """Step 8's three values from the cluster: all pods (every namespace) and
    the lab namespace's ConfigMaps fr-1's environment refers to."""
    fr1 = [p for p in all_pods if kai.name_of(p) == FRACTION_PODS[0] and kai.meta(p).get('namespace') == namespace]
    return {
        'gpu_allocated': kai.gpu_allocated(all_pods),
        'reservation_pods': len(kai.reservation_pods(all_pods)),
        'shared_gpu': kai.resolve_env(fr1[0], configmaps) if fr1 else None,
    }


def step(step_id):
    for entry in STEPS:
        if entry['id'] == step_id:
            return entry
    raise KeyError(step_id)


def version_tuple(version):
    """'v0.18.6' -> (0, 18, 6); unknown parts count as 0."""
    parts = []
    for part in str(version or '').lstrip('vV').split('-', maxsplit=1)[0].split('.')[:3]:
        try:
            parts.append(int(part))
        except ValueError:
            parts.append(0)
    return tuple(parts + [0] * (3 - len(parts)))


def job_gang_supported(kai_version):
    return version_tuple(kai_version) >= JOB_GANG_MIN_VERSION


# ---------------------------------------------------------------- manifests

def queue_manifest(name, parent, gpu_quota, gpu_limit):
    gpu = {'quota': gpu_quota}
    if gpu_limit is not None:
        gpu['limit'] = gpu_limit
    spec = {'resources': {'gpu': gpu, 'cpu': dict(CPU_MEMORY), 'memory': dict(CPU_MEMORY)}}
    if parent:
        spec['parentQueue'] = parent
    return {'apiVersion': '%s/%s' % (kai.QUEUE_GROUP, kai.QUEUE_VERSION), 'kind': 'Queue',
            'metadata': {'name': name}, 'spec': spec}


def lab_queues():
    return [queue_manifest(name, q['parent'], q['gpu_quota'], q['gpu_limit']) for name, q in QUEUES.items()]


def nolimit_queue():
    q = NOLIMIT_QUEUE
    return queue_manifest(q['name'], q['parent'], q['gpu_quota'], q['gpu_limit'])


def gpu_pod(name, namespace, queue, gpus=1, priority_class=None, annotations=None, labels=None):
    """A sleeping pod for KAI; gpus=0 gives it no nvidia.com/gpu limit (fractions)."""
    container = {'name': 'main', 'image': 'ubuntu:22.04', 'command': ['sleep', 'infinity']}
    if gpus:
        container['resources'] = {'limits': {kai.GPU_RESOURCE: gpus}}
    pod = {
        'apiVersion': 'v1', 'kind': 'Pod',
        'metadata': {'name': name, 'namespace': namespace,
                     'labels': dict({kai.QUEUE_LABEL: queue}, **(labels or {}))},
        'spec': {'schedulerName': kai.SCHEDULER_NAME, 'terminationGracePeriodSeconds': 0,
                 'containers': [container]},
    }
    if annotations:
        pod['metadata']['annotations'] = dict(annotations)
    if priority_class:
        pod['spec']['priorityClassName'] = priority_class
    return pod


def p1(namespace):
    return gpu_pod(P1, namespace, 'research')


def nl1(namespace):
    return gpu_pod(NL1, namespace, NOLIMIT_QUEUE['name'])


def gang_job(namespace):
    """Step 5 as the lab writes it (KAI >= v0.14.7)."""
    template = gpu_pod(GANG, namespace, 'research')
    return {
        'apiVersion': 'batch/v1', 'kind': 'Job',
        'metadata': {'name': GANG, 'namespace': namespace,
                     'labels': {kai.QUEUE_LABEL: 'research'},
                     'annotations': {kai.BATCH_MIN_MEMBER_ANNOTATION: str(GANG_SIZE)}},
        'spec': {'parallelism': GANG_SIZE, 'completions': GANG_SIZE, 'backoffLimit': 0,
                 'template': {'metadata': {'labels': {kai.QUEUE_LABEL: 'research'}},
                              'spec': dict(template['spec'], restartPolicy='Never')}},
    }


def gang_podgroup(namespace):
    """Step 5 for KAI before v0.14.7: the same gang as an explicit PodGroup."""
    return {
        'apiVersion': '%s/%s' % (kai.QUEUE_GROUP, kai.PODGROUP_VERSION), 'kind': 'PodGroup',
        'metadata': {'name': GANG, 'namespace': namespace},
        'spec': {'minMember': GANG_SIZE, 'queue': 'research', 'priorityClassName': TRAIN_CLASS},
    }


def gang_pods(namespace):
    return [gpu_pod('%s-%d' % (GANG, i), namespace, 'research',
                    annotations={kai.PODGROUP_ANNOTATION: GANG}) for i in range(GANG_SIZE)]


def train_pods(namespace):
    return [gpu_pod(name, namespace, 'research', priority_class=TRAIN_CLASS) for name in TRAIN_PODS]


def build_pod(namespace):
    return gpu_pod(BUILD_POD, namespace, 'research', priority_class=BUILD_CLASS)


def fraction_pods(namespace):
    return [gpu_pod(name, namespace, 'research', gpus=0,
                    annotations={kai.FRACTION_ANNOTATION: FRACTION}) for name in FRACTION_PODS]
