# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's readiness gate: prove each link the lab's steps rely on.

The links, in the order they are proved (a broken one stops the gate and is
named, with what was seen last):

1. binder: KAI's binder runs with --fake-gpu-nodes (sim: the process's argv;
   k3s: the binder Deployment's args, which KAI's operator writes only once a
   node carries run.ai/fake.gpu=true);
2. gpu_pod: KAI schedules and binds a pod asking for one whole GPU;
3. fraction: a pod with gpu-fraction "0.5" gets its reservation pod in the
   reservation namespace, the reservation pod gets fake-gpu-operator's
   run.ai/reserve_for_gpu_index annotation, and the fraction pod is bound;
4. image: the lab pods' image is on the node (the probes use it, so on a VM
   this pulls it before the learner's first step). A KWOK node pulls nothing,
   so on the sim the link is reported as not applicable, not as proved.

Probe pods live in their own namespace (their events stay out of the
learner's) and are deleted before the gate returns. A lab already proved is
not probed again while nothing it depends on changed: the gate records a
fingerprint (identities of the components' processes or pods, the nodes'
GPUs) after a full pass in a file of the lab's state directory, which only
the lab can write (gate/marker.py); nothing in the cluster is believed for it.

Gate is the runner: its one deadline (taken at its start; the links stop
CLEANUP_SECONDS before it, so removing the probe pods fits), the probe pods'
life and the order of the links. Each link is a function of gate/links.py; what they build and
read of API objects (probe pods, pod descriptions, the fingerprint) is in
gate/probes.py.

Layer: the readiness gate; may use the cluster client, this host's processes, the KAI domain.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.host import process
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate import links
from ansible_collections.gsb.kai_lab.plugins.module_utils.client import readable
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import ClusterError
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate.probes import (
    FRACTION_PROBE, LINKS, GateFailure, free_gpus_by_node, table)
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.wait import WaitTimeout, wait_until

# Seconds at the end of the gate's time kept for removing its probe pods (at
# most a quarter of it): the lab's steps count every GPU, so the gate waits,
# within its one deadline, until its probes and their reservation pods are gone.
CLEANUP_SECONDS = 10.0
# A reservation pod that stays (the binder's own 40 s wait) is not waited for
# longer than this, however much of the gate's time is left.
CLEANUP_WAIT_MAX = 30.0


class Gate(object):
    """Runs the links of readiness_links against a cluster (the Cluster interface of client/api.py).

    binder_pid_file (sim) or binder_deployment (k3s) says where the binder's
    arguments are read. pull_images is False on the sim, whose node pulls
    nothing. identity_pid_files / identity_namespaces feed the fingerprint,
    kept in state_dir (none: the probes always run).
    """

    def __init__(self, cluster, probe_namespace, image, timeout, reservation_namespace=kai_gpu.RESERVATION_NAMESPACE,
                 kai_namespace='kai-scheduler', binder_pid_file=None, binder_deployment='binder',
                 pull_images=True, identity_pid_files=(), identity_namespaces=(), reprove=False,
                 check_mode=False, clock=time.monotonic, sleep=time.sleep, read_cmdline=None, interval=0.25,
                 state_dir=None):
        self.cluster, self.namespace, self.image, self.timeout = cluster, probe_namespace, image, timeout
        self.reservation_namespace, self.kai_namespace = reservation_namespace, kai_namespace
        self.binder_pid_file, self.binder_deployment = binder_pid_file, binder_deployment
        self.pull_images, self.reprove, self.check_mode = pull_images, reprove, check_mode
        self.identity_pid_files = list(identity_pid_files)
        self.identity_namespaces = list(identity_namespaces)
        self.state_dir = state_dir
        self.clock, self.sleep, self.interval = clock, sleep, interval
        self.read_cmdline = read_cmdline or process.process_cmdline
        self.started = self.deadline = self.links_deadline = None
        self.probe_reservations = set()
        self.links = []
        self.progress = []

    # ------------------------------------------------------------ what the links use
    def elapsed(self):
        return round(self.clock() - self.started, 1)

    def start(self):
        """Take the one deadline of the whole run, cleanup included."""
        self.started = self.clock()
        self.deadline = self.started + self.timeout
        self.links_deadline = self.deadline - min(CLEANUP_SECONDS, self.timeout / 4.0)

    def remaining(self, cleanup=False):
        """Seconds left for the links, or (cleanup) until the gate's deadline."""
        return max(0.0, (self.deadline if cleanup else self.links_deadline) - self.clock())

    def record_link(self, link, status, detail):
        self.links.append({'link': link, 'status': status, 'detail': detail, 'elapsed': self.elapsed()})

    def note(self, line):
        self.progress.append('%5.1f s  %s' % (self.elapsed(), line))

    def wait(self, link, what, probe, done, describe):
        """wait_until within what is left of the gate's time; a timeout breaks link."""
        try:
            return wait_until(what, probe, done, self.remaining(), interval=self.interval, describe=describe,
                              progress=self.note, clock=self.clock, sleep=self.sleep)
        except WaitTimeout as exc:
            raise GateFailure(link, 'not within the gate\'s time limit of %s s (waited %s s, the last %s s are kept '
                              'for removing its probe pods) for %s; last seen: %s'
                              % (self.timeout, self.elapsed(), round(self.deadline - self.links_deadline, 1),
                                 exc.what, exc.last_seen))

    def events(self):
        try:
            return self.cluster.list('v1', 'Event', self.namespace)
        except ClusterError:
            return []

    def create(self, pod):
        try:
            self.cluster.apply(pod)
        except ClusterError as exc:
            raise GateFailure('gpu_pod' if kai_gpu.gpu_limit(pod) else 'fraction',
                              'cannot create probe pod %s/%s: %s (a webhook denial names KAI\'s admission)'
                              % (self.namespace, kai.name_of(pod), exc))

    def pod(self, name):
        return self.cluster.get('v1', 'Pod', name, self.namespace)

    def delete(self, name):
        try:
            return self.cluster.delete('v1', 'Pod', name, self.namespace)
        except ClusterError:
            return False

    def cleanup(self, names, final=True):
        """Delete the probe pods and wait until they, and the reservation pod the
        binder made for the fraction probe, are gone: the lab's steps count every
        GPU. The final cleanup may use the gate's time up to its deadline; one
        between links (final=False) only what is left for the links."""
        deleted = [name for name in names if self.delete(name)]
        reservations = sorted(self.probe_reservations) if FRACTION_PROBE in names else []
        if not deleted and not reservations:
            return

        def probe():
            left = [name for name in deleted if self.pod(name) is not None]
            left += ['%s/%s' % (self.reservation_namespace, name) for name in reservations
                     if self.cluster.get('v1', 'Pod', name, self.reservation_namespace) is not None]
            return left

        try:
            wait_until('the probe pods to be deleted', probe, lambda left: not left,
                       min(CLEANUP_WAIT_MAX, self.remaining(cleanup=final)),
                       interval=self.interval, clock=self.clock, sleep=self.sleep)
        except (WaitTimeout, ClusterError):
            self.note('probe pods still terminating: %s' % ', '.join(probe()))

    # ------------------------------------------------------------ run
    def run(self):
        """Prove every link; returns a result dict. Raises GateFailure or ClusterError."""
        self.start()
        if not self.check_mode and self.cluster.get('v1', 'Namespace', self.namespace) is None:
            self.cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': self.namespace}})
        links.prove_binder(self)
        nodes = [n for n in self.cluster.list('v1', 'Node') if kai_gpu.node_gpus(n) > 0]
        if not nodes:
            raise GateFailure('gpu_pod', 'no node offers %s: fake-gpu-operator has not given the node its GPUs '
                              '(kubectl get nodes -o custom-columns=NAME:.metadata.name,GPUS:.status.allocatable)'
                              % kai_gpu.GPU_RESOURCE)
        digest = links.current_fingerprint(self, nodes)
        recorded, proven_at = links.recorded_fingerprint(self)
        if recorded == digest and not self.reprove:
            links.reuse_recorded_proof(self, proven_at)
            return self.result(probed=False)
        if self.check_mode:
            for link in LINKS[1:]:
                self.record_link(link, 'skipped', 'check mode creates no probe pod')
            return self.result(probed=False)

        # Every namespace's pods hold GPUs; one too deep to read (not the lab's) is named, not counted.
        pods, unreadable = readable.list_everywhere(self.cluster, 'v1', 'Pod')
        for namespace, name, why in unreadable:
            self.note('pod %s/%s is not counted among those holding GPUs: %s' % (namespace, name, why))
        free = free_gpus_by_node(nodes, pods)
        best = max(free.values()) if free else 0
        names = []
        try:
            if best >= 1:
                links.prove_gpu_and_fraction(self, best, names)
            else:
                links.prove_busy_scheduling(self, free, names)
            links.prove_image(self)
        finally:
            self.cleanup(names)
        if best >= 1:
            links.record_fingerprint(self, digest)
        return self.result(probed=True)

    def result(self, probed):
        return {'links': self.links, 'probed': probed, 'elapsed': self.elapsed(), 'progress': self.progress,
                'table': table(self.links)}
