# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait until the k3s VM's node is Ready, printing why not yet."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s import node
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s.progress import Progress

display = Display()


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(node.ARGUMENT_SPEC)

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=node.ARGUMENT_SPEC)
        start, looks = time.time(), 0
        progress = Progress(display.display)
        while True:
            answer = self._execute_module('ansible.legacy.command', module_args={'argv': node.argv(args)},
                                          task_vars=task_vars)
            looks += 1
            ready, why = node.status(answer)
            elapsed = int(time.time() - start)
            if ready:
                break
            if elapsed >= args['timeout']:
                result.update(failed=True, elapsed=elapsed, why=why, msg=node.failure(args['name'], why, elapsed))
                return result
            progress.line(node.line(args['name'], why, elapsed, args['timeout']))
            time.sleep(args['interval'])
        result.update(changed=False, elapsed=elapsed, looks=looks,
                      msg='k3s node %s is Ready after %d s' % (args['name'], elapsed))
        return result
