# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether the Deployments and DaemonSets of a namespace on the k3s VM are
ready, and why not, for the wait after a chart's install (action
gsb.kai_lab.k3s_workloads_wait), from one `kubectl get deployments,daemonsets,pods
-o json` of the namespace.

On a slow VM (QEMU without KVM) the first container of each image waits for
containerd to unpack the image (k3s imports archives without unpacking them):
its creation can fail with "context deadline exceeded" and come up on the
kubelet's retry. That is waited for, and said, not failed; an image that is
not on an airgapped VM cannot come, and is named at once.

Layer: the targets (k3s); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import fill
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s.progress import WAIT_ARGS

# Waiting reasons of a container whose image cannot come without a registry.
IMAGE_MISSING = ('ErrImageNeverPull', 'ImagePullBackOff', 'ErrImagePull', 'InvalidImageName')
# Waiting reasons of a container the kubelet creates again by itself.
RETRIED = ('CreateContainerError', 'RunContainerError', 'CreateContainerConfigError', 'ContainerCreating',
           'PodInitializing', 'CrashLoopBackOff')
SLOW_FIRST_START = ('context deadline exceeded', 'DeadlineExceeded')

ARGUMENT_SPEC = dict(
    namespace=dict(type='str', required=True),
    deployments=dict(type='list', elements='str', default=[]),
    label=dict(type='str', required=True),
    kubeconfig=dict(type='path', default='/root/.kube/config'),
    airgap=dict(type='bool', default=False),
    timeout=dict(type='int', default=600),
)
ARGUMENT_SPEC.update(WAIT_ARGS)


def _ready_deployment(deployment):
    spec, status = deployment.get('spec') or {}, deployment.get('status') or {}
    want = spec.get('replicas', 1)
    return (status.get('observedGeneration', 0) >= deployment['metadata'].get('generation', 0)
            and status.get('updatedReplicas', 0) >= want and status.get('availableReplicas', 0) >= want)


def _ready_daemonset(daemonset):
    status = daemonset.get('status') or {}
    want = status.get('desiredNumberScheduled', 0)
    return (status.get('observedGeneration', 0) >= daemonset['metadata'].get('generation', 0)
            and status.get('updatedNumberScheduled', 0) >= want and status.get('numberAvailable', 0) >= want)


def _pod_problem(pod):
    """(reason, message, image) of a pod that is not ready, or None."""
    status = pod.get('status') or {}
    if status.get('phase') == 'Succeeded':
        return None
    containers = (status.get('initContainerStatuses') or []) + (status.get('containerStatuses') or [])
    for container in containers:
        waiting = (container.get('state') or {}).get('waiting')
        if waiting:
            last = ((container.get('lastState') or {}).get('terminated') or {})
            message = ' '.join((waiting.get('message') or last.get('message') or '').split())
            return waiting.get('reason') or 'Waiting', message, container.get('image', '')
    for condition in status.get('conditions') or []:
        if condition.get('type') == 'PodScheduled' and condition.get('status') == 'False':
            return condition.get('reason') or 'Unschedulable', ' '.join((condition.get('message') or '').split()), ''
    if status.get('phase') != 'Running' or not all(c.get('ready') for c in status.get('containerStatuses') or [{}]):
        return status.get('phase') or 'Pending', '', ''
    return None


def status(items, deployments=()):
    """From the namespace's Deployments, DaemonSets and pods: a dict with
    ready (everything wanted is available), counts ((ready, total) of the
    workloads), waiting ([(name, why)] of each pod not ready, and each wanted
    Deployment not made yet) and missing_images ([(pod, image, reason)] of
    containers whose image cannot come without a registry)."""
    found = {'Deployment': {}, 'DaemonSet': {}}
    pods = []
    for item in items:
        kind = item.get('kind')
        if kind in found:
            found[kind][item['metadata']['name']] = item
        elif kind == 'Pod':
            pods.append(item)
    ready = [name for name, item in found['Deployment'].items() if _ready_deployment(item)]
    ready += [name for name, item in found['DaemonSet'].items() if _ready_daemonset(item)]
    total = len(found['Deployment']) + len(found['DaemonSet'])
    waiting, missing_images = [], []
    for name in deployments:
        if name not in found['Deployment']:
            waiting.append((name, 'not created yet'))
            total += 1
    for pod in sorted(pods, key=lambda p: p['metadata']['name']):
        problem = _pod_problem(pod)
        if problem is None or pod['metadata'].get('deletionTimestamp'):
            continue
        reason, message, image = problem
        why = reason + (': ' + message[:160] if message else '')
        if any(mark in message for mark in SLOW_FIRST_START):
            why += ' (its image is unpacked on first use on this VM; the kubelet retries)'
        if reason in IMAGE_MISSING:
            missing_images.append((pod['metadata']['name'], image, reason))
        waiting.append((pod['metadata']['name'], why))
    return {'ready': total > 0 and len(ready) == total and not [w for w in waiting if w[1] == 'not created yet'],
            'counts': (len(ready), total), 'waiting': waiting, 'missing_images': missing_images}


def parse(output):
    """The items of `kubectl get ... -o json`, or None when it did not answer JSON."""
    try:
        return json.loads(output).get('items') or []
    except (ValueError, AttributeError):
        return None


def line(label, result, elapsed, timeout):
    """One progress line a person reads."""
    done, total = result['counts']
    text = '%s: %d of %d workloads ready' % (label, done, total)
    if result['waiting']:
        shown = ['%s: %s' % item for item in result['waiting'][:3]]
        more = len(result['waiting']) - len(shown)
        text += '; ' + '; '.join(shown) + (' (and %d more)' % more if more > 0 else '')
    return '%s; %d s of at most %d s' % (text, elapsed, timeout)


def failure(label, namespace, result, elapsed, airgap):
    """Why the wait ended, in English and Korean."""
    if airgap and result['missing_images']:
        images = ', '.join(sorted(set(missing[1] for missing in result['missing_images'])))
        return ('%s: the image %s is not on the VM (%s of pod %s): airgapped, k3s has only what it imported from '
                '<k3s_airgap_dir>/images/. Put an archive of it there and provision again. / '
                % (label, images, result['missing_images'][0][2], result['missing_images'][0][0])
                + fill('{label}: 이미지 {images:이} VM 에 없습니다. <k3s_airgap_dir>/images/ 에 아카이브를 넣고 다시 '
                       '프로비저닝하세요.', label=label, images=images))
    waiting = '; '.join('%s: %s' % item for item in result['waiting']) or 'no workload found'
    return ('%s did not become ready within %d s (%d of %d workloads ready): %s. See `kubectl -n %s get pods` and '
            '`kubectl -n %s describe pod <name>` on the VM. / '
            % (label, elapsed, result['counts'][0], result['counts'][1], waiting, namespace, namespace)
            + fill('{label:이} {elapsed} 초 안에 준비되지 않았습니다: {waiting}.', label=label, elapsed=elapsed,
                   waiting=waiting))
