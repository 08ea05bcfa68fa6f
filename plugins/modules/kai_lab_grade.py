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
    works while the learner does the lab. The learner's own check button,
    C(kai-lab check STEP) (installed by C(provision.yml)), runs this very
    grade (the same checks, words and record).
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
  - The cluster is read in pages within bounds (a page larger than 8 MiB is
    read again smaller). More of one kind than the grade reads (8 MiB of
    answers, 10,000 objects), a learner's flood, fails each check that reads
    that kind, naming the namespace, the kind, how many, who made them and
    what to delete; the other checks are graded.
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
  learner_identity:
    description:
      - The learner's own Kubernetes user, the ServiceAccount the lab gives a learner account
        (C(system:serviceaccount:<namespace>:<name>), role variable C(kai_lab_learner_identity)).
      - At each grade the API server is asked, one SubjectAccessReview per write that could forge what the grader
        reads as KAI's word or act as someone who can (create, patch or update Events; patch or update pods/status
        and podgroups/status; create pods/binding or bindings; patch or update pods; create PodGroups where KAI
        makes them itself; impersonate users, groups or ServiceAccounts; create serviceaccounts/token in the lab
        namespace, the learner's own and KAI's; create, patch or update bindrequests and ConfigMaps in the lab
        namespace; create, patch, update or delete pods in KAI's reservation namespace), whether this user may
        make it. When it may create pods in the lab namespace (or anything that makes pods), every ServiceAccount
        of that namespace is asked the same and whether it may create pods or Jobs there, which no policy checks;
        a pod of the learner may run under any of them.
      - O(learner_policies) (compared with O(learner_policy_objects)) and the lab namespace's Pod Security label
        are read. The grade's C(protection) says either that KAI's word is protected or which writes the learner
        holds, and through which identity.
      - Unset, the learner is taken to hold the lab's own kubeconfig (root on the VM, the default sim); the
        grader's own credentials are asked about (SelfSubjectAccessReview) and the grade is marked unprotected.
    type: str
  learner_policies:
    description:
      - Names of the ValidatingAdmissionPolicies that keep O(learner_identity)'s writes to the lab's (queue
        names, no pod with C(spec.nodeName), no pod label or annotation changed after creation). Each must
        exist, name the learner in its match conditions, fail closed and have a binding with
        C(validationActions) Deny.
    type: list
    elements: str
    default: []
  learner_policy_objects:
    description:
      - The ValidatingAdmissionPolicies and ValidatingAdmissionPolicyBindings of O(learner_policies) as provision
        applies them (the role passes them from C(templates/learner_access.yaml.j2)).
      - Each policy in the cluster is compared with its own here, and named as not in place when it lets the
        learner pass what this one refuses (match rules that cover less, C(excludeResourceRules), selectors,
        C(matchPolicy) Exact, other C(matchConditions), a validation gone or changed, C(failurePolicy) Ignore,
        parameters) or when no binding of it denies or one narrows it (C(validationActions) without Deny,
        C(matchResources), C(paramRef)).
      - Empty, the policies are checked by name only.
    type: list
    elements: dict
    default: []
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
    protection:
      description:
        - What protects KAI's word in this grade. C(protected) (true only when the learner has an identity of its
          own that may write none of the evidence, with every policy and Pod Security in place), C(identity) (null for
          the lab's own kubeconfig), C(holds) (what the learner may write, each C(id), C(holder) (the identity that
          may), C(en), C(ko); C(pods.other_serviceaccount), a ServiceAccount a pod of the learner may run under,
          also C(writes), the ids that ServiceAccount holds), C(reviews) (the learner's own, each kind of evidence, C(allowed) and the C(writes) the
          API server allowed), C(pod_route) (the write that lets the learner run pods in the lab namespace, or
          null), C(pod_identities) (the lab namespace's ServiceAccounts those pods may run under, each
          C(identity) and its C(reviews)), C(policies) (each C(name), C(in_place), C(problem) and C(problems),
          each C(id) and C(detail)), C(pod_security) (C(namespace), C(enforce), C(in_place)), C(error) (why the API
          server could not be asked) and C(line), the sentence in the grade's language (also the table's second
          line and the JUnit properties).
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

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import session as grade_session
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import running as kai_running
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.args import lab_argument_spec
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.module import require_libraries
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.workdir_fd import DEFAULT_WORKDIR


def main():
    argument_spec = lab_argument_spec(
        DEFAULT_WORKDIR,
        lang=dict(type='str', choices=['ko', 'en'], default='ko'),
        health_urls=dict(type='dict', default={}),
        kai_namespace=dict(type='str', default='kai-scheduler'),
        kai_deployments=dict(type='list', elements='str', default=[]),
        output_dir=dict(type='path'),
        time_limit=dict(type='int', default=30),
        steps=dict(type='list', elements='str', default=['all']),
        record_path=dict(type='path'),
        learner_identity=dict(type='str'),
        learner_policies=dict(type='list', elements='str', default=[]),
        learner_policy_objects=dict(type='list', elements='dict', default=[]),
    )
    argument_spec.update(kai_running.RUNNING_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    require_libraries(module)
    settings = dict((key, module.params[key]) for key in grade_session.DEFAULTS)
    # The grade itself is the one shared with the learner's kai-lab command (grading/session.py).
    try:
        result = grade_session.grade(settings, module.params['steps'], write=not module.check_mode)
    except grade_session.GradeError as exc:
        found = dict((key, value) for key, value in (('grade', exc.grade), ('environment', exc.environment)) if value)
        module.fail_json(msg=exc.message, **found)
    module.exit_json(changed=False, grade=result['grade'], table=result['table'], files=result['files'])


if __name__ == '__main__':
    main()
