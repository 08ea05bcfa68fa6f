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
GPUs) in a ConfigMap of the probe namespace after a full pass.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import time

from ansible_collections.gsb.kai_lab.plugins.module_utils import kai, kai_gpu, process
from ansible_collections.gsb.kai_lab.plugins.module_utils.k8s import ClusterError
from ansible_collections.gsb.kai_lab.plugins.module_utils.wait import WaitTimeout, wait_until

LINKS = ('binder', 'gpu_pod', 'fraction', 'image')
GPU_PROBE = 'kai-ready-gpu'
FRACTION_PROBE = 'kai-ready-fraction'
CPU_PROBE = 'kai-ready-cpu'
MARKER = 'kai-lab-ready'
PROBE_QUEUE = 'default-queue'
FAKE_GPU_FLAG = '--fake-gpu-nodes'
FAKE_GPU_LABEL = 'run.ai/fake.gpu'
PROBE_FRACTION = '0.5'


class GateFailure(Exception):
    """A broken link: which one and why, in words a person can act on."""

    def __init__(self, link, message):
        self.link = link
        super(GateFailure, self).__init__(message)


# ---------------------------------------------------------------- pure parts

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


def node_gpus(node):
    value = (((node or {}).get('status') or {}).get('allocatable') or {}).get(kai_gpu.GPU_RESOURCE)
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def free_gpus_by_node(nodes, pods):
    """Whole GPUs not held by a placed pod, per node."""
    free = dict((kai.name_of(node), node_gpus(node)) for node in nodes)
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


def _condition(pod, kind):
    for condition in ((pod or {}).get('status') or {}).get('conditions') or []:
        if condition.get('type') == kind:
            return condition
    return {}


def _waiting_reasons(pod):
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
    scheduled = _condition(pod, 'PodScheduled')
    if scheduled and scheduled.get('status') != 'True':
        message = (': ' + scheduled['message'][:200]) if scheduled.get('message') else ''
        parts.append('PodScheduled %s (%s%s)' % (scheduled.get('status'), scheduled.get('reason') or '', message))
    parts.extend(_waiting_reasons(pod))
    mine = events_of(pod, events)
    if mine:
        parts.append('events: ' + ' | '.join('%s %s' % (e.get('reason'), (e.get('message') or '')[:300]) for e in mine[-3:]))
    return ', '.join(parts)


