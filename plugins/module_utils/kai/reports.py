# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reports behind the general modules (kai_podgroup_info,
kai_gpu_allocation_info), built from the KAI domain in kai/objects.py, kai/events.py and kai/gpu.py.

Layer: the KAI domain; may use the cluster client.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu


def podgroup_report(podgroup, pods, events):
    """A PodGroup with its reasons, its pods' states and the events of both."""
    summary = kai.podgroup_summary(podgroup)
    name = summary['name']
    members = [p for p in pods if kai.podgroup_name_of_pod(p) == name]
    related = kai_events.events_for(events, 'PodGroup', name)
    for pod in members:
        related.extend(kai_events.events_for(events, 'Pod', kai.name_of(pod)))
    summary['pods'] = [{'name': kai.name_of(p), 'phase': kai.pod_phase(p), 'node': kai.pod_node(p)} for p in members]
    summary['events'] = [kai_events.event_summary(e) for e in sorted(related, key=kai_events.event_time)]
    return summary


def gpu_allocation(pods, configmaps_by_namespace, reservation_namespace=kai_gpu.RESERVATION_NAMESPACE):
    """Who holds which GPU: totals per node, reservation pods and fraction pods.

    configmaps_by_namespace maps namespace -> {ConfigMap name: object}, for
    resolving fraction pods' NVIDIA_VISIBLE_DEVICES.
    """
    nodes = {}
    for pod in pods:
        if kai_gpu.is_placed(pod) and kai_gpu.gpu_limit(pod):
            nodes[kai.pod_node(pod)] = nodes.get(kai.pod_node(pod), 0) + kai_gpu.gpu_limit(pod)
    reservations = [{'name': kai.name_of(p), 'node': kai.pod_node(p), 'gpu_group': kai_gpu.gpu_group(p),
                     'gpu': kai_gpu.reserved_gpu(p), 'phase': kai.pod_phase(p)}
                    for p in pods if kai.meta(p).get('namespace') == reservation_namespace]
    fractions = []
    for pod in pods:
        if kai_gpu.gpu_fraction(pod) is None:
            continue
        namespace = kai.meta(pod).get('namespace')
        fractions.append({'name': kai.name_of(pod), 'namespace': namespace, 'fraction': kai_gpu.gpu_fraction(pod),
                          'phase': kai.pod_phase(pod), 'node': kai.pod_node(pod), 'gpu_group': kai_gpu.gpu_group(pod),
                          'visible_devices': kai_gpu.resolve_env(pod, configmaps_by_namespace.get(namespace, {}))})
    return {
        'gpu_allocated': kai_gpu.gpu_allocated(pods),
        'by_node': nodes,
        'reservation_pods': reservations,
        'fraction_pods': fractions,
    }
