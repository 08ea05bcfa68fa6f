# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The readiness gate's links, one function each, run in order by readiness.Gate.

Each link takes the gate (its cluster, probe namespace, clock and the links
proved so far) and either records what it proved with gate.record_link or
raises GateFailure naming what is broken:

- prove_binder: KAI's binder runs with --fake-gpu-nodes;
- prove_gpu_and_fraction: KAI binds a 1-GPU pod, then a gpu-fraction pod gets
  its annotated reservation pod and is bound (prove_busy_scheduling instead
  when every GPU is held);
- prove_image: the lab pods' image is on the node;
- reuse_recorded_proof: the fingerprint skip of a lab already proved.

Layer: the readiness gate; may use the cluster client, this host's processes, the KAI domain.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.host import process
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate import marker
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate.probes import (
    CPU_PROBE, FAKE_GPU_FLAG, FAKE_GPU_LABEL, FRACTION_PROBE, GPU_PROBE, PROBE_FRACTION, GateFailure,
    deployment_args, describe_pod, events_of, fingerprint, has_fake_gpu_nodes, is_running, node_has_image,
    pid_identities, probe_pod, reservation_of, waiting_reasons)


# ---------------------------------------------------------------- binder

def prove_binder(gate):
    """The binder's arguments (sim: its process; k3s: its Deployment) contain --fake-gpu-nodes."""
    if gate.binder_pid_file:
        pid = process.read_pid(gate.binder_pid_file)
        args = gate.read_cmdline(pid) if pid else None
        if args is None:
            raise GateFailure('binder', 'KAI\'s binder is not running (pid file %s: %s). Provision again '
                              '(ansible-playbook playbooks/provision.yml) or see its log next to the pid file.'
                              % (gate.binder_pid_file, 'pid %s is gone' % pid if pid else 'missing'))
        where = 'process %s' % pid
    else:
        deployment = gate.cluster.get('apps/v1', 'Deployment', gate.binder_deployment, gate.kai_namespace)
        if deployment is None:
            raise GateFailure('binder', 'KAI\'s binder Deployment %s/%s does not exist: KAI\'s operator has not '
                              'created it (kubectl -n %s get deployments,pods).'
                              % (gate.kai_namespace, gate.binder_deployment, gate.kai_namespace))
        args = deployment_args(deployment)
        where = 'Deployment %s/%s' % (gate.kai_namespace, gate.binder_deployment)
    if not has_fake_gpu_nodes(args):
        nodes = gate.cluster.list('v1', 'Node')
        labelled = [kai.name_of(n) for n in nodes if kai.labels(n).get(FAKE_GPU_LABEL) == 'true']
        raise GateFailure('binder', 'KAI\'s binder (%s) runs without %s, so it waits for real GPU devices and '
                          'GPU-fraction pods never bind. KAI\'s operator adds the flag only when a node is '
                          'labelled %s=true by fake-gpu-operator\'s status exporter; labelled nodes: %s. '
                          'Binder args: %s' % (where, FAKE_GPU_FLAG, FAKE_GPU_LABEL,
                                               ', '.join(labelled) or 'none', ' '.join(args)))
    gate.record_link('binder', 'passed', '%s runs with %s' % (where, FAKE_GPU_FLAG))


# ---------------------------------------------------------------- gpu_pod and fraction

def prove_gpu_and_fraction(gate, free, names):
    """KAI binds the 1-GPU probe, then the fraction probe next to its annotated reservation pod.

    One after the other: KAI's binder may hold the 1-GPU probe's binding
    while it waits (40 s) for a fraction's reservation pod to be annotated
    (the 1-GPU probe was bound after 41.3 s on the sim, KAI v0.12.0, and past
    the link's deadline once), which named "gpu_pod" for a broken "fraction".
    The 1-GPU probe stays while the fraction probe runs when two GPUs are
    free. names collects the probe pods created, for the cleanup.
    """
    gpu = probe_pod(GPU_PROBE, gate.namespace, gate.image, gpus=1)
    fraction = probe_pod(FRACTION_PROBE, gate.namespace, gate.image, fraction=PROBE_FRACTION)
    gate.create(gpu)
    names.append(GPU_PROBE)
    pod = wait_running(gate, 'gpu_pod', GPU_PROBE, 'KAI to schedule and bind the 1-GPU probe pod')
    gate.record_link('gpu_pod', 'passed', 'bound to %s by KAI' % kai.pod_node(pod))
    if free < 2:
        gate.delete(GPU_PROBE)
        gate.cleanup([GPU_PROBE], final=False)
    before = set(kai.name_of(r) for r in gate.cluster.list('v1', 'Pod', gate.reservation_namespace))
    gate.create(fraction)
    names.append(FRACTION_PROBE)
    pod, reservation = wait_fraction(gate, before, fraction)
    gate.record_link('fraction', 'passed', 'reservation pod %s/%s holds %s; fraction pod bound to %s'
                     % (gate.reservation_namespace, kai.name_of(reservation), kai_gpu.reserved_gpu(reservation),
                        kai.pod_node(pod)))


