# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What KAI-Scheduler means by its objects, as pure functions over dicts.

Knows KAI, not the lab: queues, PodGroups and their scheduling conditions,
the events KAI leaves, and who holds which GPU. Everything here takes plain
Kubernetes objects (as returned by the API, JSON-decoded) so it can be tested
against objects recorded from a real cluster.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

GPU_RESOURCE = 'nvidia.com/gpu'
QUEUE_GROUP = 'scheduling.run.ai'
QUEUE_VERSION = 'v2'
PODGROUP_VERSION = 'v2alpha2'
QUEUE_LABEL = 'kai.scheduler/queue'
SCHEDULER_NAME = 'kai-scheduler'
PODGROUP_ANNOTATION = 'pod-group-name'
FRACTION_ANNOTATION = 'gpu-fraction'
SHARED_GPU_CONFIGMAP_ANNOTATION = 'runai/shared-gpu-configmap'
GPU_GROUP_LABEL = 'runai-gpu-group'
RESERVATION_NAMESPACE = 'kai-resource-reservation'
RESERVATION_GPU_ANNOTATION = 'run.ai/reserve_for_gpu_index'
BATCH_MIN_MEMBER_ANNOTATION = 'kai.scheduler/batch-min-member'
VISIBLE_DEVICES = 'NVIDIA_VISIBLE_DEVICES'
UNLIMITED = -1

# Reason codes KAI writes into PodGroup.status.schedulingConditions[].reasons[].
REASON_OVER_LIMIT = 'OverLimit'
REASON_POD_SCHEDULING_ERRORS = 'PodSchedulingErrors'
REASON_NON_PREEMPTIBLE_OVER_QUOTA = 'NonPreemptibleOverQuota'
# The stable part of KAI's gang message: "Resources were found for 2 pods
# while 3 are required for gang scheduling".
GANG_MESSAGE_MARK = 'required for gang scheduling'
OVER_LIMIT_MESSAGE_MARK = 'quota has reached the allowable limit of GPUs'
FRACTION_WITH_GPU_LIMIT_DENIAL = 'cannot have both GPU fraction request and whole GPU resource request/limit'
GPU_SHARING_DISABLED_DENIAL = 'while GPU sharing is disabled'


def meta(obj):
    return (obj or {}).get('metadata') or {}


def name_of(obj):
    return meta(obj).get('name')


def labels(obj):
    return meta(obj).get('labels') or {}


def annotations(obj):
    return meta(obj).get('annotations') or {}


# ---------------------------------------------------------------- queues

def queue_resource(queue, resource='gpu'):
    """quota, limit and overQuotaWeight of one resource of a Queue.

    KAI's limit is a plain float64 with no default: a limit that is not
    written is 0, i.e. nothing may run beyond 0. Only -1 means unlimited.
    The result keeps that distinction: limit_set tells whether it was written.
    """
    spec = ((queue or {}).get('spec') or {}).get('resources') or {}
    res = spec.get(resource) or {}
    return {
        'quota': _number(res.get('quota', 0)),
        'limit': _number(res.get('limit', 0)),
        'limit_set': 'limit' in res,
        'over_quota_weight': _number(res.get('overQuotaWeight', 1)),
    }


def queue_summary(queue):
    spec = (queue or {}).get('spec') or {}
    return {
        'name': name_of(queue),
        'parent': spec.get('parentQueue'),
        'display_name': spec.get('displayName'),
        'gpu': queue_resource(queue, 'gpu'),
        'cpu': queue_resource(queue, 'cpu'),
        'memory': queue_resource(queue, 'memory'),
    }


def effective_gpu_limit(queue):
    """The GPU limit KAI enforces: None when unlimited, else a number (unset is 0)."""
    limit = queue_resource(queue, 'gpu')['limit']
    return None if limit == UNLIMITED else limit


def _number(value):
    if isinstance(value, bool):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return value
    return int(number) if number == int(number) else number


# ---------------------------------------------------------------- pods

def pod_phase(pod):
    return ((pod or {}).get('status') or {}).get('phase')


def pod_node(pod):
    return ((pod or {}).get('spec') or {}).get('nodeName')


def scheduler_name(pod):
    return ((pod or {}).get('spec') or {}).get('schedulerName') or 'default-scheduler'


def podgroup_name_of_pod(pod):
    """The PodGroup KAI's pod-grouper assigned, from the pod's annotation."""
    return annotations(pod).get(PODGROUP_ANNOTATION)


def pod_queue(pod):
    return labels(pod).get(QUEUE_LABEL)


