#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_lab_grade
short_description: Grade a learner's KAI-Scheduler lab, read-only, with feedback in Korean or English
version_added: "0.1.0"
description:
  - Grades the lab as it stands, from the learner's files in O(workdir) and
    the cluster, step by step. Every check has a stable id, a weight, a
    description, and on failure a message and a hint naming the mistake.
  - Read-only. It only reads files and lists objects; it never creates,
    patches or deletes anything and never rewrites a learner file. Its only
    writes are its own reports, O(output_dir)/grade.json and
    O(output_dir)/grade-junit.xml (mode 0600, written through a unique
    temporary file and a rename, so a link planted at either name is
    replaced, never written through), and its record at O(record_path), all
    skipped in check mode.
  - When a later step has erased the evidence of an earlier one, the events
    that remain and the learner's files are used; when those are gone too,
    the check is V(unverified) rather than passed or failed blindly.
  - With O(steps), only those steps are graded now, the way a check button
    works while the learner does the lab.
  - With O(record_path), what a grade verified (check id, time, the evidence
    it saw, for KAI's word the event's uid, reason, message, source and time)
    is added to the grader's own record there. A later grade whose live proof
    is gone (events past the API server's TTL, PodGroup conditions KAI
    v0.17+ clears) uses the recorded proof instead and says so; the learner's
    files and the objects that exist are still read live, so a file changed
    to something wrong still fails. A record path inside O(workdir) is
    refused, and a corrupt or foreign record counts as empty, with a note.
  - Bad input (missing or malformed files, wrong kinds, an unreachable API
    server, a stopped KAI component) becomes a failing check with a clear
    message; the whole grade is bounded by O(time_limit).
  - Learner files are read only inside O(workdir), as regular files of at
    most 256 KiB (no symlinks, FIFOs or devices); YAML aliases, tags without
    a JSON equivalent and nesting deeper than 64 levels fail the check
    reading them. Messages are single printable lines.
