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
  - Several programs can be given at once with O(processes); they are started
    one after another and then watched together for half a second, so a
    program that exits at once (a bad flag) is reported by name.
options:
  name:
    description: A short name for messages. Required unless O(processes) is given.
    type: str
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
    description: Where the pid is recorded. Required unless O(processes) is given.
    type: path
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
  processes:
    description:
      - Several programs, each with the options above (O(state) applies to all), instead of
        O(name), O(argv), O(env), O(chdir), O(pid_file) and O(log_file).
    type: list
    elements: dict
    suboptions:
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

- name: Run the binder and the queue controller, watched together
  gsb.kai_lab.background_process:
    processes:
      - name: binder
        argv: [/opt/kai/bin/binder]
        pid_file: /var/lib/kai-sim/pids/binder.pid
        log_file: /var/lib/kai-sim/logs/binder.log
      - name: queuecontroller
        argv: [/opt/kai/bin/queuecontroller]
        pid_file: /var/lib/kai-sim/pids/queuecontroller.pid
        log_file: /var/lib/kai-sim/logs/queuecontroller.log

- name: Stop it
  gsb.kai_lab.background_process:
    name: binder
    pid_file: /var/lib/kai-sim/pids/binder.pid
    state: stopped
'''

RETURN = r'''
pid:
  description: Pid of the running process; null when stopped.
  returned: unless O(processes) is given
  type: int
  sample: 41235
action:
  description: What was done, V(none), V(started), V(restarted) or V(stopped).
  returned: unless O(processes) is given
  type: str
  sample: started
processes:
  description: For O(processes), one entry per program, in order, with its RV(pid) and RV(action).
  returned: when O(processes) is given
  type: list
  elements: dict
  sample: [{name: binder, pid: 41235, action: started, changed: true}]
'''

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.host import process

_PROCESS_OPTIONS = dict(
    name=dict(type='str'),
    argv=dict(type='list', elements='str'),
    env=dict(type='dict', default={}),
    chdir=dict(type='path'),
    pid_file=dict(type='path'),
    log_file=dict(type='path'),
)


def _spec(params, module, state):
    for key in ('name', 'pid_file') + (('argv', 'log_file') if state != 'stopped' else ()):
        if not params.get(key):
            where = ' (processes entry %s)' % params['name'] if params.get('name') else ''
            module.fail_json(msg='%s is required%s' % (key, where))
    program = params['argv'][0] if params['argv'] else None
    if program and not (os.path.isfile(program) and os.access(program, os.X_OK)):
        module.fail_json(msg='%s: program %s does not exist or is not executable' % (params['name'], program))
    return dict(name=params['name'], argv=params['argv'] or [], pid_file=params['pid_file'],
                log_file=params['log_file'] or '', cwd=params['chdir'],
                env=dict((str(k), str(v)) for k, v in (params['env'] or {}).items()))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            _PROCESS_OPTIONS,
            state=dict(type='str', choices=['started', 'stopped', 'restarted'], default='started'),
            processes=dict(type='list', elements='dict', options=dict(
                _PROCESS_OPTIONS, name=dict(type='str', required=True), pid_file=dict(type='path', required=True))),
        ),
        mutually_exclusive=[('processes', 'name'), ('processes', 'pid_file'), ('processes', 'argv')],
        required_one_of=[('processes', 'name')],
        supports_check_mode=True,
    )
    params = module.params
    state = params['state']
    specs = [_spec(entry, module, state) for entry in params['processes'] or [params]]
    try:
        results = process.ensure_all(specs, state=state, check_mode=module.check_mode)
    except OSError as exc:
        module.fail_json(msg='%s: could not %s: %s' % (', '.join(spec['name'] for spec in specs), state, exc))
    for spec, result in zip(specs, results):
        result['name'] = spec['name']
    exited = [(spec, result) for spec, result in zip(specs, results) if 'exited' in result]
    outcome = dict(changed=any(result['changed'] for result in results))
    if params['processes'] is None:
        outcome.update(results[0])
        del outcome['name']
    else:
        outcome['processes'] = results
    if exited:
        module.fail_json(msg='\n'.join('%s exited with code %s right after start; last lines of %s:\n%s' % (
            spec['name'], result['exited'], spec['log_file'], '\n'.join(result['log_tail'])) for spec, result in exited),
            **outcome)
    module.exit_json(**outcome)


if __name__ == '__main__':
    main()
