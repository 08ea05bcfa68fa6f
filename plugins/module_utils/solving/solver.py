# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Carry out one lab step as a perfect learner would, and check KAI's decision.

The step itself (steps/<id>.py) says what to write, create and expect; this
runner does the plumbing: learner files written with a backup of what they
replace, objects applied or deleted (dry run in check mode), bounded waits
with progress, and a timeline of what happened. A step whose outcome is
already in place is verified, not redone, so solving a finished lab changes
nothing.

Layer: solving; may use the cluster client, the KAI domain, the learner's files, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import parse as learner_parse
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import read as learner_read
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import backup as learner_backup
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import ClusterError
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import admission_denial
from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.lab_view import LabView
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.wait import WaitTimeout, get_waiter


class StepFailed(Exception):
    """A step's assertion failed; carries what was expected, seen and why."""

    def __init__(self, step, expected, observed, cause):
        self.step_id = step.id
        self.expected = expected
        self.observed = observed
        self.cause = cause
        super(StepFailed, self).__init__(
            'step %s (%d): expected %s; observed %s; likely cause: %s'
            % (step.id, step.number, expected, json.dumps(observed, sort_keys=True), cause))


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
        self.waiter = get_waiter(check_mode)
        self.timeline = []
        self.files_written = []
        self.backups = []
        self.changed = False
        self.step = None
        self._start = time.monotonic()
        self._progress = progress

    def run(self, step_id):
        self.step = steps.step(step_id)
        evidence = self.step.solve(self)
        return {
            'step': step_id,
            'number': self.step.number,
            'changed': self.changed,
            'files': self.files_written,
            'backups': self.backups,
            'timeline': self.timeline,
            'duration': round(time.monotonic() - self._start, 2),
            'evidence': evidence,
        }

    def clear(self):
        """Remove the objects of the earlier steps this step clears (Step.clears), each by that step's remove."""
        for step_id in self.step.clears:
            steps.step(step_id).remove(self)

    def needed(self):
        """The earlier steps whose objects this step works on (Step.needs)."""
        return [steps.step(step_id) for step_id in self.step.needs]

    def note(self, line):
        self.timeline.append('%6.2fs %s' % (time.monotonic() - self._start, line))
        if self._progress:
            self._progress(line)

    def not_as_expected(self, expected, observed, cause):
        """KAI's decision is not what the step expects: raise StepFailed.

        Not in check mode: nothing was created there, so there is no decision
        to judge (the waiter did not wait for one either).
        """
        if not self.check_mode:
            raise StepFailed(self.step, expected, observed, cause)

    # ------------------------------------------------------------ learner files
    def write_file(self, name, content):
        """Write a learner file; an existing different file is kept as a backup.

        Through learner_backup: a unique backup created exclusively (a link is
        kept as the link), then mkstemp + rename. A directory or FIFO where
        the file belongs fails the step naming it; nothing is lost.
        """
        try:
            changed, backup = learner_backup.replace_learner_file(self.workdir, name, content,
                                                                  check_mode=self.check_mode)
        except learner_read.LearnerFileError as exc:
            raise StepFailed(self.step, 'to write %s in %s' % (name, self.workdir), {'file': name},
                             exc.problem['en'])
        if not changed:
            return False
        self.changed = True
        if self.check_mode:
            return True
        if backup:
            self.backups.append(backup)
        path = os.path.join(self.workdir, name)
        self.files_written.append(path)
        self.note('wrote %s' % path)
        return True

    def read_file(self, name):
        """A learner file's text, or None when it is missing or cannot be used (a link, a FIFO, too large)."""
        return learner_parse.read_text(self.workdir, name).content

    # ------------------------------------------------------------ cluster writes
    def apply(self, obj):
        try:
            # Created when absent (the create right alone, as a learner's kubectl create): the solver runs with a
            # learner's own account too (molecule/learner).
            changed = self.cluster.apply(obj, dry_run=self.check_mode, create_absent=True)[0]
        except ClusterError as exc:
            denial = admission_denial(exc)
            raise StepFailed(self.step, 'the API server to accept %s %s' % (obj['kind'], obj['metadata']['name']),
                             {'error': str(exc)},
                             'KAI admission webhook denied it: %s' % denial if denial else
                             ('KAI admission webhook not reachable' if 'failed calling webhook' in str(exc) else str(exc)))
        if changed:
            self.changed = True
            self.note('applied %s %s' % (obj['kind'], obj['metadata']['name']))
        return changed

    def patch(self, api_version, kind, name, patch, what):
        self.cluster.patch(api_version, kind, name, patch, dry_run=self.check_mode)
        self.changed = True
        self.note('patched %s' % what)

    def delete(self, api_version, kind, name):
        if self.cluster.get(api_version, kind, name, self.namespace) is None:
            return False
        self.cluster.delete(api_version, kind, name, self.namespace, dry_run=self.check_mode)
        self.changed = True
        self.note('deleted %s %s' % (kind, name))
        return True

    # ------------------------------------------------------------ waits
    def wait(self, what, probe, done, describe, expected, cause, timeout=None):
        """Wait (bounded) for KAI's decision; StepFailed naming what was last seen."""
        try:
            return self.waiter.wait(what, probe, done, timeout or self.timeout, describe=describe, progress=self.note)
        except WaitTimeout as exc:
            raise StepFailed(self.step, expected, {'last': exc.last_seen}, cause)

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

        try:
            return self.waiter.wait(what, probe, done, timeout or self.timeout, describe=describe, progress=self.note)
        except WaitTimeout as exc:
            first_bad = sorted(n for n, p in probe().items() if p is None or kai.pod_phase(p) != want)
            raise StepFailed(self.step, '%s (%s)' % (what, want), [self.view.pod_state(n) for n in names],
                             self.view.diagnose(first_bad[0]) if first_bad and want != 'gone' else str(exc))

    def wait_podgroup(self, pod_name, predicate, what):
        """Wait until the pod's PodGroup satisfies predicate; return it."""
        def probe():
            pod = self.view.pod(pod_name)
            return self.view.podgroup_of(pod) if pod else None

        def describe(podgroup):
            return 'reasons %s' % [r['reason'] for r in kai.scheduling_reasons(podgroup)] if podgroup else 'no PodGroup yet'

        try:
            return self.waiter.wait(what, probe, lambda pg: pg is not None and predicate(pg), self.timeout,
                                    describe=describe, progress=self.note)
        except WaitTimeout:
            raise StepFailed(self.step, what, self.view.pod_state(pod_name), self.view.diagnose(pod_name))