def events_of(pod, events):
    """Events about this very pod (its uid): a probe pod's name is reused run after run."""
    uid = kai.meta(pod).get('uid')
    return [e for e in kai.events_for(list(events), 'Pod', kai.name_of(pod))
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
        'nodes': sorted('%s:%s:%s' % (kai.meta(n).get('uid'), node_gpus(n), kai.labels(n).get(FAKE_GPU_LABEL))
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


# ---------------------------------------------------------------- the gate

class Gate(object):
    """Runs the links against a cluster (the Cluster interface of k8s.py).

    binder_pid_file (sim) or binder_deployment (k3s) says where the binder's
    arguments are read. pull_images is False on the sim, whose node pulls
    nothing. identity_pid_files / identity_namespaces feed the fingerprint.
    """

    def __init__(self, cluster, probe_namespace, image, timeout, reservation_namespace=kai_gpu.RESERVATION_NAMESPACE,
                 kai_namespace='kai-scheduler', binder_pid_file=None, binder_deployment='binder',
                 pull_images=True, identity_pid_files=(), identity_namespaces=(), reprove=False,
                 check_mode=False, clock=time.monotonic, sleep=time.sleep, read_cmdline=None, interval=0.5):
        self.cluster = cluster
        self.namespace = probe_namespace
        self.image = image
        self.timeout = timeout
        self.reservation_namespace = reservation_namespace
        self.kai_namespace = kai_namespace
        self.binder_pid_file = binder_pid_file
        self.binder_deployment = binder_deployment
        self.pull_images = pull_images
        self.identity_pid_files = list(identity_pid_files)
        self.identity_namespaces = list(identity_namespaces)
        self.reprove = reprove
        self.check_mode = check_mode
        self.clock = clock
        self.sleep = sleep
        self.interval = interval
        self.read_cmdline = read_cmdline or process.process_cmdline
        self.started = None
        self._last_unannotated = None
        self._probe_reservations = set()
        self.links = []
        self.progress = []

    # ------------------------------------------------------------ helpers
    def elapsed(self):
        return round(self.clock() - self.started, 1)

    def remaining(self):
        return max(0.0, self.timeout - (self.clock() - self.started))

    def _link(self, link, status, detail):
        self.links.append({'link': link, 'status': status, 'detail': detail, 'elapsed': self.elapsed()})

    def _note(self, line):
        self.progress.append('%5.1f s  %s' % (self.elapsed(), line))

    def _wait(self, link, what, probe, done, describe):
        try:
            return wait_until(what, probe, done, self.remaining(), interval=self.interval, describe=describe,
                              progress=self._note, clock=self.clock, sleep=self.sleep)
        except WaitTimeout as exc:
            raise GateFailure(link, 'not within the gate\'s time limit of %s s (waited %s s) for %s; last seen: %s'
                              % (self.timeout, self.elapsed(), exc.what, exc.last_seen))

    def _events(self):
        try:
            return self.cluster.list('v1', 'Event', self.namespace)
        except ClusterError:
            return []

    # ------------------------------------------------------------ links
    def binder_link(self):
        if self.binder_pid_file:
            pid = process.read_pid(self.binder_pid_file)
            args = self.read_cmdline(pid) if pid else None
            if args is None:
                raise GateFailure('binder', 'KAI\'s binder is not running (pid file %s: %s). Provision again '
                                  '(ansible-playbook playbooks/provision.yml) or see its log next to the pid file.'
                                  % (self.binder_pid_file, 'pid %s is gone' % pid if pid else 'missing'))
            where = 'process %s' % pid
        else:
            deployment = self.cluster.get('apps/v1', 'Deployment', self.binder_deployment, self.kai_namespace)
            if deployment is None:
                raise GateFailure('binder', 'KAI\'s binder Deployment %s/%s does not exist: KAI\'s operator has not '
                                  'created it (kubectl -n %s get deployments,pods).'
                                  % (self.kai_namespace, self.binder_deployment, self.kai_namespace))
            args = deployment_args(deployment)
            where = 'Deployment %s/%s' % (self.kai_namespace, self.binder_deployment)
        if not has_fake_gpu_nodes(args):
            nodes = self.cluster.list('v1', 'Node')
            labelled = [kai.name_of(n) for n in nodes if kai.labels(n).get(FAKE_GPU_LABEL) == 'true']
            raise GateFailure('binder', 'KAI\'s binder (%s) runs without %s, so it waits for real GPU devices and '
                              'GPU-fraction pods never bind. KAI\'s operator adds the flag only when a node is '
                              'labelled %s=true by fake-gpu-operator\'s status exporter; labelled nodes: %s. '
                              'Binder args: %s' % (where, FAKE_GPU_FLAG, FAKE_GPU_LABEL,
                                                   ', '.join(labelled) or 'none', ' '.join(args)))
        self._link('binder', 'passed', '%s runs with %s' % (where, FAKE_GPU_FLAG))

    def _create(self, pod):
        try:
            self.cluster.apply(pod)
        except ClusterError as exc:
            raise GateFailure('gpu_pod' if kai_gpu.gpu_limit(pod) else 'fraction',
                              'cannot create probe pod %s/%s: %s (a webhook denial names KAI\'s admission)'
                              % (self.namespace, kai.name_of(pod), exc))

    def _pod(self, name):
        return self.cluster.get('v1', 'Pod', name, self.namespace)

    def wait_running(self, link, name, what):
        def probe():
            return self._pod(name)

        def describe(pod):
            return describe_pod(pod, self._events())

        try:
            return self._wait(link, what, probe, is_running, describe)
        except GateFailure as failure:
            pod = probe()
            pulling = [r for r in _waiting_reasons(pod) if 'Image' in r or 'Pull' in r]
            if kai.pod_node(pod) and pulling:
                raise GateFailure('image', 'KAI bound probe pod %s, but its image %s is not on the node and cannot '
                                  'be pulled (%s). Online: check the VM\'s access to the registry; airgap: add the '
                                  'image\'s archive to <k3s_airgap_dir>/images/. %s'
                                  % (name, self.image, '; '.join(pulling), failure))
            raise

    def wait_fraction(self, reservations_before):
        """Wait for the fraction probe to be bound next to an annotated reservation pod.

        The binder labels the fraction pod with its GPU group only when it
        binds it, so the probe's reservation pod is the one that appeared in
        the reservation namespace after the probe was created (or the one of
        its group once it has one).
        """
        seen = {'unannotated': None}

        def probe():
            pod = self._pod(FRACTION_PROBE)
            reservations = [r for r in self.cluster.list('v1', 'Pod', self.reservation_namespace)
                            if not kai.meta(r).get('deletionTimestamp')]
            reservation = reservation_of(pod, reservations) if pod else None
            if reservation is None:
                new = [r for r in reservations if kai.name_of(r) not in reservations_before]
                reservation = new[0] if new else None
            if reservation is not None:
                self._probe_reservations.add(kai.name_of(reservation))
            if reservation is not None and not kai_gpu.reserved_gpu(reservation):
                seen['unannotated'] = self._last_unannotated = kai.name_of(reservation)
            if seen['unannotated'] and pod is not None and self._binder_gave_up(pod):
                seen['gave_up'] = True
                raise GateFailure('fraction', self._unannotated_message(
                    'the binder gave up waiting for it (BindingError); ' + describe_pod(pod, self._events())))
            return pod, reservation

        def done(value):
            pod, reservation = value
            return is_running(pod) and reservation is not None and bool(kai_gpu.reserved_gpu(reservation))

        def describe(value):
            pod, reservation = value
            if pod is None:
                return 'the fraction probe pod does not exist'
            if reservation is None:
                return ('no reservation pod in namespace %s yet (the binder creates it once KAI allocated the '
                        'fraction): %s' % (self.reservation_namespace, describe_pod(pod, self._events())))
            if not kai_gpu.reserved_gpu(reservation):
                return ('reservation pod %s/%s has no %s annotation yet' %
                        (self.reservation_namespace, kai.name_of(reservation), kai_gpu.RESERVATION_GPU_ANNOTATION))
            return 'reservation pod annotated %s; fraction pod: %s' % (
                kai_gpu.reserved_gpu(reservation), describe_pod(pod, self._events()))

        try:
            return self._wait('fraction', 'the gpu-fraction "%s" probe pod to be bound next to its reservation pod'
                              % PROBE_FRACTION, probe, done, describe)
        except GateFailure as failure:
            if seen['unannotated'] and not seen.get('gave_up'):
                raise GateFailure('fraction', self._unannotated_message(str(failure)))
            raise

    def _unannotated_message(self, detail):
        return ('KAI\'s reservation pod %s/%s never got the %s annotation, so the fraction pod cannot bind: '
                'fake-gpu-operator (its status-updater; on the sim its process) writes it only for reservation '
                'pods in its resourceReservationNamespace, which must be %s. %s'
                % (self.reservation_namespace, self._last_unannotated, kai_gpu.RESERVATION_GPU_ANNOTATION,
                   self.reservation_namespace, detail))

    def _binder_gave_up(self, pod):
        for event in events_of(pod, self._events()):
            if event.get('reason') == 'BindingError' and 'reservation pod' in (event.get('message') or ''):
                return True
        return False

    # ------------------------------------------------------------ cleanup
    def _cleanup(self, names):
        """Delete the probe pods and wait (bounded) until they, and the reservation
        pod the binder made for the fraction probe, are gone: the lab's steps
        count every GPU."""
        deleted = [name for name in names if self._delete(name)]
        reservations = sorted(self._probe_reservations) if FRACTION_PROBE in names else []
        if not deleted and not reservations:
            return

        def probe():
            left = [name for name in deleted if self._pod(name) is not None]
            left += ['%s/%s' % (self.reservation_namespace, name) for name in reservations
                     if self.cluster.get('v1', 'Pod', name, self.reservation_namespace) is not None]
            return left

        try:
            wait_until('the probe pods to be deleted', probe, lambda left: not left,
                       max(10.0, min(30.0, self.remaining() + 10)),
                       interval=self.interval, clock=self.clock, sleep=self.sleep)
        except (WaitTimeout, ClusterError):
            self._note('probe pods still terminating: %s' % ', '.join(probe()))

    def _delete(self, name):
        try:
            return self.cluster.delete('v1', 'Pod', name, self.namespace)
        except ClusterError:
            return False

    # ------------------------------------------------------------ fingerprint
    def current_fingerprint(self, nodes):
        pods = []
        for namespace in self.identity_namespaces:
            pods.extend(self.cluster.list('v1', 'Pod', namespace))
        return fingerprint(pid_identities(self.identity_pid_files), pods, nodes, self.image)

    def recorded_fingerprint(self):
        marker = self.cluster.get('v1', 'ConfigMap', MARKER, self.namespace)
        return ((marker or {}).get('data') or {}).get('fingerprint'), ((marker or {}).get('data') or {}).get('proven_at')

    def record(self, digest):
        self.cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap',
                            'metadata': {'name': MARKER, 'namespace': self.namespace},
                            'data': {'fingerprint': digest,
                                     'proven_at': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}})

    # ------------------------------------------------------------ run
    def run(self):
        """Prove every link; returns a result dict. Raises GateFailure or ClusterError."""
        self.started = self.clock()
        if not self.check_mode and self.cluster.get('v1', 'Namespace', self.namespace) is None:
            self.cluster.apply({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': self.namespace}})
        self.binder_link()
        nodes = [n for n in self.cluster.list('v1', 'Node') if node_gpus(n) > 0]
        if not nodes:
            raise GateFailure('gpu_pod', 'no node offers %s: fake-gpu-operator has not given the node its GPUs '
                              '(kubectl get nodes -o custom-columns=NAME:.metadata.name,GPUS:.status.allocatable)'
                              % kai_gpu.GPU_RESOURCE)
        digest = self.current_fingerprint(nodes)
        recorded, proven_at = self.recorded_fingerprint()
        if recorded == digest and not self.reprove:
            for link in ('gpu_pod', 'fraction'):
                self._link(link, 'proven', 'proved at %s; no component, node or image changed since' % proven_at)
            if self.pull_images:
                self._link('image', 'proven', 'proved at %s; no component, node or image changed since' % proven_at)
            else:
                self._image_link()
            return self.result(probed=False)
        if self.check_mode:
            for link in LINKS[1:]:
                self._link(link, 'skipped', 'check mode creates no probe pod')
            return self.result(probed=False)

        free = free_gpus_by_node(nodes, self.cluster.list('v1', 'Pod'))
        best = max(free.values()) if free else 0
        names = []
        try:
            if best >= 1:
                self._gpu_links(best, names)
            else:
                self._busy_links(free, names)
            self._image_link()
        finally:
            self._cleanup(names)
        if best >= 1:
            self.record(digest)
        return self.result(probed=True)

    def _gpu_links(self, free, names):
        gpu = probe_pod(GPU_PROBE, self.namespace, self.image, gpus=1)
        fraction = probe_pod(FRACTION_PROBE, self.namespace, self.image, fraction=PROBE_FRACTION)
        # Together when two GPUs are free (one scheduling cycle), else one after the other.
        self._create(gpu)
        names.append(GPU_PROBE)
        before = set(kai.name_of(r) for r in self.cluster.list('v1', 'Pod', self.reservation_namespace))
        if free >= 2:
            self._create(fraction)
            names.append(FRACTION_PROBE)
        pod = self.wait_running('gpu_pod', GPU_PROBE, 'KAI to schedule and bind the 1-GPU probe pod')
        self._link('gpu_pod', 'passed', 'bound to %s by KAI' % kai.pod_node(pod))
        if free < 2:
            self._delete(GPU_PROBE)
            self._cleanup([GPU_PROBE])
            self._create(fraction)
            names.append(FRACTION_PROBE)
        pod, reservation = self.wait_fraction(before)
        self._link('fraction', 'passed', 'reservation pod %s/%s holds %s; fraction pod bound to %s'
                   % (self.reservation_namespace, kai.name_of(reservation), kai_gpu.reserved_gpu(reservation),
                      kai.pod_node(pod)))

    def _busy_links(self, free, names):
        # Every GPU is held (a solved lab): a GPU probe would wait or evict
        # the learner's pods, so a CPU pod proves scheduling and the image.
        reason = 'every GPU is held by the lab\'s pods (%s); not probed so nothing of the learner\'s is disturbed' \
            % ', '.join('%s: %s free' % item for item in sorted(free.items()))
        self._create(probe_pod(CPU_PROBE, self.namespace, self.image))
        names.append(CPU_PROBE)
        pod = self.wait_running('gpu_pod', CPU_PROBE, 'KAI to schedule and bind a CPU probe pod')
        self._link('gpu_pod', 'skipped', reason + '; a CPU pod was bound to %s by KAI instead' % kai.pod_node(pod))
        self._link('fraction', 'skipped', reason)

    def _image_link(self):
        if not self.pull_images:
            self._link('image', 'not applicable', 'the sim\'s KWOK node runs no containers and pulls no image; '
                       '%s is checked on a VM' % self.image)
            return
        nodes = self.cluster.list('v1', 'Node')
        holders = [kai.name_of(n) for n in nodes if node_has_image(n, self.image)]
        if not holders:
            raise GateFailure('image', 'the probe pods ran, yet no node lists image %s in its status.images'
                              % self.image)
        self._link('image', 'passed', '%s present on %s' % (self.image, ', '.join(holders)))

    def result(self, probed):
        return {'links': self.links, 'probed': probed, 'elapsed': self.elapsed(), 'progress': self.progress,
                'table': table(self.links)}


def table(links):
    rows = ['%-9s %-15s %6s  %s' % ('link', 'status', 'at', 'detail')]
    for link in links:
        rows.append('%-9s %-15s %5.1fs  %s' % (link['link'], link['status'], link['elapsed'], link['detail']))
    return rows
