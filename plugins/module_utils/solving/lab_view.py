# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The solver's read side: the lab's objects as they are now, KAI's view of
them, and the likely cause of a pod not getting where a step expects.

What it says reaches the console through the solver's failure output, so any
text from the cluster (event and condition messages, annotation values) is
made one printable line first (learner_text.printable, the grader's rule): an
Event's message with line breaks cannot forge a console line.

Layer: solving; may use the cluster client, the KAI domain, the learner's files, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import printable

# How much of one cluster text (an event's or a condition's message) a line quotes.
QUOTE = 160


class LabView(object):
    """Read side: the lab's objects and KAI's view of them."""

    def __init__(self, cluster, namespace):
        self.cluster = cluster
        self.namespace = namespace

    def pod(self, name, namespace=None):
        return self.cluster.get('v1', 'Pod', name, namespace or self.namespace)

    def pods(self, namespace=None, label_selector=None):
        return self.cluster.list('v1', 'Pod', namespace, label_selector=label_selector)

    def events(self, namespace=None):
        return self.cluster.list('v1', 'Event', namespace or self.namespace)

    def podgroup(self, name):
        return self.cluster.get(kai.PODGROUP_API, 'PodGroup', name, self.namespace)

    def podgroup_of(self, pod):
        name = kai.podgroup_name_of_pod(pod)
        return self.podgroup(name) if name else None

    def queue(self, name):
        return self.cluster.get(kai.QUEUE_API, 'Queue', name)

    def configmaps(self, pod):
        found = {}
        for name in kai_gpu.shared_gpu_configmap_names(pod):
            cm = self.cluster.get('v1', 'ConfigMap', name, kai.meta(pod).get('namespace'))
            if cm:
                found[name] = cm
        return found

    def visible_devices(self, pod):
        return kai_gpu.resolve_env(pod, self.configmaps(pod))

    def pod_state(self, name):
        """A short description of a pod for messages and evidence."""
        pod = self.pod(name)
        if pod is None:
            return {'name': name, 'exists': False}
        state = {'name': name, 'exists': True, 'phase': _line(kai.pod_phase(pod)), 'node': _line(kai.pod_node(pod)),
                 'scheduler': _line(kai.scheduler_name(pod)), 'podgroup': _line(kai.podgroup_name_of_pod(pod))}
        podgroup = self.podgroup_of(pod)
        if podgroup:
            state['reasons'] = [printable(r['reason'], QUOTE) for r in kai.scheduling_reasons(podgroup)]
        state['last_events'] = last_events(kai_events.events_for(self.events(), 'Pod', name))
        return state

    def diagnose(self, name):
        """The likely cause of a pod not reaching want, in words a learner can act on."""
        pod = self.pod(name)
        if pod is None:
            return 'pod %s does not exist (never created, rejected by admission, or evicted)' % name
        if kai.scheduler_name(pod) != kai.SCHEDULER_NAME:
            return ('pod scheduled by %s, not KAI: spec.schedulerName must be kai-scheduler'
                    % printable(kai.scheduler_name(pod)))
        if not kai.podgroup_name_of_pod(pod):
            return 'no PodGroup annotation: KAI\'s pod-grouper is not running or not reaching the API server'
        podgroup = self.podgroup_of(pod)
        if podgroup is None:
            return 'PodGroup %s is missing: KAI\'s pod-grouper is not running' % printable(kai.podgroup_name_of_pod(pod))
        reasons = kai.scheduling_reasons(podgroup)
        if kai.pod_phase(pod) == 'Pending' and reasons:
            return 'KAI keeps it Pending: %s' % '; '.join('%s: %s' % (printable(r['reason'], QUOTE), printable(r['message'], 200))
                                                          for r in reasons)
        events = kai_events.events_for(self.events(), 'Pod', name)
        reasons_seen = [e.get('reason') for e in events]
        if 'Scheduled' in reasons_seen and not kai.pod_node(pod):
            return 'KAI scheduled it but nothing bound it: KAI\'s binder is not running'
        if kai.pod_phase(pod) == 'Pending' and not kai.pod_node(pod):
            return 'no decision from KAI yet: the KAI scheduler is not running, or the queue %s does not exist' \
                % printable(kai.pod_queue(pod))
        return 'pod is %s on %s' % (printable(kai.pod_phase(pod)), printable(kai.pod_node(pod)))


def _line(value):
    """A name or phase from the cluster as one printable line; None stays None (absent)."""
    return None if value is None else printable(value, QUOTE)


def last_events(events, count=3):
    """The last few events as 'type reason: message', each one printable line."""
    return ['%s %s: %s' % (printable(e.get('type'), 40), printable(e.get('reason'), 80), printable(e.get('message'), QUOTE))
            for e in events[-count:]]