def prove_busy_scheduling(gate, free, names):
    """Every GPU is held (a solved lab): a GPU probe would wait or evict the
    learner's pods, so a CPU pod proves scheduling and the image."""
    reason = 'every GPU is held by the lab\'s pods (%s); not probed so nothing of the learner\'s is disturbed' \
        % ', '.join('%s: %s free' % item for item in sorted(free.items()))
    gate.create(probe_pod(CPU_PROBE, gate.namespace, gate.image))
    names.append(CPU_PROBE)
    pod = wait_running(gate, 'gpu_pod', CPU_PROBE, 'KAI to schedule and bind a CPU probe pod')
    gate.record_link('gpu_pod', 'skipped', reason + '; a CPU pod was bound to %s by KAI instead' % kai.pod_node(pod))
    gate.record_link('fraction', 'skipped', reason)


def wait_running(gate, link, name, what):
    """The probe pod once KAI bound it and it runs; a pod bound but not pulling its image breaks 'image'."""
    def probe():
        return gate.pod(name)

    def describe(pod):
        return describe_pod(pod, gate.events())

    try:
        return gate.wait(link, what, probe, is_running, describe)
    except GateFailure as failure:
        pod = probe()
        pulling = [r for r in waiting_reasons(pod) if 'Image' in r or 'Pull' in r]
        if kai.pod_node(pod) and pulling:
            raise GateFailure('image', 'KAI bound probe pod %s, but its image %s is not on the node and cannot '
                              'be pulled (%s). Online: check the VM\'s access to the registry; airgap: add the '
                              'image\'s archive to <k3s_airgap_dir>/images/. %s'
                              % (name, gate.image, '; '.join(pulling), failure))
        raise


# A fraction probe bound into a GPU group that has had no live reservation pod
# for this long lost a race in KAI's binder: its reservation sync, run for
# another pod's bind request, found no fraction pod in the group yet and
# deleted the group's reservation pod while the probe was being bound ("Did
# not find fraction pod for gpu group, deleting reservation pod", seen on the
# sim with v0.12.0). The probe is created again, at most FRACTION_ATTEMPTS times.
ORPHANED_GROUP_GRACE = 5.0
FRACTION_ATTEMPTS = 3


class _OrphanedProbe(Exception):
    def __init__(self, group):
        super(_OrphanedProbe, self).__init__(group)
        self.group = group


class _FractionWatch(object):
    """One look at the fraction probe and its reservation pod, remembering an unannotated one.

    The binder creates the reservation pod first and labels the fraction pod
    with its GPU group only when it binds it, so the probe's reservation pod
    is the one that appeared in the reservation namespace after the probe was
    created (or the one of its group once it has one).
    """

    def __init__(self, gate, reservations_before):
        self.gate = gate
        self.before = reservations_before
        self.unannotated = None
        self.gave_up = False
        self.orphaned_since = None

    def probe(self):
        gate = self.gate
        pod = gate.pod(FRACTION_PROBE)
        reservations = [r for r in gate.cluster.list('v1', 'Pod', gate.reservation_namespace)
                        if not kai.meta(r).get('deletionTimestamp')]
        reservation = reservation_of(pod, reservations) if pod else None
        self.check_orphaned(pod, reservation)
        if reservation is None:
            new = [r for r in reservations if kai.name_of(r) not in self.before]
            reservation = new[0] if new else None
        if reservation is not None:
            gate.probe_reservations.add(kai.name_of(reservation))
        if reservation is not None and not kai_gpu.reserved_gpu(reservation):
            self.unannotated = kai.name_of(reservation)
        if self.unannotated and pod is not None and self.binder_gave_up(pod):
            self.gave_up = True
            raise GateFailure('fraction', self.unannotated_message(
                'the binder gave up waiting for it (BindingError); ' + describe_pod(pod, gate.events())))
        return pod, reservation

    def check_orphaned(self, pod, reservation):
        group = kai_gpu.gpu_group(pod) if pod else None
        if not group or reservation is not None:
            self.orphaned_since = None
            return
        now = self.gate.clock()
        if self.orphaned_since is None:
            self.orphaned_since = now
        elif now - self.orphaned_since >= ORPHANED_GROUP_GRACE:
            raise _OrphanedProbe(group)

    @staticmethod
    def done(value):
        pod, reservation = value
        return is_running(pod) and reservation is not None and bool(kai_gpu.reserved_gpu(reservation))

    def describe(self, value):
        pod, reservation = value
        namespace = self.gate.reservation_namespace
        if pod is None:
            return 'the fraction probe pod does not exist'
        if reservation is None:
            return ('no reservation pod in namespace %s yet (the binder creates it once KAI allocated the '
                    'fraction): %s' % (namespace, describe_pod(pod, self.gate.events())))
        if not kai_gpu.reserved_gpu(reservation):
            return ('reservation pod %s/%s has no %s annotation yet' %
                    (namespace, kai.name_of(reservation), kai_gpu.RESERVATION_GPU_ANNOTATION))
        return 'reservation pod annotated %s; fraction pod: %s' % (
            kai_gpu.reserved_gpu(reservation), describe_pod(pod, self.gate.events()))

    def unannotated_message(self, detail):
        namespace = self.gate.reservation_namespace
        return ('KAI\'s reservation pod %s/%s never got the %s annotation, so the fraction pod cannot bind: '
                'fake-gpu-operator (its status-updater; on the sim its process) writes it only for reservation '
                'pods in its resourceReservationNamespace, which must be %s. %s'
                % (namespace, self.unannotated, kai_gpu.RESERVATION_GPU_ANNOTATION, namespace, detail))

    def binder_gave_up(self, pod):
        for event in events_of(pod, self.gate.events()):
            if event.get('reason') == 'BindingError' and 'reservation pod' in (event.get('message') or ''):
                return True
        return False