options:
  lang:
    description: Language of messages and hints.
    type: str
    choices: [ko, en]
    default: ko
  health_urls:
    description:
      - KAI component name to an HTTP URL that answers 200 while the
        component serves (the sim's local processes).
      - When empty, the Deployments in O(kai_namespace) are read instead.
    type: dict
    default: {}
  kai_namespace:
    description: Namespace of KAI's Deployments, read when O(health_urls) is empty, and where the version of
      the KAI that runs is read when O(kai_record) is unset.
    type: str
    default: kai-scheduler
  kai_deployments:
    description: KAI Deployments that must exist and be ready in O(kai_namespace), when O(health_urls) is empty.
    type: list
    elements: str
    default: []
  output_dir:
    description: Where grade.json and grade-junit.xml are written; defaults to O(workdir).
    type: path
  time_limit:
    description: Seconds the whole grade may take; checks past it are reported as not verified.
    type: int
    default: 30
  steps:
    description:
      - Step ids to grade now, e.g. V(nolimit), or V(all) for every step.
      - An unknown id fails the task, naming the valid ones.
    type: list
    elements: str
    default: [all]
  record_path:
    description:
      - The grader's record of what it verified, a JSON file outside
        O(workdir) (the playbooks use
        C(<kai_lab_grade_record_dir>/<namespace>.json)).
      - Read before grading and updated after it, written atomically with
        mode 0600. Unset, no record is read or written.
    type: path
extends_documentation_fragment:
  - gsb.kai_lab.lab
  - gsb.kai_lab.kai_running
  - gsb.kai_lab.connection
attributes:
  check_mode:
    support: full
    description: Grades as usual but writes no report file.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Grade in English
  gsb.kai_lab.kai_lab_grade:
    lang: en
  register: grade

- name: Show the table
  ansible.builtin.debug:
    var: grade.table

- name: Check step 3 right after doing it, keeping KAI's proof
  gsb.kai_lab.kai_lab_grade:
    steps: [nolimit]
    record_path: /root/.local/state/gsb-kai-lab/sim/grade-records/kai-lab.json
'''

RETURN = r'''
grade:
  description: The grade, as written to grade.json (schema_version 1).
  returned: always
  type: dict
  contains:
    schema_version:
      description: Version of this structure.
      type: int
      sample: 1
    kai_version:
      description: The version of the KAI that was graded, read from what runs (see O(kai_record)).
      type: str
      sample: v0.12.0
    kai:
      description:
        - Which KAI was graded, C(version), C(source) (where it was read), C(lab_version) (the lab text's),
          C(differences) (the steps whose form differs on this KAI, each C(step), C(number), C(since)) and
          C(line), the sentence saying it, in the grade's language (also the table's first line and the
          JUnit properties).
      type: dict
    passed:
      description: Whether every check and the environment passed.
      type: bool
    score:
      description: Percentage of weighted points earned.
      type: float
      sample: 100.0
    steps:
      description:
        - Per step graded, its checks with id, status, passed, weight, description, message, hint, evidence, duration.
        - A check passed on a recorded proof has a message saying when it was verified and from what, and
          C(evidence.recorded).
      type: list
      elements: dict
    record:
      description: The grader's record, C(path) (null when none is kept), C(notes) on it, the checks that C(used) it
        and those C(kept) in it now.
      type: dict
table:
  description: One console line per check and a score line.
  returned: always
  type: list
  elements: str
files:
  description: Report files written.
  returned: always
  type: list
  elements: str
'''

import json
import os
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils import kai_running
from ansible_collections.gsb.kai_lab.plugins.module_utils.args_common import lab_argument_spec
from ansible_collections.gsb.kai_lab.plugins.module_utils.common import require_libraries
from ansible_collections.gsb.kai_lab.plugins.module_utils.grade_output import junit_xml, kai_line, summary_table
from ansible_collections.gsb.kai_lab.plugins.module_utils.grade_record import grade_with_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.grader import Grader, Snapshot, step_selection
from ansible_collections.gsb.kai_lab.plugins.module_utils.health import deployments_ready, probe_urls
from ansible_collections.gsb.kai_lab.plugins.module_utils.k8s import Cluster, ClusterError
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner_read import LearnerFileError
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner_write import write_file


class _Unreachable(object):
    """Stands in for a cluster whose kubeconfig cannot even be loaded."""

    def __init__(self, message):
        self.message = message

    def list(self, *args, **kwargs):
        raise ClusterError(self.message)

    get = list


def main():
    argument_spec = lab_argument_spec(
        lang=dict(type='str', choices=['ko', 'en'], default='ko'),
        health_urls=dict(type='dict', default={}),
        kai_namespace=dict(type='str', default='kai-scheduler'),
        kai_deployments=dict(type='list', elements='str', default=[]),
        output_dir=dict(type='path'),
        time_limit=dict(type='int', default=30),
        steps=dict(type='list', elements='str', default=['all']),
        record_path=dict(type='path'),
    )
    argument_spec.update(kai_running.RUNNING_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    deadline = time.monotonic() + params['time_limit']
    step_ids, unknown = step_selection(params['steps'])
    if unknown:
        module.fail_json(msg=unknown)

    require_libraries(module)
    # Reads share the grade's time budget: an API server that accepts
    # connections but never answers must not use it all up.
    request_timeout = max(1, min(params['request_timeout'], params['time_limit'] // 6))
    try:
        cluster = Cluster(params['kubeconfig'], params['context'], request_timeout, retries=0)
    except ClusterError as exc:
        cluster = _Unreachable(str(exc))

    # Graded against the KAI that runs; unreadable or not the expected one: fail before any check.
    running = kai_running.for_module(module, cluster)
    if params['health_urls']:
        health = probe_urls(params['health_urls'])
    else:
        health = deployments_ready(cluster, params['kai_namespace'], params['kai_deployments'])
    snapshot = Snapshot(cluster, params['namespace'], params['workdir'], health=health, kai_version=running.version)
    grader = Grader(snapshot, lang=params['lang'], deadline=deadline, time_limit=params['time_limit'])
    grade = grade_with_record(snapshot, lambda: grader.run(step_ids), params['record_path'], params['workdir'],
                              write=not module.check_mode)
    grade['generated_at'] = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
    grade['kai'] = kai_running.describe(running)
    grade['kai']['line'] = kai_line(grade['kai'], params['lang'])

    files = []
    if not module.check_mode:
        output_dir = params['output_dir'] or params['workdir']
        try:
            if not os.path.isdir(output_dir):
                os.makedirs(output_dir, 0o700)
            for name, content in (('grade.json', json.dumps(grade, indent=2, ensure_ascii=False, sort_keys=True) + '\n'),
                                  ('grade-junit.xml', junit_xml(grade))):
                # mkstemp + rename, mode 0600: a learner's planted link is replaced, never written through.
                files.append(write_file(output_dir, name, content))
        except (IOError, OSError) as exc:
            module.fail_json(msg='could not write the grade to %s: %s' % (output_dir, exc), grade=grade)
        except LearnerFileError as exc:
            module.fail_json(msg='could not write the grade: %s' % exc.problem['en'], grade=grade)
    module.exit_json(changed=False, grade=grade, table=summary_table(grade), files=files)


if __name__ == '__main__':
    main()
