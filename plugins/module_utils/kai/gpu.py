# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who holds which GPU in KAI's terms, as pure functions over dicts.

The GPU side of the KAI domain (kai/objects.py and kai/events.py are the rest): whole-GPU limits, the
node's ledger, GPU fractions, the reservation pods that hold a shared card
and the device a fraction pod is told to use.

Layer: the KAI domain; may use the cluster client.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai.objects import (
    annotations, labels, meta, number, pod_node, pod_phase, whole_number)

GPU_RESOURCE = 'nvidia.com/gpu'
FRACTION_ANNOTATION = 'gpu-fraction'
SHARED_GPU_CONFIGMAP_ANNOTATION = 'runai/shared-gpu-configmap'
# The ConfigMaps KAI's binder makes in a fraction pod's namespace for each fraction pod, owned by the pod:
# <annotation's prefix>-0 and <prefix>-0-evar (KAI v0.17.0: fixtures/kai-v0.17.0/hand-report/configmaps-kai-lab.yaml).
BINDER_CONFIGMAPS = 2
GPU_GROUP_LABEL = 'runai-gpu-group'
RESERVATION_NAMESPACE = 'kai-resource-reservation'
# fake-gpu-operator's node labels: the pool its status-updater serves (its topology's nodePoolLabelKey) and the
# pool's name, and the label it sets on a node it made a simulated GPU node. Set here only: the roles take the
# first two through the lookup gsb.kai_lab.fake_gpu_node_pool (sim_cluster's node, fake_gpu_operator's labels,
# topology and waits), kai-lab doctor checks a node for them.
NODE_POOL_LABEL = 'run.ai/simulated-gpu-node-pool'
NODE_POOL = 'default'
FAKE_GPU_LABEL = 'run.ai/fake.gpu'
RESERVATION_GPU_ANNOTATION = 'run.ai/reserve_for_gpu_index'
RESERVATION_APP_LABEL = 'app'
VISIBLE_DEVICES = 'NVIDIA_VISIBLE_DEVICES'
FRACTION_WITH_GPU_LIMIT_DENIAL = 'cannot have both GPU fraction request and whole GPU resource request/limit'
GPU_SHARING_DISABLED_DENIAL = 'while GPU sharing is disabled'


def node_gpus(node):
    """Whole GPUs the node offers (status.allocatable), 0 when absent or not a number."""
    value = (((node or {}).get('status') or {}).get('allocatable') or {}).get(GPU_RESOURCE)
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def gpu_limit(pod):
    """Whole GPUs a pod asks for: the sum of its containers' nvidia.com/gpu limits."""
    total = 0
    for container in ((pod or {}).get('spec') or {}).get('containers') or []:
        value = ((container.get('resources') or {}).get('limits') or {}).get(GPU_RESOURCE)
        # Not a whole number of GPUs (a learner's "NaN" or "0.5"): no GPU the ledger counts.
        total += whole_number(value) or 0
    return total


def gpu_fraction(pod):
    """The gpu-fraction annotation: None when absent, a number when it is a finite one, else the text as written.

    KAI's webhook admits any text here (NaN, Infinity, -1), so a caller
    must not assume a number in (0, 1].
    """
    value = annotations(pod).get(FRACTION_ANNOTATION)
    return None if value is None else number(value)


def is_placed(pod):
    """Counted by the node's ledger: bound to a node and Pending or Running."""
    return bool(pod_node(pod)) and pod_phase(pod) in ('Pending', 'Running') \
        and not meta(pod).get('deletionTimestamp')


def gpu_allocated(pods):
    """Sum of nvidia.com/gpu limits of placed pods (the lab's definition).

    Fraction pods carry no such limit; the reservation pod that holds their
    card does, so the shared card is counted once.
    """
    return sum(gpu_limit(pod) for pod in pods if is_placed(pod))


def reservation_pods(pods, namespace=RESERVATION_NAMESPACE):
    return [pod for pod in pods if meta(pod).get('namespace') == namespace]


def kai_reservation_pods(pods, namespace=RESERVATION_NAMESPACE):
    """The reservation pods KAI's binder made: in its reservation namespace, with its label
    app: <that namespace> (--resource-reservation-app-label, as recorded on both KAI versions); the GPU the
    fake GPU operator gave each is reserved_gpu. Another pod of that namespace holds no GPU for KAI."""
    return [pod for pod in reservation_pods(pods, namespace) if labels(pod).get(RESERVATION_APP_LABEL) == namespace]


def gpu_group(pod):
    """The GPU group KAI's binder put a fraction pod (and its reservation pod) in."""
    return labels(pod).get(GPU_GROUP_LABEL)


