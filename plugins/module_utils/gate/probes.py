# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The readiness gate's pure parts: probe pods, what a pod's state says, the fingerprint.

Functions over API objects only (no cluster, no clock): what the links of
gate/links.py build, read and report.

Layer: the readiness gate; may use the cluster client, this host's processes, the KAI domain.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.host import process

LINKS = ('binder', 'gpu_pod', 'fraction', 'image')
GPU_PROBE = 'kai-ready-gpu'
FRACTION_PROBE = 'kai-ready-fraction'
CPU_PROBE = 'kai-ready-cpu'
PROBE_QUEUE = 'default-queue'
FAKE_GPU_FLAG = '--fake-gpu-nodes'
FAKE_GPU_LABEL = kai_gpu.FAKE_GPU_LABEL
PROBE_FRACTION = '0.5'


class GateFailure(Exception):
    """A broken link: which one and why, in words a person can act on."""

    def __init__(self, link, message):
        self.link = link
        super(GateFailure, self).__init__(message)


def has_fake_gpu_nodes(args):
    """True when a binder argv enables fake GPU nodes (--fake-gpu-nodes[=true])."""
    for arg in args or []:
        if arg == FAKE_GPU_FLAG:
            return True
        if arg.startswith(FAKE_GPU_FLAG + '='):
            return arg.split('=', 1)[1].lower() in ('true', '1', 't')
    return False


def deployment_args(deployment, container='binder'):
    """command + args of the named container of a Deployment (else its first)."""
    containers = ((((deployment or {}).get('spec') or {}).get('template') or {}).get('spec') or {}).get('containers') or []
    chosen = [c for c in containers if c.get('name') == container] or containers[:1]
    if not chosen:
        return []
    return list(chosen[0].get('command') or []) + list(chosen[0].get('args') or [])


def free_gpus_by_node(nodes, pods):
    """Whole GPUs not held by a placed pod, per node."""
    free = dict((kai.name_of(node), kai_gpu.node_gpus(node)) for node in nodes)
    for pod in pods:
        node = kai.pod_node(pod)
        if node in free and kai_gpu.is_placed(pod):
            free[node] -= kai_gpu.gpu_limit(pod)
    return free


def probe_pod(name, namespace, image, gpus=0, fraction=None):
    """A sleeping pod for KAI in the default queue; gpus whole GPUs or a fraction."""
    container = {'name': 'probe', 'image': image, 'command': ['sleep', 'infinity']}
    if gpus:
        container['resources'] = {'limits': {kai_gpu.GPU_RESOURCE: gpus}}
    else:
        container['resources'] = {'requests': {'cpu': '10m'}}
    pod = {'apiVersion': 'v1', 'kind': 'Pod',
           'metadata': {'name': name, 'namespace': namespace, 'labels': {kai.QUEUE_LABEL: PROBE_QUEUE}},
           'spec': {'schedulerName': kai.SCHEDULER_NAME, 'terminationGracePeriodSeconds': 0,
                    'containers': [container]}}
    if fraction is not None:
        pod['metadata']['annotations'] = {kai_gpu.FRACTION_ANNOTATION: fraction}
    return pod


def image_names(image):
    """The names a container runtime may report for an image reference."""
    names = {image}
    reference = image
    if '@' not in reference and ':' not in reference.rsplit('/', 1)[-1]:
        reference += ':latest'
    names.add(reference)
    first = reference.split('/', 1)[0]
    if '/' not in reference or ('.' not in first and ':' not in first and first != 'localhost'):
        path = reference if '/' in reference else 'library/' + reference
        names.add('docker.io/' + path)
    return names


def node_has_image(node, image):
    wanted = image_names(image)
    for entry in ((node or {}).get('status') or {}).get('images') or []:
        if wanted & set(entry.get('names') or []):
            return True
    return False


def pod_condition(pod, kind):
    for condition in ((pod or {}).get('status') or {}).get('conditions') or []:
        if condition.get('type') == kind:
            return condition
    return {}


def waiting_reasons(pod):
    reasons = []
    for status in ((pod or {}).get('status') or {}).get('containerStatuses') or []:
        waiting = (status.get('state') or {}).get('waiting') or {}
        if waiting.get('reason'):
            reasons.append('%s%s' % (waiting['reason'], (': ' + waiting['message'][:160]) if waiting.get('message') else ''))
    return reasons


def describe_pod(pod, events=()):
    """One line: phase, node, why not scheduled, container waits, last events."""
    if pod is None:
        return 'the pod does not exist'
    parts = ['phase %s' % (kai.pod_phase(pod) or 'unknown')]
    node = kai.pod_node(pod)
    parts.append('node %s' % node if node else 'not bound')
    scheduled = pod_condition(pod, 'PodScheduled')
    if scheduled and scheduled.get('status') != 'True':
        message = (': ' + scheduled['message'][:200]) if scheduled.get('message') else ''
        parts.append('PodScheduled %s (%s%s)' % (scheduled.get('status'), scheduled.get('reason') or '', message))
    parts.extend(waiting_reasons(pod))
    mine = events_of(pod, events)
    if mine:
        parts.append('events: ' + ' | '.join('%s %s' % (e.get('reason'), (e.get('message') or '')[:300]) for e in mine[-3:]))
    return ', '.join(parts)


def events_of(pod, events):
    """Events about this very pod (its uid): a probe pod's name is reused run after run."""
    uid = kai.meta(pod).get('uid')
    return [e for e in kai_events.events_for(list(events), 'Pod', kai.name_of(pod))
            if not uid or (e.get('involvedObject') or {}).get('uid') in (None, uid)]


def is_running(pod):
    return pod is not None and bool(kai.pod_node(pod)) and kai.pod_phase(pod) == 'Running'


def reservation_of(fraction_pod, reservation_pods):
    """KAI's reservation pod for a fraction pod's GPU group, or None."""
    group = kai_gpu.gpu_group(fraction_pod)
    if not group:
        return None
    for pod in reservation_pods:
        if kai_gpu.gpu_group(pod) == group and not kai.meta(pod).get('deletionTimestamp'):
            return pod
    return None


def fingerprint(pid_identities, pods, nodes, image):
    """A digest of what a pass of the gate depended on."""
    data = {
        'processes': sorted(pid_identities),
        'pods': sorted('%s:%s:%s' % (kai.meta(p).get('uid'), kai.pod_phase(p),
                                     sum(s.get('restartCount') or 0
                                         for s in ((p.get('status') or {}).get('containerStatuses') or [])))
                       for p in pods),
        'nodes': sorted('%s:%s:%s' % (kai.meta(n).get('uid'), kai_gpu.node_gpus(n), kai.labels(n).get(FAKE_GPU_LABEL))
                        for n in nodes),
        'image': image,
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode('utf-8')).hexdigest()


def pid_identities(pid_files):
    """name:pid:start time of each pid file's process ('dead' when it is not running)."""
    result = []
    for path in pid_files:
        pid = process.read_pid(path)
        start = process.start_time(pid) if pid else None
        alive = pid is not None and process.process_cmdline(pid) is not None
        result.append('%s:%s:%s' % (path, pid, start if alive else 'dead'))
    return result


def table(links):
    """The console table of the links proved so far."""
    rows = ['%-9s %-15s %6s  %s' % ('link', 'status', 'at', 'detail')]
    for link in links:
        rows.append('%-9s %-15s %5.1fs  %s' % (link['link'], link['status'], link['elapsed'], link['detail']))
    return rows