def gpu_limit(pod):
    """Whole GPUs a pod asks for: the sum of its containers' nvidia.com/gpu limits."""
    total = 0
    for container in ((pod or {}).get('spec') or {}).get('containers') or []:
        value = ((container.get('resources') or {}).get('limits') or {}).get(GPU_RESOURCE)
        if value is not None:
            total += int(_number(value))
    return total


def gpu_fraction(pod):
    value = annotations(pod).get(FRACTION_ANNOTATION)
    return None if value is None else _number(value)


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


def gpu_group(pod):
    """The GPU group KAI's binder put a fraction pod (and its reservation pod) in."""
    return labels(pod).get(GPU_GROUP_LABEL)


def reserved_gpu(reservation_pod):
    """The device id the GPU holder wrote on a reservation pod."""
    return annotations(reservation_pod).get(RESERVATION_GPU_ANNOTATION)


def env_source(pod, variable=VISIBLE_DEVICES):
    """Where a pod's variable comes from: ('value', v), ('configmap', name, key) or None.

    Looks at every container, first match wins; KAI puts it on the fraction
    container (container 0 unless annotated otherwise).
    """
    for container in ((pod or {}).get('spec') or {}).get('containers') or []:
        for env in container.get('env') or []:
            if env.get('name') != variable:
                continue
            if 'value' in env:
                return ('value', env['value'])
            ref = (env.get('valueFrom') or {}).get('configMapKeyRef')
            if ref:
                return ('configmap', ref.get('name'), ref.get('key'))
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
    names = set()
    source = env_source(pod)
    if source and source[0] == 'configmap':
        names.add(source[1])
    prefix = annotations(pod).get(SHARED_GPU_CONFIGMAP_ANNOTATION)
    if prefix:
        names.add(prefix + '-0')
    return sorted(names)


# ---------------------------------------------------------------- podgroups

def podgroup_summary(podgroup):
    spec = (podgroup or {}).get('spec') or {}
    status = (podgroup or {}).get('status') or {}
    return {
        'name': name_of(podgroup),
        'namespace': meta(podgroup).get('namespace'),
        'queue': spec.get('queue'),
        'min_member': spec.get('minMember'),
        'priority_class': spec.get('priorityClassName'),
        'phase': status.get('phase'),
        'conditions': scheduling_conditions(podgroup),
        'reasons': scheduling_reasons(podgroup),
        'owner': _owner(podgroup),
    }


def _owner(obj):
    owners = meta(obj).get('ownerReferences') or []
    if not owners:
        return None
    return {'kind': owners[0].get('kind'), 'name': owners[0].get('name')}


def scheduling_conditions(podgroup):
    """status.schedulingConditions as written by KAI's scheduler.

    Each: type (UnschedulableOnNodePool), node_pool, reason, message and
    reasons [{reason, message}]. KAI v0.17+ clears them once the PodGroup is
    scheduled; earlier versions keep the last one.
    """
    result = []
    for cond in ((podgroup or {}).get('status') or {}).get('schedulingConditions') or []:
        result.append({
            'type': cond.get('type'),
            'node_pool': cond.get('nodePool'),
            'reason': cond.get('reason'),
            'message': cond.get('message') or '',
            'reasons': [{'reason': r.get('reason'), 'message': r.get('message') or ''}
                        for r in cond.get('reasons') or []],
            'transition_id': cond.get('transitionID'),
        })
    return result


def scheduling_reasons(podgroup):
    """All reason codes with their messages, across conditions."""
    reasons = []
    for cond in scheduling_conditions(podgroup):
        reasons.extend(cond['reasons'])
    return reasons


def has_reason(podgroup, code):
    return any(r['reason'] == code for r in scheduling_reasons(podgroup))


def condition_text(podgroup):
    """The condition message a learner copies from kubectl (the first one)."""
    conditions = scheduling_conditions(podgroup)
    return conditions[0]['message'] if conditions else None


# ---------------------------------------------------------------- events

def events_for(events, kind, name):
    """Events about one object, oldest first."""
    selected = [e for e in events
                if (e.get('involvedObject') or {}).get('kind') == kind
                and (e.get('involvedObject') or {}).get('name') == name]
    return sorted(selected, key=event_time)


def event_time(event):
    return event.get('lastTimestamp') or event.get('eventTime') or event.get('firstTimestamp') \
        or meta(event).get('creationTimestamp') or ''


def event_summary(event):
    source = event.get('source') or {}
    return {
        'type': event.get('type'),
        'reason': event.get('reason'),
        'message': event.get('message') or '',
        'object': '%s/%s' % ((event.get('involvedObject') or {}).get('kind'),
                             (event.get('involvedObject') or {}).get('name')),
        'source': source.get('component') or event.get('reportingComponent') or '',
        'time': event_time(event),
    }


