# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One grade of the lab, from settings to grade.json: the one grading core.

The module kai_lab_grade (grade.yml) and the learner's command kai-lab
(grading/cli.py) both call grade(): the same cluster client, health probes,
snapshot, grader's record, checks, words and report files. Nothing here
imports Ansible, so the command runs over a Python that has only the
kubernetes client and PyYAML (the k3s VM's environment).

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import running as kai_running
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import kai_forms
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.output import junit_xml, kai_line, summary_table
from ansible_collections.gsb.kai_lab.plugins.module_utils.record.proofs import grade_with_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.grader import Grader, Snapshot, step_selection
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.protection import protection
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.health import deployments_ready, probe_urls
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import Cluster, ClusterError
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.read import LearnerFileError
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.workdir_fd import DEFAULT_WORKDIR, open_workdir
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.write import write_file

REPORT_FILES = ('grade.json', 'grade-junit.xml')

# The settings of one grade and their defaults: the module's argument spec
# gives every one of them; the command's config file (written by provision)
# gives the lab's.
DEFAULTS = {
    'namespace': 'kai-lab',
    'workdir': DEFAULT_WORKDIR,
    # Only a check: set and not the KAI that runs, the grade is refused (kai_running).
    'kai_version': None,
    # The sim's record of the KAI it started; unset: read through the API (k3s).
    'kai_record': None,
    'kubeconfig': None,
    'context': None,
    'request_timeout': 10,
    'lang': 'ko',
    'health_urls': {},
    'kai_namespace': 'kai-scheduler',
    'kai_deployments': [],
    'output_dir': None,
    'time_limit': 30,
    'record_path': None,
    # The learner's Kubernetes user (its ServiceAccount, system:serviceaccount:<ns>:<name>); unset: the learner
    # holds the lab's own kubeconfig. The grade asks the API server what it may write (grading/protection.py).
    'learner_identity': None,
    # The ValidatingAdmissionPolicies that keep that learner's writes to the lab's (roles/kai_lab).
    'learner_policies': [],
    # Those policies and their bindings as provision applies them (roles/kai_lab/templates/learner_access.yaml.j2):
    # the grade compares the cluster's with these (grading/admission.py).
    'learner_policy_objects': [],
}


class GradeError(Exception):
    """The grade could not be made or written; grade is what was graded, if anything."""

    def __init__(self, message, grade=None, environment=None):
        super(GradeError, self).__init__(message)
        self.message = message
        self.grade = grade
        # The environment check that stopped the grade (the KAI version could not be read).
        self.environment = environment


class Unreachable(object):
    """Stands in for a cluster whose kubeconfig cannot even be loaded."""

    def __init__(self, message):
        self.message = message

    def list(self, *args, **kwargs):
        raise ClusterError(self.message)

    get = list


def running_kai(settings, cluster):
    """The KAI that runs (the one place the grade reads it), checked against settings' kai_version.

    GradeError when it cannot be read (naming what was looked at), differs
    from kai_version, or has no profile.
    """
    try:
        running = kai_running.running_kai(cluster, settings['kai_record'], settings['kai_namespace'])
        kai_running.check_expected(settings['kai_version'], running)
        kai_profiles.profile_for(running.version)
    except kai_running.KaiVersionUnknown as exc:
        raise GradeError(str(exc), environment=[{'id': 'environment.kai_version', 'status': 'failed',
                                                 'looked_at': exc.looked_at}])
    except (kai_running.KaiVersionMismatch, kai_profiles.KaiProfileError) as exc:
        raise GradeError(str(exc))
    return running


def connect(settings):
    """The cluster client for a grade, or Unreachable saying why there is none.

    Reads share the grade's time budget: an API server that accepts
    connections but never answers must not use it all up. No retry: a
    stopped API server is said at once. light: the standard library's
    transport where the kubeconfig allows it (client/api.py), so a check does not
    pay the kubernetes client's import.
    """
    request_timeout = max(1, min(settings['request_timeout'], settings['time_limit'] // 6))
    try:
        return Cluster(settings['kubeconfig'], settings['context'], request_timeout, retries=0, light=True)
    except ClusterError as exc:
        return Unreachable(str(exc))


def complete(settings):
    """settings with every key of DEFAULTS (missing or None ones from DEFAULTS)."""
    full = dict(DEFAULTS)
    full.update((key, value) for key, value in (settings or {}).items() if value is not None)
    return full


def grade(settings, steps=None, write=True, cluster=None, reports=True):
    """Grade the lab; {'grade', 'table', 'files', 'cluster_error'}.

    steps: step ids, or None / ['all'] for every step. write=False (check
    mode) writes nothing: no record, no report file; reports=False keeps
    the record but writes no report file (kai-lab check STEP). cluster: a client to
    use instead of connecting (tests). Raises GradeError for an unknown step,
    a KAI version no profile covers, or report files that cannot be written
    (the grade made is on the error). cluster_error is the message when the
    cluster could not be read at all (the grade then has failing checks
    saying so).
    """
    settings = complete(settings)
    deadline = time.monotonic() + settings['time_limit']
    step_ids, unknown = step_selection(steps or ['all'])
    if unknown:
        raise GradeError(unknown)
    # Opened once, no link at any level: the grade reads the learner's files
    # and writes its reports through these descriptors only (issue 18).
    workdir = open_directory(settings['workdir'], create=write)
    output_path = settings['output_dir'] or settings['workdir']
    output = workdir if output_path == settings['workdir'] else open_directory(output_path, create=write and reports)
    try:
        return _grade(settings, step_ids, workdir, output, deadline, write, cluster, reports)
    finally:
        for directory in set([workdir, output]):
            if hasattr(directory, 'close'):
                directory.close()


def _grade(settings, step_ids, workdir, output, deadline, write, cluster, reports):
    if cluster is None:
        cluster = connect(settings)
    if isinstance(cluster, Cluster):
        cluster.deadline = deadline  # no request runs past the grade's time limit, not even one under way
    # Graded against the KAI that runs; unreadable or not the expected one: refused before any check.
    running = running_kai(settings, cluster)
    health = probe_urls(settings['health_urls']) if settings['health_urls'] else None
    snapshot = Snapshot(cluster, settings['namespace'], workdir, health=health, kai_version=running.version,
                        deadline=deadline, kai_namespace=settings['kai_namespace'])
    if health is None and not snapshot.error:
        # KAI's Deployments are read after the snapshot: an API server that does not answer costs one timeout, not two.
        snapshot.health = deployments_ready(cluster, settings['kai_namespace'], settings['kai_deployments'])
    grader = Grader(snapshot, lang=settings['lang'], deadline=deadline, time_limit=settings['time_limit'])
    result = grade_with_record(snapshot, lambda: grader.run(step_ids), settings['record_path'], settings['workdir'],
                               write=write)
    result['generated_at'] = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
    result['kai'] = kai_forms.describe(running)
    result['kai']['line'] = kai_line(result['kai'], settings['lang'])
    # What protects KAI's word: asked of the API server within the grade's time (none when it did not answer).
    result['protection'] = protection(cluster, settings, running.version, deadline, settings['lang'],
                                      error=snapshot.error)
    files = write_reports(result, output) if write and reports else []
    return {'grade': result, 'table': summary_table(result), 'files': files, 'cluster_error': snapshot.error}


def protection_now(settings, lang, kai_version, cluster=None):
    """grade.json's protection block, asked now (kai-lab status): what protects KAI's word."""
    settings = complete(settings)
    cluster = cluster or connect(settings)
    return protection(cluster, settings, kai_version, time.monotonic() + settings['time_limit'], lang,
                      error=getattr(cluster, 'message', None))


def open_directory(path, create=True):
    """path as a Workdir (learner/workdir_fd.py) (created 0700 when missing and create), or GradeError naming what is wrong.

    Without create (check mode) a missing directory stays missing: its files
    read as missing and nothing is written.
    """
    try:
        return open_workdir(path, create=create)
    except LearnerFileError as exc:
        if exc.missing and not create:
            return path
        raise GradeError('%s / %s' % (exc.problem['en'], exc.problem['ko']))


def write_reports(result, output_dir):
    """grade.json and grade-junit.xml in output_dir (a Workdir); their paths, or GradeError."""
    files = []
    try:
        for name, content in zip(REPORT_FILES, (grade_json(result), junit_xml(result))):
            # mkstemp + rename, mode 0600: a learner's planted link is replaced, never written through.
            files.append(write_file(output_dir, name, content))
    except (IOError, OSError) as exc:
        raise GradeError('could not write the grade to %s: %s' % (output_dir, exc), result)
    except LearnerFileError as exc:
        raise GradeError('could not write the grade: %s' % exc.problem['en'], result)
    return files


def grade_json(result):
    return json.dumps(result, indent=2, ensure_ascii=False, sort_keys=True, allow_nan=False) + '\n'
