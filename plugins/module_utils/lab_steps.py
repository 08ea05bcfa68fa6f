# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Carry out one lab step as a perfect learner would, and check KAI's decision.

Each step writes the learner's file(s) in the workdir, creates what the lab
text asks, waits (bounded) for KAI to decide, and asserts the decision from
PodGroups, Events and GPU allocation. A step whose outcome is already in
place is verified, not redone, so solving a finished lab changes nothing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import time

try:
    import yaml
except ImportError:  # reported by common.require_libraries before any use
    yaml = None

from ansible_collections.gsb.kai_lab.plugins.module_utils import kai
from ansible_collections.gsb.kai_lab.plugins.module_utils import lab_catalog as cat
from ansible_collections.gsb.kai_lab.plugins.module_utils.k8s import ClusterError, admission_denial
from ansible_collections.gsb.kai_lab.plugins.module_utils.wait import WaitTimeout, wait_until

QUEUE_API = '%s/%s' % (kai.QUEUE_GROUP, kai.QUEUE_VERSION)
PODGROUP_API = '%s/%s' % (kai.QUEUE_GROUP, kai.PODGROUP_VERSION)


class StepFailed(Exception):
    """A step's assertion failed; carries what was expected, seen and why."""

    def __init__(self, step_id, expected, observed, cause):
        self.step_id = step_id
        self.expected = expected
        self.observed = observed
        self.cause = cause
        super(StepFailed, self).__init__(
            'step %s (%d): expected %s; observed %s; likely cause: %s'
            % (step_id, cat.step(step_id)['number'], expected, json.dumps(observed, sort_keys=True), cause))


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
        return self.cluster.get(PODGROUP_API, 'PodGroup', name, self.namespace)

    def podgroup_of(self, pod):
        name = kai.podgroup_name_of_pod(pod)
        return self.podgroup(name) if name else None

    def queue(self, name):
        return self.cluster.get(QUEUE_API, 'Queue', name)

    def configmaps(self, pod):
        found = {}
        for name in kai.shared_gpu_configmap_names(pod):
            cm = self.cluster.get('v1', 'ConfigMap', name, kai.meta(pod).get('namespace'))
            if cm:
                found[name] = cm
        return found

    def visible_devices(self, pod):
        return kai.resolve_env(pod, self.configmaps(pod))

    def report(self):
        """The three values of step 8, computed from the cluster now."""
        fr1 = self.pod(cat.FRACTION_PODS[0])
        return cat.report(self.pods(), self.namespace, self.configmaps(fr1) if fr1 else {})

    def pod_state(self, name):
        """A short description of a pod for messages and evidence."""
        pod = self.pod(name)
        if pod is None:
            return {'name': name, 'exists': False}
        state = {'name': name, 'exists': True, 'phase': kai.pod_phase(pod), 'node': kai.pod_node(pod),
                 'scheduler': kai.scheduler_name(pod), 'podgroup': kai.podgroup_name_of_pod(pod)}
        podgroup = self.podgroup_of(pod)
        if podgroup:
            state['reasons'] = [r['reason'] for r in kai.scheduling_reasons(podgroup)]
        events = kai.events_for(self.events(), 'Pod', name)
        state['last_events'] = ['%s %s: %s' % (e.get('type'), e.get('reason'), (e.get('message') or '')[:160])
                                for e in events[-3:]]
        return state

    def diagnose(self, name):
        """The likely cause of a pod not reaching want, in words a learner can act on."""
        pod = self.pod(name)
        if pod is None:
            return 'pod %s does not exist (never created, rejected by admission, or evicted)' % name
        if kai.scheduler_name(pod) != kai.SCHEDULER_NAME:
            return ('pod scheduled by %s, not KAI: spec.schedulerName must be kai-scheduler'
                    % kai.scheduler_name(pod))
        if not kai.podgroup_name_of_pod(pod):
            return 'no PodGroup annotation: KAI\'s pod-grouper is not running or not reaching the API server'
        podgroup = self.podgroup_of(pod)
        if podgroup is None:
            return 'PodGroup %s is missing: KAI\'s pod-grouper is not running' % kai.podgroup_name_of_pod(pod)
        reasons = kai.scheduling_reasons(podgroup)
        if kai.pod_phase(pod) == 'Pending' and reasons:
            return 'KAI keeps it Pending: %s' % '; '.join('%s: %s' % (r['reason'], r['message'][:200]) for r in reasons)
        events = kai.events_for(self.events(), 'Pod', name)
        reasons_seen = [e.get('reason') for e in events]
        if 'Scheduled' in reasons_seen and not kai.pod_node(pod):
            return 'KAI scheduled it but nothing bound it: KAI\'s binder is not running'
        if kai.pod_phase(pod) == 'Pending' and not kai.pod_node(pod):
            return 'no decision from KAI yet: the KAI scheduler is not running, or the queue %s does not exist' \
                % kai.pod_queue(pod)
        return 'pod is %s on %s' % (kai.pod_phase(pod), kai.pod_node(pod))


