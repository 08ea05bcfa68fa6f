#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_lab_step
short_description: Carry out one step of the KAI-Scheduler lab and assert KAI's decision
version_added: "0.1.0"
description:
  - Does one of the lab's steps as the lab text asks, as a perfect
    learner would. It writes the step's file in O(workdir), creates its objects,
    waits for KAI-Scheduler's decision and asserts it from PodGroups, Events
    and GPU allocation.
  - A step whose outcome is already in place (its file records KAI's decision
    and the cluster has moved on) is verified, not redone, so running all
    steps again on a finished lab reports no change and disturbs nothing.
  - An existing learner file with other content is kept as
    C(<file>.bak-<YYYYmmdd-HHMMSS>) (C(-2), C(-3), ... when that name is
    taken; a symlink is kept as the symlink) before it is replaced through a
    unique temporary file. The backup is a copy owned like the file, with its
    permissions but never set-uid, set-gid or sticky bits; a file over 256
    KiB, or sparse, is moved to the backup name instead of copied (a file
    over 256 KiB that cannot be moved safely, with set-id bits or other hard
    links, fails the step naming it). A directory or FIFO where the file
    belongs fails the step naming it.
  - O(workdir) is opened once, without following a link at any level, and
    every read and write goes through that directory; a workdir that is a
    link, goes through one, or lies below a directory another user can
    change fails the step naming it. A missing one is created (mode 0700).
  - On failure the message names the step, what was expected, what was
    observed (phase, PodGroup reasons, last events) and the likely cause.
options:
  step:
    description:
      - The step to carry out, by its id. The ids are the lab's step list
        (C(plugins/module_utils/steps/registry.py)), in order, as the lookup
        C(gsb.kai_lab.lab_steps) returns them; any other value fails naming
        them.
    type: str
    required: true
  timeout:
    description: Seconds to wait for each decision of KAI the step waits for.
    type: int
    default: 60
extends_documentation_fragment:
  - gsb.kai_lab.lab
  - gsb.kai_lab.kai_running
  - gsb.kai_lab.connection
attributes:
  check_mode:
    support: full
    description: Applies with server-side dry run and writes no file; nothing is waited for.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Step 3, the empty-limit trap
  gsb.kai_lab.kai_lab_step:
    step: nolimit
    kubeconfig: ~/.kube/config

- name: Step 5 on the sim, which says which KAI it runs
  gsb.kai_lab.kai_lab_step:
    step: gang
    kai_record: ~/.local/state/gsb-kai-lab/sim/kai/kai-version.json

- name: All steps in order
  gsb.kai_lab.kai_lab_step:
    step: "{{ item }}"
  loop: "{{ query('gsb.kai_lab.lab_steps') }}"
'''

RETURN = r'''
step:
  description: The step carried out.
  returned: always
  type: str
  sample: nolimit
kai:
  description: The KAI the step ran on, C(version) and C(source) (where it was read).
  returned: success
  type: dict
  sample: {version: v0.12.0, source: the sim record /root/.local/state/gsb-kai-lab/sim/kai/kai-version.json}
number:
  description: Its number in the lab text.
  returned: success
  type: int
  sample: 3
files:
  description: Learner files written by this run.
  returned: success
  type: list
  elements: str
  sample: [/root/gsb-kai/nolimit.txt]
backups:
  description: Backups of learner files that were replaced (copies, or the large or sparse file itself moved).
  returned: success
  type: list
  elements: str
timeline:
  description: What the step did and saw, with seconds since it started.
  returned: always
  type: list
  elements: str
  sample: ["  0.02s applied Pod nl-1", "  1.10s nl-1's PodGroup to carry the OverLimit reason: reasons ['OverLimit']"]
duration:
  description: Seconds the step took.
  returned: success
  type: float
  sample: 1.4
evidence:
  description: What the assertion was made on (pod states, PodGroup reasons, report values).
  returned: success
  type: dict
expected:
  description: On failure, what the step expected.
  returned: failure
  type: str
observed:
  description: On failure, what it saw.
  returned: failure
  type: raw
likely_cause:
  description: On failure, the most likely cause in words a learner can act on.
  returned: failure
  type: str
  sample: pod scheduled by default-scheduler, not KAI
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import running as kai_running
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.args import lab_argument_spec
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.module import connect
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import ClusterError
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.read import LearnerFileError
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.workdir_fd import DEFAULT_WORKDIR, open_workdir
from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.solver import StepFailed, StepRunner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry


def main():
    argument_spec = lab_argument_spec(
        DEFAULT_WORKDIR,
        step=dict(type='str', required=True),
        timeout=dict(type='int', default=60),
        **kai_running.RUNNING_ARGS
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if module.params['step'] not in registry.STEP_IDS:
        steps = ', '.join(registry.STEP_IDS)
        module.fail_json(msg='unknown step %s; the steps are %s (gsb.kai_lab.lab_steps). / 알 수 없는 단계 %s; 단계는 %s 입니다.'
                         % (module.params['step'], steps, module.params['step'], steps), step=module.params['step'])
    # Opened once, no link at any level; every read and write of the step
    # goes through this descriptor (learner/workdir_fd.py's open_workdir).
    try:
        workdir = open_workdir(module.params['workdir'], create=not module.check_mode)
    except LearnerFileError as exc:
        if not (exc.missing and module.check_mode):
            module.fail_json(msg='%s / %s' % (exc.problem['en'], exc.problem['ko']), step=module.params['step'])
        workdir = module.params['workdir']  # check mode, nothing there yet: nothing is written
    cluster = connect(module)
    # The KAI that runs decides the step's form; unreadable or not the expected one: fail before any work.
    running = kai_running.for_module(module, cluster)
    runner = StepRunner(cluster, module.params['namespace'], workdir, running.version,
                        timeout=module.params['timeout'], check_mode=module.check_mode)
    try:
        result = runner.run(module.params['step'])
    except StepFailed as exc:
        module.fail_json(msg=str(exc), step=exc.step_id, expected=exc.expected, observed=exc.observed,
                         likely_cause=exc.cause, timeline=runner.timeline)
    except ClusterError as exc:
        module.fail_json(msg='step %s: %s' % (module.params['step'], exc), step=module.params['step'],
                         timeline=runner.timeline)
    result['kai'] = {'version': running.version, 'source': running.source}
    module.exit_json(**result)


if __name__ == '__main__':
    main()