def scheduled_by(events, pod_name):
    """Which scheduler placed a pod, from its Scheduled event.

    KAI's message is 'Successfully assigned pod ns/p to node n at node-pool
    np'; the default scheduler's 'Successfully assigned ns/p to n' comes from
    source default-scheduler.
    """
    for event in reversed(events_for(events, 'Pod', pod_name)):
        if event.get('reason') == 'Scheduled':
            summary = event_summary(event)
            if 'at node-pool' in summary['message']:
                return SCHEDULER_NAME
            return summary['source'] or 'default-scheduler'
    return None


def eviction_events(events):
    """KAI's preemption/reclaim notices: PodGroup 'Evict' events.

    Message: 'Pod ns/victim was preempted by higher priority workload ns/pg'.
    """
    result = []
    for event in sorted(events, key=event_time):
        if event.get('reason') == 'Evict':
            summary = event_summary(event)
            summary['victim'] = _victim(summary['message'])
            result.append(summary)
    return result


def _victim(message):
    # 'Pod kai-lab/tr-1 was preempted by ...' -> 'tr-1'
    words = message.split()
    if len(words) > 1 and words[0] == 'Pod' and '/' in words[1]:
        return words[1].split('/', 1)[1]
    return None


def unschedulable_messages(events, kind, name):
    """Texts of KAI's Unschedulable events for an object, oldest first."""
    return [e.get('message') or '' for e in events_for(events, kind, name) if e.get('reason') == 'Unschedulable']


# ---------------------------------------------------------------- reports for the info modules

def queue_definition(name, parent=None, display_name=None, priority=None, resources=None):
    """A Queue object; resources maps gpu/cpu/memory to {quota, limit, over_quota_weight}.

    A limit given as None is left out, which KAI reads as 0 (nothing beyond
    0): callers must write -1 for unlimited.
    """
    spec = {'resources': {}}
    for resource, values in (resources or {}).items():
        entry = {}
        for key, field in (('quota', 'quota'), ('limit', 'limit'), ('over_quota_weight', 'overQuotaWeight')):
            if values.get(key) is not None:
                entry[field] = values[key]
        spec['resources'][resource] = entry
    if parent:
        spec['parentQueue'] = parent
    if display_name:
        spec['displayName'] = display_name
    if priority is not None:
        spec['priority'] = priority
    return {'apiVersion': '%s/%s' % (QUEUE_GROUP, QUEUE_VERSION), 'kind': 'Queue',
            'metadata': {'name': name}, 'spec': spec}


def podgroup_report(podgroup, pods, events):
    """A PodGroup with its reasons, its pods' states and the events of both."""
    summary = podgroup_summary(podgroup)
    name = summary['name']
    members = [p for p in pods if podgroup_name_of_pod(p) == name]
    related = events_for(events, 'PodGroup', name)
    for pod in members:
        related.extend(events_for(events, 'Pod', name_of(pod)))
    summary['pods'] = [{'name': name_of(p), 'phase': pod_phase(p), 'node': pod_node(p)} for p in members]
    summary['events'] = [event_summary(e) for e in sorted(related, key=event_time)]
    return summary


def gpu_allocation(pods, configmaps_by_namespace, reservation_namespace=RESERVATION_NAMESPACE):
    """Who holds which GPU: totals per node, reservation pods and fraction pods.

    configmaps_by_namespace maps namespace -> {ConfigMap name: object}, for
    resolving fraction pods' NVIDIA_VISIBLE_DEVICES.
    """
    nodes = {}
    for pod in pods:
        if is_placed(pod) and gpu_limit(pod):
            nodes[pod_node(pod)] = nodes.get(pod_node(pod), 0) + gpu_limit(pod)
    reservations = [{'name': name_of(p), 'node': pod_node(p), 'gpu_group': gpu_group(p), 'gpu': reserved_gpu(p),
                     'phase': pod_phase(p)}
                    for p in pods if meta(p).get('namespace') == reservation_namespace]
    fractions = []
    for pod in pods:
        if gpu_fraction(pod) is None:
            continue
        namespace = meta(pod).get('namespace')
        fractions.append({'name': name_of(pod), 'namespace': namespace, 'fraction': gpu_fraction(pod),
                          'phase': pod_phase(pod), 'node': pod_node(pod), 'gpu_group': gpu_group(pod),
                          'visible_devices': resolve_env(pod, configmaps_by_namespace.get(namespace, {}))})
    return {
        'gpu_allocated': gpu_allocated(pods),
        'by_node': nodes,
        'reservation_pods': reservations,
        'fraction_pods': fractions,
    }