class StepRunner(object):
    """Does the lab's steps against one cluster."""

    def __init__(self, cluster, namespace, workdir, kai_version, timeout=60, check_mode=False, progress=None):
        self.cluster = cluster
        self.view = LabView(cluster, namespace)
        self.namespace = namespace
        self.workdir = workdir
        self.kai_version = kai_version
        self.timeout = timeout
        self.check_mode = check_mode
        self.timeline = []
        self.files_written = []
        self.backups = []
        self.changed = False
        self._start = time.monotonic()
        self._progress = progress

    # ------------------------------------------------------------ helpers
    def note(self, line):
        self.timeline.append('%6.2fs %s' % (time.monotonic() - self._start, line))
        if self._progress:
            self._progress(line)

    def path(self, name):
        return os.path.join(self.workdir, name)

    def write_file(self, name, content):
        """Write a learner file; an existing different file is kept as a backup."""
        path = self.path(name)
        if os.path.exists(path):
            with open(path) as handle:
                if handle.read() == content:
                    return False
        self.changed = True
        if self.check_mode:
            return True
        if not os.path.isdir(self.workdir):
            os.makedirs(self.workdir, 0o700)
        if os.path.exists(path):
            backup = '%s.bak-%s' % (path, time.strftime('%Y%m%d%H%M%S'))
            shutil.copy2(path, backup)
            self.backups.append(backup)
        with open(path + '.tmp', 'w') as handle:
            handle.write(content)
        os.rename(path + '.tmp', path)
        self.files_written.append(path)
        self.note('wrote %s' % path)
        return True

    def read_file(self, name):
        try:
            with open(self.path(name)) as handle:
                return handle.read()
        except (IOError, OSError):
            return None

    def apply(self, obj):
        try:
            changed = self.cluster.apply(obj, dry_run=self.check_mode)[0]
        except ClusterError as exc:
            denial = admission_denial(exc)
            raise StepFailed(self.current, 'the API server to accept %s %s' % (obj['kind'], obj['metadata']['name']),
                             {'error': str(exc)},
                             'KAI admission webhook denied it: %s' % denial if denial else
                             ('KAI admission webhook not reachable' if 'failed calling webhook' in str(exc) else str(exc)))
        if changed:
            self.changed = True
            self.note('applied %s %s' % (obj['kind'], obj['metadata']['name']))
        return changed

    def delete(self, api_version, kind, name):
        if self.cluster.get(api_version, kind, name, self.namespace) is None:
            return False
        self.cluster.delete(api_version, kind, name, self.namespace, dry_run=self.check_mode)
        self.changed = True
        self.note('deleted %s %s' % (kind, name))
        return True

    def wait_pods(self, names, want, what, timeout=None):
        """Wait until every named pod is in phase want ('Running', 'Pending' or 'gone')."""
        def probe():
            return dict((name, self.view.pod(name)) for name in names)

        def done(pods):
            if want == 'gone':
                return all(p is None for p in pods.values())
            return all(p is not None and kai.pod_phase(p) == want for p in pods.values())

        def describe(pods):
            return ', '.join('%s=%s' % (n, kai.pod_phase(p) if p else 'absent') for n, p in sorted(pods.items()))

        if self.check_mode:
            return probe()
        try:
            return wait_until(what, probe, done, timeout or self.timeout, describe=describe, progress=self.note)
        except WaitTimeout as exc:
            first_bad = sorted(n for n, p in probe().items() if p is None or kai.pod_phase(p) != want)
            raise StepFailed(self.current, '%s (%s)' % (what, want),
                             [self.view.pod_state(n) for n in names],
                             self.view.diagnose(first_bad[0]) if first_bad and want != 'gone' else str(exc))

    def wait_podgroup(self, pod_name, predicate, what):
        """Wait until the pod's PodGroup satisfies predicate; return it."""
        def probe():
            pod = self.view.pod(pod_name)
            return self.view.podgroup_of(pod) if pod else None

        if self.check_mode:
            return probe()
        try:
            return wait_until(what, probe, lambda pg: pg is not None and predicate(pg), self.timeout,
                              describe=lambda pg: ('reasons %s' % [r['reason'] for r in kai.scheduling_reasons(pg)])
                              if pg else 'no PodGroup yet', progress=self.note)
        except WaitTimeout:
            raise StepFailed(self.current, what, self.view.pod_state(pod_name), self.view.diagnose(pod_name))

    # ------------------------------------------------------------ steps
    def run(self, step_id):
        self.current = step_id
        getattr(self, 'step_' + step_id)()
        return {
            'step': step_id,
            'number': cat.step(step_id)['number'],
            'changed': self.changed,
            'files': self.files_written,
            'backups': self.backups,
            'timeline': self.timeline,
            'duration': round(time.monotonic() - self._start, 2),
            'evidence': self.evidence,
        }

    def step_queues(self):
        queues = cat.lab_queues()
        self.write_file(cat.FILES['queues'], yaml.safe_dump_all(queues, sort_keys=False))
        for queue in queues:
            live = self.view.queue(queue['metadata']['name'])
            if live is None or kai.queue_summary(live) != kai.queue_summary(queue):
                self.apply(queue)
        seen = {}
        for queue in queues:
            live = self.view.queue(queue['metadata']['name'])
            seen[queue['metadata']['name']] = kai.queue_summary(live) if live else None
        if not self.check_mode:
            for name, want in cat.QUEUES.items():
                got = seen.get(name)
                if not got or got['parent'] != want['parent'] or got['gpu']['quota'] != want['gpu_quota'] \
                        or got['gpu']['limit'] != want['gpu_limit']:
                    raise StepFailed('queues', 'queue %s as in queues.yaml' % name, got,
                                     'the Queue CRD rejected or changed it')
        self.evidence = {'queues': seen}

    def step_podgroup(self):
        pod = cat.p1(self.namespace)
        self.write_file(cat.FILES['p1'], yaml.safe_dump(pod, sort_keys=False))
        if self.view.pod(cat.P1) is None:
            self.apply(pod)
        self.wait_pods([cat.P1], 'Running', 'p1 to run')
        live = self.view.pod(cat.P1)
        name = kai.podgroup_name_of_pod(live) if live else None
        if not self.check_mode:
            if kai.scheduler_name(live) != kai.SCHEDULER_NAME:
                raise StepFailed('podgroup', 'p1 scheduled by kai-scheduler', self.view.pod_state(cat.P1),
                                 'pod scheduled by default-scheduler')
            if not name or self.view.podgroup(name) is None:
                raise StepFailed('podgroup', 'a PodGroup for p1', self.view.pod_state(cat.P1),
                                 self.view.diagnose(cat.P1))
        if name:
            self.write_file(cat.FILES['podgroup'], name + '\n')
        self.evidence = {'pod': self.view.pod_state(cat.P1), 'podgroup': name}

    def step_nolimit(self):
        recorded = self.read_file(cat.FILES['nolimit'])
        if recorded and kai.REASON_OVER_LIMIT in recorded and self.view.pod(cat.NL1) is not None:
            # Already done: nl-1 has moved on (step 4), the record stays.
            self.evidence = {'recorded': recorded.strip(), 'pod': self.view.pod_state(cat.NL1)}
            return
        self.apply(cat.nolimit_queue())
        if self.view.pod(cat.NL1) is None:
            self.apply(cat.nl1(self.namespace))
        # Capture the reason while nl-1 is Pending: KAI v0.17+ clears it once scheduled.
        podgroup = self.wait_podgroup(cat.NL1, lambda pg: kai.has_reason(pg, kai.REASON_OVER_LIMIT),
                                      'nl-1\'s PodGroup to carry the OverLimit reason')
        pod = self.view.pod(cat.NL1)
        if not self.check_mode and kai.pod_phase(pod) != 'Pending':
            raise StepFailed('nolimit', 'nl-1 Pending', self.view.pod_state(cat.NL1),
                             'the nolimit queue has a GPU limit other than unset/0')
        text = kai.condition_text(podgroup) if podgroup else None
        if text:
            self.write_file(cat.FILES['nolimit'], text.strip() + '\n')
        self.evidence = {'pod': self.view.pod_state(cat.NL1),
                         'reasons': kai.scheduling_reasons(podgroup) if podgroup else []}

    def step_limit_fix(self):
        queue = self.view.queue(cat.NOLIMIT_QUEUE['name'])
        if queue is None and self.check_mode:
            # Step 3 would have created it; the patch would follow.
            self.changed = True
            self.evidence = {}
            return
        if queue is None:
            raise StepFailed('limit_fix', 'queue nolimit from step 3', None, 'step 3 (nolimit) has not been done')
        if kai.queue_resource(queue)['limit'] != kai.UNLIMITED:
            # Only spec.resources.gpu.limit changes, as `kubectl patch` would.
            self.cluster.patch(QUEUE_API, 'Queue', cat.NOLIMIT_QUEUE['name'],
                               {'spec': {'resources': {'gpu': {'limit': kai.UNLIMITED}}}}, dry_run=self.check_mode)
            self.changed = True
            self.note('patched queue nolimit gpu limit to -1')
        self.wait_pods([cat.NL1], 'Running', 'nl-1 to run after the limit fix')
        self.evidence = {'queue': kai.queue_summary(self.view.queue(cat.NOLIMIT_QUEUE['name'])),
                         'pod': self.view.pod_state(cat.NL1)}

    def gang_pod_names(self):
        if cat.job_gang_supported(self.kai_version):
            return sorted(kai.name_of(p) for p in self.view.pods(self.namespace, label_selector='job-name=%s' % cat.GANG))
        return ['%s-%d' % (cat.GANG, i) for i in range(cat.GANG_SIZE)]

    def step_gang(self):
        recorded = self.read_file(cat.FILES['gang'])
        if recorded and kai.GANG_MESSAGE_MARK in recorded and self.gang_happened_here():
            self.evidence = {'recorded': recorded.strip()}
            return
        if cat.job_gang_supported(self.kai_version):
            self.apply(cat.gang_job(self.namespace))
        else:
            self.note('KAI %s has no Job gang grouping (needs >= v%d.%d.%d): using an explicit PodGroup'
                      % ((self.kai_version,) + cat.JOB_GANG_MIN_VERSION))
            self.apply(cat.gang_podgroup(self.namespace))
            for pod in cat.gang_pods(self.namespace):
                if self.view.pod(pod['metadata']['name']) is None:
                    self.apply(pod)
        if self.check_mode:
            self.evidence = {}
            return

        def probe():
            names = self.gang_pod_names()
            pods = [self.view.pod(n) for n in names]
            podgroup = self.view.podgroup_of(pods[0]) if pods and pods[0] else None
            return names, pods, podgroup

        def done(value):
            names, pods, podgroup = value
            return len(names) == cat.GANG_SIZE and podgroup is not None and \
                any(kai.GANG_MESSAGE_MARK in r['message'] for r in kai.scheduling_reasons(podgroup))

        def describe_gang(value):
            reasons = [r['reason'] for r in kai.scheduling_reasons(value[2])] if value[2] else 'no PodGroup'
            return '%d pods, reasons %s' % (len(value[0]), reasons)

        try:
            names, pods, podgroup = wait_until(
                'the gang\'s PodGroup to carry the gang reason', probe, done, self.timeout, progress=self.note,
                describe=describe_gang)
        except WaitTimeout as exc:
            raise StepFailed('gang', 'three gang pods Pending with the gang reason', {'last': exc.last_seen},
                             'the pods are not in one PodGroup of minMember 3 (missing kai.scheduler/batch-min-member '
                             'on the Job, or KAI older than v0.14.7) or KAI is not running')
        running = [kai.name_of(p) for p in pods if kai.pod_phase(p) != 'Pending' or kai.pod_node(p)]
        if running:
            raise StepFailed('gang', 'all three gang pods Pending', [self.view.pod_state(n) for n in names],
                             'some gang pods were placed: %s' % ', '.join(running))
        text = kai.condition_text(podgroup)
        self.write_file(cat.FILES['gang'], text.strip() + '\n')
        self.evidence = {'podgroup': kai.podgroup_summary(podgroup), 'pods': names}

    def gang_happened_here(self):
        """Did this cluster see the gang: its events, or a later step's pods?"""
        if any(kai.GANG_MESSAGE_MARK in (e.get('message') or '') for e in self.view.events()):
            return True
        return any(self.view.pod(name) is not None for name in cat.TRAIN_PODS + (cat.BUILD_POD,))

    def step_preempt(self):
        build = self.view.pod(cat.BUILD_POD)
        if build is not None and kai.pod_phase(build) == 'Running':
            self.evidence = {'pod': self.view.pod_state(cat.BUILD_POD), 'evicted': self.evicted_pods()}
            return
        # Remove the gang so its PodGroup no longer holds the queue.
        if cat.job_gang_supported(self.kai_version):
            self.delete('batch/v1', 'Job', cat.GANG)
        else:
            for i in range(cat.GANG_SIZE):
                self.delete('v1', 'Pod', '%s-%d' % (cat.GANG, i))
            self.delete(PODGROUP_API, 'PodGroup', cat.GANG)
        self.wait_pods(self.gang_pod_names(), 'gone', 'the gang pods to go')
        for pod in cat.train_pods(self.namespace):
            if self.view.pod(pod['metadata']['name']) is None:
                self.apply(pod)
        self.wait_pods(list(cat.TRAIN_PODS), 'Running', 'tr-1 and tr-2 to fill the GPUs')
        before = set(kai.name_of(p) for p in self.view.pods(self.namespace) if kai.pod_queue(p) == 'research')
        if build is None:
            self.apply(cat.build_pod(self.namespace))
        self.wait_pods([cat.BUILD_POD], 'Running', 'bd-1 to run by preempting a train pod')
        if self.check_mode:
            self.evidence = {}
            return
        after = set(kai.name_of(p) for p in self.view.pods(self.namespace) if kai.pod_queue(p) == 'research')
        gone = sorted(before - after)
        evicted = self.evicted_pods()
        if len(gone) != 1 or gone[0] not in evicted:
            raise StepFailed('preempt', 'exactly one train pod of queue research evicted by KAI',
                             {'gone': gone, 'evict_events_for': evicted},
                             'KAI preempted differently than the lab expects (check priority classes train/build)')
        self.evidence = {'pod': self.view.pod_state(cat.BUILD_POD), 'evicted': gone[0]}

    def evicted_pods(self):
        return [e['victim'] for e in kai.eviction_events(self.view.events()) if e['victim']]

    def step_fraction(self):
        if all(self.view.pod(n) is not None and kai.pod_phase(self.view.pod(n)) == 'Running'
               for n in cat.FRACTION_PODS):
            self.evidence = self.fraction_evidence()
            self.write_file(cat.FILES['fraction'], yaml.safe_dump_all(cat.fraction_pods(self.namespace), sort_keys=False))
            return
        # Free one GPU: delete a remaining train pod (one, newest first).
        remaining = [n for n in reversed(cat.TRAIN_PODS) if self.view.pod(n) is not None]
        free = cat.NODE_GPUS - kai.gpu_allocated(self.view.pods())
        if free < 1 and remaining:
            self.delete('v1', 'Pod', remaining[0])
            self.wait_pods([remaining[0]], 'gone', 'the train pod to go')
        pods = cat.fraction_pods(self.namespace)
        self.write_file(cat.FILES['fraction'], yaml.safe_dump_all(pods, sort_keys=False))
        for pod in pods:
            if self.view.pod(pod['metadata']['name']) is None:
                self.apply(pod)
        self.wait_pods(list(cat.FRACTION_PODS), 'Running', 'fr-1 and fr-2 to run on a shared GPU')
        if self.check_mode:
            self.evidence = {}
            return
        evidence = self.fraction_evidence()
        if len(set(evidence['groups'].values())) != 1 or None in evidence['groups'].values():
            raise StepFailed('fraction', 'fr-1 and fr-2 in one GPU group', evidence, 'KAI placed them on different GPUs')
        if evidence['reservation_pods'] != 1 or len(set(evidence['devices'].values())) != 1:
            raise StepFailed('fraction', 'one reservation pod whose GPU both pods see', evidence,
                             'fake GPU operator did not annotate the reservation pod, or its namespace differs from KAI\'s')
        self.evidence = evidence

    def fraction_evidence(self):
        pods = dict((n, self.view.pod(n)) for n in cat.FRACTION_PODS)
        reservations = self.view.pods(kai.RESERVATION_NAMESPACE)
        return {
            'groups': dict((n, kai.gpu_group(p)) for n, p in pods.items()),
            'devices': dict((n, self.view.visible_devices(p)) for n, p in pods.items()),
            'reservation_pods': len(reservations),
            'reserved_gpus': [kai.reserved_gpu(p) for p in reservations],
        }

    def step_report(self):
        report = self.view.report()
        self.write_file(cat.FILES['report'], json.dumps(report, indent=2, sort_keys=True) + '\n')
        self.evidence = {'report': report}
