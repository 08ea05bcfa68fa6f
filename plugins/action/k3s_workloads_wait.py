# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait until a namespace's Deployments and DaemonSets on the k3s VM are ready, printing why not yet."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s import workloads
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s.progress import Progress

display = Display()


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(workloads.ARGUMENT_SPEC)

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=workloads.ARGUMENT_SPEC)
        argv = [args['k3s'], 'kubectl', '--kubeconfig=' + args['kubeconfig'], '-n', args['namespace'], 'get',
                'deployments,daemonsets,pods', '-o', 'json']
        start = time.time()
        ticks = 0
        progress = Progress(display.display)
        while True:
            answer = self._execute_module('ansible.legacy.command', module_args={'argv': argv}, task_vars=task_vars)
            ticks += 1
            items = workloads.parse(answer.get('stdout', ''))
            elapsed = int(time.time() - start)
            state = workloads.status(items or [], args['deployments'])
            if items is not None and state['ready']:
                break
            if items is None:
                state['waiting'] = [('kubectl', ' '.join((answer.get('stderr') or answer.get('msg') or '').split())[:200])]
            if (args['airgap'] and state['missing_images']) or elapsed >= args['timeout']:
                result.update(failed=True, elapsed=elapsed, waiting=state['waiting'],
                              msg=workloads.failure(args['label'], args['namespace'], state, elapsed, args['airgap']))
                return result
            progress.line(workloads.line(args['label'], state, elapsed, args['timeout']))
            time.sleep(args['interval'])
        result.update(changed=False, elapsed=elapsed, looks=ticks,
                      msg='%s: all %d workloads ready after %d s' % (args['label'], state['counts'][1], elapsed))
        return result
