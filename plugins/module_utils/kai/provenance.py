# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What shows that KAI itself did something, not someone who copied its fields.

Where a learner may write the lab's objects (root with the admin kubeconfig),
every field KAI writes can be written by hand as well. What a learner cannot
write is a time the API server sets (an object's or an Event's
metadata.creationTimestamp) and, short of patching status, the traces KAI's
own components leave on an object when they act on it. The rules here are
read off the real recordings (tests/unit/fixtures/sim, KAI v0.12.0, and
tests/unit/fixtures/kai-v0.17.0, both on the project's sim control plane).

Layer: the KAI domain; may use the cluster client.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai.events import not_before
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai.objects import meta, pod_node

# An Event's own times, set by whoever creates it (whichever are set).
EVENT_OWN_TIMES = ('firstTimestamp', 'lastTimestamp', 'eventTime')

# The condition KAI's binder writes on a pod it bound (BindRequest reconciler:
# type PodBound, status True, reason Bound, message "Pod bound successfully
# to node <node>"), after binding it through pods/binding.
POD_BOUND = 'PodBound'
BOUND_REASON = 'Bound'
BOUND_MESSAGE = 'Pod bound successfully to node %s'


def own_times(event):
    """[(field, time)] of the Event's own times that are set, in EVENT_OWN_TIMES order."""
    return [(field, (event or {}).get(field)) for field in EVENT_OWN_TIMES
            if isinstance((event or {}).get(field), str) and (event or {}).get(field)]


def own_times_before(event, created):
    """[(field, time)] of the Event's own times earlier than created (to the second); [] when created is unknown.

    KAI writes an Event about an object only once that object exists: in
    every recorded Event of both KAI versions firstTimestamp, lastTimestamp
    (and eventTime when set) are no earlier than the creationTimestamp of
    the Pod or PodGroup it names. A learner's copy may carry any of them.
    """
    return [(field, value) for field, value in own_times(event) if not not_before(value, created)]


def bound_at(pod):
    """When KAI's binder bound this pod, or None when KAI did not bind it.

    The rule, from the recordings: every pod KAI placed (p1, nl-1, tr-1, bd-1,
    fr-1, fr-2 on KAI v0.12.0 and v0.17.0) carries the condition PodBound,
    status True, reason Bound, message "Pod bound successfully to node
    <its spec.nodeName>", written by KAI's binder after it bound the pod
    through pods/binding; its lastTransitionTime is no earlier than the pod's
    creation. A pod created with spec.nodeName is started without any
    scheduler or binder: it never gets PodBound (as the reservation pods the
    binder itself creates with spec.nodeName show: Initialized, Ready and
    ContainersReady only). The time is the condition's lastTransitionTime.
    """
    node = pod_node(pod)
    created = meta(pod).get('creationTimestamp')
    for condition in ((pod or {}).get('status') or {}).get('conditions') or []:
        if condition.get('type') != POD_BOUND:
            continue
        at = condition.get('lastTransitionTime')
        if condition.get('status') == 'True' and condition.get('reason') == BOUND_REASON and node \
                and condition.get('message') == BOUND_MESSAGE % node and isinstance(at, str) and at \
                and not_before(at, created):
            return at
    return None
