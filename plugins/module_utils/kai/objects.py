# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What KAI-Scheduler means by its objects, as pure functions over dicts.

Knows KAI, not the lab: queues, pods and PodGroups and their scheduling
conditions (the events KAI leaves are in kai/events.py, who holds which GPU
in kai/gpu.py, the info modules' reports in kai/reports.py). Everything here
takes plain Kubernetes objects (as returned by the API, JSON-decoded) so it
can be tested against objects recorded from a real cluster.

Layer: the KAI domain; may use the cluster client.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

# The API versions of KAI's objects: set once in the client's table of kinds.
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.kinds import (  # noqa: F401 pylint: disable=unused-import
    PODGROUP_API, QUEUE_API)

QUEUE_LABEL = 'kai.scheduler/queue'
SCHEDULER_NAME = 'kai-scheduler'
PODGROUP_ANNOTATION = 'pod-group-name'
BATCH_MIN_MEMBER_ANNOTATION = 'kai.scheduler/batch-min-member'
UNLIMITED = -1

# Reason codes KAI writes into PodGroup.status.schedulingConditions[].reasons[].
REASON_OVER_LIMIT = 'OverLimit'
REASON_POD_SCHEDULING_ERRORS = 'PodSchedulingErrors'
REASON_NON_PREEMPTIBLE_OVER_QUOTA = 'NonPreemptibleOverQuota'
# The stable part of KAI's gang message: "Resources were found for 2 pods
# while 3 are required for gang scheduling".
GANG_MESSAGE_MARK = 'required for gang scheduling'
OVER_LIMIT_MESSAGE_MARK = 'quota has reached the allowable limit of GPUs'


def gang_message_requires(text, size):
    """Whether KAI's gang message in text says size pods are required."""
    return ('while %d are required' % size) in text


def meta(obj):
    return (obj or {}).get('metadata') or {}


def name_of(obj):
    return meta(obj).get('name')


def labels(obj):
    return meta(obj).get('labels') or {}


def annotations(obj):
    return meta(obj).get('annotations') or {}


# ---------------------------------------------------------------- queues

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
    return {'apiVersion': QUEUE_API, 'kind': 'Queue', 'metadata': {'name': name}, 'spec': spec}


def queue_resource(queue, resource='gpu'):
    """quota, limit and overQuotaWeight of one resource of a Queue.

    KAI's limit is a plain float64 with no default: a limit that is not
    written is 0, i.e. nothing may run beyond 0. Only -1 means unlimited.
    The result keeps that distinction: limit_set tells whether it was written.
    """
    spec = ((queue or {}).get('spec') or {}).get('resources') or {}
    res = spec.get(resource) or {}
    return {
        'quota': number(res.get('quota', 0)),
        'limit': number(res.get('limit', 0)),
        'limit_set': 'limit' in res,
        'over_quota_weight': number(res.get('overQuotaWeight', 1)),
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


def number(value):
    """A number written as a string or float, as an int when whole; other values unchanged.

    NaN and infinities (which float() accepts, also as text such as "NaN" or
    "1e999") are no numbers here: they come back unchanged, so a caller
    compares them as wrong values instead of failing on int(nan).
    """
    if isinstance(value, bool):
        return value
    try:
        parsed = float(value)
    except (TypeError, ValueError, OverflowError):
        return value
    if not math.isfinite(parsed):
        return value
    return int(parsed) if parsed == int(parsed) else parsed


def whole_number(value):
    """value as a non-negative int when it is one (1, "2", 3.0), else None (NaN, "1.5", "abc", -1)."""
    parsed = number(value)
    if isinstance(parsed, bool) or not isinstance(parsed, int) or parsed < 0:
        return None
    return parsed


# ---------------------------------------------------------------- pods

def pod_phase(pod):
    return ((pod or {}).get('status') or {}).get('phase')


def pod_node(pod):
    return ((pod or {}).get('spec') or {}).get('nodeName')


def scheduled_at(pod):
    """When the pod was scheduled: its PodScheduled condition's lastTransitionTime once True, else None."""
    for condition in ((pod or {}).get('status') or {}).get('conditions') or []:
        if condition.get('type') == 'PodScheduled' and condition.get('status') == 'True':
            return condition.get('lastTransitionTime')
    return None


def scheduler_name(pod):
    return ((pod or {}).get('spec') or {}).get('schedulerName') or 'default-scheduler'


def podgroup_name_of_pod(pod):
    """The PodGroup KAI's pod-grouper assigned, from the pod's annotation."""
    return annotations(pod).get(PODGROUP_ANNOTATION)


def pod_queue(pod):
    return labels(pod).get(QUEUE_LABEL)


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


def owner_uid(obj, kind, name):
    """The uid of obj's owner of this kind and name, or None."""
    for ref in meta(obj).get('ownerReferences') or []:
        if ref.get('kind') == kind and ref.get('name') == name:
            return ref.get('uid')
    return None


def workload_podgroup_name(name, uid):
    """The PodGroup KAI's pod-grouper makes for a top owner (a Job's pods, one pod): pg-<name>-<uid>."""
    return 'pg-%s-%s' % (name, uid)


def owner_uid_in_podgroup_name(podgroup_name, owner_name):
    """The owner's uid in the name pod-grouper gives its PodGroup (pg-<owner>-<uid>), or None."""
    prefix = 'pg-%s-' % owner_name
    if isinstance(podgroup_name, str) and podgroup_name.startswith(prefix) and len(podgroup_name) > len(prefix):
        return podgroup_name[len(prefix):]
    return None


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