def wait_fraction(gate, reservations_before, fraction):
    """(fraction pod, reservation pod) once the probe is bound next to an annotated reservation pod.

    fraction is the probe's manifest, created again when the probe was bound
    into a GPU group whose reservation pod was being removed.
    """
    orphaned = []
    while True:
        watch = _FractionWatch(gate, reservations_before)
        try:
            return gate.wait('fraction', 'the gpu-fraction "%s" probe pod to be bound next to its reservation pod'
                             % PROBE_FRACTION, watch.probe, watch.done, watch.describe)
        except _OrphanedProbe as orphan:
            orphaned.append(orphan.group)
        except GateFailure as failure:
            if watch.unannotated and not watch.gave_up:
                raise GateFailure('fraction', watch.unannotated_message(str(failure)))
            raise
        if len(orphaned) >= FRACTION_ATTEMPTS:
            raise GateFailure('fraction', 'KAI bound the fraction probe %d times into a GPU group whose reservation '
                              'pod was gone (groups %s): the binder deleted each group\'s reservation pod as it '
                              'bound the probe. Its log names them ("deleting reservation pod").'
                              % (len(orphaned), ', '.join(orphaned)))
        gate.note('the fraction probe was bound into GPU group %s, whose reservation pod the binder deleted as it '
                  'bound it (a race in KAI\'s binder); creating the probe again' % orphaned[-1])
        reservations_before = recreate_fraction_probe(gate, fraction, orphaned[-1])


def recreate_fraction_probe(gate, fraction, group):
    """Delete the probe, wait until it and the group's reservation pods are gone, create it again;
    returns the reservation pods there before the new probe."""
    gate.delete(FRACTION_PROBE)

    def left():
        pods = [FRACTION_PROBE] if gate.pod(FRACTION_PROBE) is not None else []
        return pods + [kai.name_of(r) for r in gate.cluster.list('v1', 'Pod', gate.reservation_namespace)
                       if kai_gpu.gpu_group(r) == group]

    gate.wait('fraction', 'the orphaned fraction probe and GPU group %s to be gone' % group, left,
              lambda names: not names, lambda names: 'still there: %s' % ', '.join(names))
    before = set(kai.name_of(r) for r in gate.cluster.list('v1', 'Pod', gate.reservation_namespace))
    gate.create(fraction)
    return before


# ---------------------------------------------------------------- image

def prove_image(gate):
    """The lab pods' image is in a node's status.images (not applicable on the sim's KWOK node)."""
    if not gate.pull_images:
        gate.record_link('image', 'not applicable', 'the sim\'s KWOK node runs no containers and pulls no image; '
                         '%s is checked on a VM' % gate.image)
        return
    nodes = gate.cluster.list('v1', 'Node')
    holders = [kai.name_of(n) for n in nodes if node_has_image(n, gate.image)]
    if not holders:
        raise GateFailure('image', 'the probe pods ran, yet no node lists image %s in its status.images'
                          % gate.image)
    gate.record_link('image', 'passed', '%s present on %s' % (gate.image, ', '.join(holders)))


# ---------------------------------------------------------------- fingerprint skip

def current_fingerprint(gate, nodes):
    """The digest of what a pass depends on now: components' processes or pods, the nodes' GPUs, the image."""
    pods = []
    for namespace in gate.identity_namespaces:
        pods.extend(gate.cluster.list('v1', 'Pod', namespace))
    return fingerprint(pid_identities(gate.identity_pid_files), pods, nodes, gate.image)


def recorded_fingerprint(gate):
    """(digest, proven_at) of the last full pass, from the marker file in the gate's state directory (gate/marker.py;
    None, None without one): nothing in the cluster, which others may write, is taken for it."""
    return marker.read(gate.state_dir)


def record_fingerprint(gate, digest):
    if gate.state_dir:
        marker.write(gate.state_dir, digest, time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()))


def reuse_recorded_proof(gate, proven_at):
    """Nothing changed since the last pass: the probed links stand as proven (the sim's image link still says why)."""
    unchanged = 'proved at %s; no component, node or image changed since' % proven_at
    for link in ('gpu_pod', 'fraction'):
        gate.record_link(link, 'proven', unchanged)
    if gate.pull_images:
        gate.record_link('image', 'proven', unchanged)
    else:
        prove_image(gate)