def reserved_gpu(reservation_pod):
    """The device id the GPU holder wrote on a reservation pod."""
    return annotations(reservation_pod).get(RESERVATION_GPU_ANNOTATION)


def env_sources(pod, variable=VISIBLE_DEVICES):
    """Every definition of a pod's variable, in container order: ('value', v), ('configmap', name, key), or
    ('other', None) for one read from elsewhere (a Secret, a field of the pod)."""
    found = []
    for container in ((pod or {}).get('spec') or {}).get('containers') or []:
        for env in container.get('env') or []:
            if env.get('name') != variable:
                continue
            ref = (env.get('valueFrom') or {}).get('configMapKeyRef')
            if ref:
                found.append(('configmap', ref.get('name'), ref.get('key')))
            elif env.get('valueFrom'):
                found.append(('other', None))
            else:
                found.append(('value', env.get('value') or ''))
    return found


def env_source(pod, variable=VISIBLE_DEVICES):
    """Where a pod's variable comes from: ('value', v), ('configmap', name, key) or None.

    Looks at every container, first match wins; KAI puts it on the fraction
    container (container 0 unless annotated otherwise).
    """
    for source in env_sources(pod, variable):
        if source[0] != 'other':
            return source
    return None


def resolve_env(pod, configmaps, variable=VISIBLE_DEVICES):
    """A pod's variable resolved through its ConfigMap reference, without exec.

    configmaps maps ConfigMap name to object, in the pod's namespace.
    Returns None when the pod has no such variable or the value is not
    there yet (the binder fills the ConfigMap just before binding).
    """
    source = env_source(pod, variable)
    if source is None:
        return None
    if source[0] == 'value':
        return source[1]
    configmap = configmaps.get(source[1])
    if configmap is None:
        return None
    return (configmap.get('data') or {}).get(source[2])


def shared_gpu_configmap_names(pod):
    """ConfigMaps a fraction pod's environment is read from."""
    names = set(source[1] for source in env_sources(pod) if source[0] == 'configmap' and source[1])
    prefix = annotations(pod).get(SHARED_GPU_CONFIGMAP_ANNOTATION)
    if prefix:
        names.add(prefix + '-0')
    return sorted(names)


# Why the device a pod is told to use is not KAI's word (kai_shared_device); the lab's steps word each.
NO_VARIABLE, NOT_FROM_CONFIGMAP, NO_CONFIGMAP, NOT_OWNED, NO_VALUE, DISAGREE = (
    'no_variable', 'not_from_configmap', 'no_configmap', 'not_owned', 'no_value', 'disagree')


def owned_by(obj, pod):
    """Whether obj names this very pod (kind Pod, its uid) among its ownerReferences."""
    uid = meta(pod).get('uid')
    return bool(uid) and any(ref.get('kind') == 'Pod' and ref.get('uid') == uid
                             for ref in meta(obj).get('ownerReferences') or [])


def kai_shared_device(pod, configmaps, variable=VISIBLE_DEVICES):
    """The device KAI's binder gave a fraction pod: (device, None), or (None, (fault, ConfigMap name or None)).

    A pod's creator writes any env value or ConfigMap reference it likes, so
    the pod's say-so proves nothing (resolve_env reads it as the container
    would). The device is KAI's word only when every definition of variable
    in the pod's containers reads a key of a ConfigMap of the pod's namespace
    that names this very pod, by its uid, as its owner: KAI's binder creates
    that ConfigMap after the pod exists (the uid is the API server's) and
    writes the device of the GPU it reserved into it, as recorded on KAI
    v0.12.0 and v0.17.0. configmaps: name -> ConfigMap of the pod's namespace.
    Faults: NO_VARIABLE, NOT_FROM_CONFIGMAP (a value written in the pod, or
    read from elsewhere), NO_CONFIGMAP, NOT_OWNED (another pod's or nobody's),
    NO_VALUE, DISAGREE (definitions that give different devices).
    """
    sources = env_sources(pod, variable)
    if not sources:
        return None, (NO_VARIABLE, None)
    devices = set()
    for source in sources:
        if source[0] != 'configmap':
            return None, (NOT_FROM_CONFIGMAP, None)
        configmap = (configmaps or {}).get(source[1])
        if configmap is None or meta(configmap).get('namespace') != meta(pod).get('namespace'):
            return None, (NO_CONFIGMAP, source[1])
        if not owned_by(configmap, pod):
            return None, (NOT_OWNED, source[1])
        value = (configmap.get('data') or {}).get(source[2])
        if not isinstance(value, str) or not value:
            return None, (NO_VALUE, source[1])
        devices.add(value)
    if len(devices) != 1:
        return None, (DISAGREE, None)
    return devices.pop(), None
