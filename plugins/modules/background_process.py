#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: background_process
short_description: Keep a program running as a detached process with a pid file
version_added: "0.1.0"
description:
  - Starts a program in its own session with its output appended to a log
    file and its pid recorded in a pid file, when it is not already running.
  - A running process started with the same arguments and environment is left
    alone, so a second run reports no change; a changed command line restarts it.
  - Used by the C(sim) target to run KAI-Scheduler components and the fake GPU
    operator without containers or a service manager.
options:
  name:
    description: A short name for messages.
    type: str
    required: true
  argv:
    description: The program and its arguments. Required unless O(state=stopped).
    type: list
    elements: str
  env:
    description: Extra environment variables for the program.
    type: dict
    default: {}
  chdir:
    description: Working directory of the program.
    type: path
  pid_file:
    description: Where the pid is recorded.
    type: path
    required: true
  log_file:
    description: Where the program's output is appended. Required unless O(state=stopped).
    type: path
  state:
    description:
      - V(started) starts the program when it is not running (or runs with other arguments).
      - V(restarted) always restarts it; V(stopped) stops it (SIGTERM, then SIGKILL).
    type: str
    choices: [started, stopped, restarted]
    default: started
attributes:
  check_mode:
    support: full
    description: Reports what would be started or stopped without doing it.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Run the KAI binder
  gsb.kai_lab.background_process:
    name: binder
    argv: [/opt/kai/bin/binder, --scheduler-name, kai-scheduler]
    env:
      KUBECONFIG: /root/.kube/config
    pid_file: /var/lib/kai-sim/pids/binder.pid
    log_file: /var/lib/kai-sim/logs/binder.log

- name: Stop it
  gsb.kai_lab.background_process:
    name: binder
    pid_file: /var/lib/kai-sim/pids/binder.pid
    state: stopped
'''

RETURN = r'''
pid:
  description: Pid of the running process; null when stopped.
  returned: always
  type: int
  sample: 41235
action:
  description: What was done, V(none), V(started), V(restarted) or V(stopped).
  returned: always
  type: str
  sample: started
'''

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils import process


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type='str', required=True),
            argv=dict(type='list', elements='str'),
            env=dict(type='dict', default={}),
            chdir=dict(type='path'),
            pid_file=dict(type='path', required=True),
            log_file=dict(type='path'),
            state=dict(type='str', choices=['started', 'stopped', 'restarted'], default='started'),
        ),
        required_if=[('state', 'started', ('argv', 'log_file')),
                     ('state', 'restarted', ('argv', 'log_file'))],
        supports_check_mode=True,
    )
    params = module.params
    program = params['argv'][0] if params['argv'] else None
    if program and not (os.path.isfile(program) and os.access(program, os.X_OK)):
        module.fail_json(msg='%s: program %s does not exist or is not executable' % (params['name'], program))
    env = dict((str(k), str(v)) for k, v in params['env'].items())
    try:
        result = process.ensure(params['argv'] or [], params['pid_file'], params['log_file'] or '',
                                state=params['state'], env=env, cwd=params['chdir'],
                                check_mode=module.check_mode)
    except OSError as exc:
        module.fail_json(msg='%s: could not %s: %s' % (params['name'], params['state'], exc))
    if 'exited' in result:
        module.fail_json(msg='%s exited with code %s right after start; last lines of %s:\n%s' % (
            params['name'], result['exited'], params['log_file'], '\n'.join(result['log_tail'])), **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
