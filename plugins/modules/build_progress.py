#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: build_progress
short_description: Wait for an asynchronous build and show its progress
version_added: "0.1.0"
description:
  - Waits for a job started with C(async) and C(poll=0) that writes a build log in the format of
    the C(sim_binaries) role's C(files/build.sh), printing one line per tick with the packages built
    of the total, the size of the log and the elapsed time, instead of one retry line per poll.
  - Does not fail on a failed build; the caller reports it with O(log_file)'s last lines (RV(log_tail)).
  - Runs as an action on the controller; it reads the job's status and the log through the connection.
options:
  jid:
    description: The job id of the asynchronous task.
    type: str
    required: true
  log_file:
    description: The build log on the target.
    type: path
    required: true
  label:
    description: What is built, for the progress lines.
    type: str
    required: true
  total:
    description: How many packages the build builds.
    type: int
    required: true
  timeout:
    description: Seconds to wait at most.
    type: int
    default: 3600
  interval:
    description: Seconds between progress lines.
    type: int
    default: 10
attributes:
  check_mode:
    support: none
    description: Waits for a job; in check mode no job was started.
  action:
    support: full
    description: Runs on the controller.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Wait for the build of kai
  gsb.kai_lab.build_progress:
    jid: "{{ build_job.ansible_job_id }}"
    log_file: /root/.cache/gsb-kai-lab/bin/kai/build.log
    label: kai
    total: 10
'''

RETURN = r'''
succeeded:
  description: Whether the job finished with exit status 0.
  type: bool
  returned: always
elapsed:
  description: Seconds waited.
  type: int
  returned: always
log_tail:
  description: The last 25 non-empty lines of the build log.
  type: list
  elements: str
  returned: always
summary:
  description: The last progress line.
  type: str
  returned: always
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim.build_progress import ARGUMENT_SPEC


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC)
    module.fail_json(msg='build_progress runs as an action plugin on the controller; call it as a task.')


if __name__ == '__main__':
    main()
