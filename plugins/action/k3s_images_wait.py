# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait until k3s lists every image the lab needs, printing its import's progress."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import time

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s import images as k3s_images
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s.progress import Progress

display = Display()


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(k3s_images.WAIT_ARGUMENT_SPEC)

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=k3s_images.WAIT_ARGUMENT_SPEC)
        needed = list(args['needed'])
        start = time.time()
        progress = Progress(display.display)
        while True:
            answer = self._execute_module('ansible.legacy.command', module_args={
                'argv': ['sh', '-c', k3s_images.STATUS_SCRIPT, 'sh', args['k3s']]}, task_vars=task_vars)
            status = k3s_images.import_status(answer.get('stdout', ''), needed)
            elapsed = int(time.time() - start)
            if not status['missing'] and not status['error']:
                break
            # A failed archive is not imported again until it changes: no use waiting.
            failed = status['failed'] and not status['importing']
            if failed or elapsed >= args['timeout']:
                result.update(failed=True, msg=k3s_images.import_failure(status, elapsed, args['images_dir']),
                              missing=status['missing'], elapsed=elapsed)
                return result
            progress.line(k3s_images.import_line(status, needed, elapsed, args['timeout']))
            time.sleep(args['interval'])
        listed = json.loads(answer['stdout'].partition(k3s_images.JOURNAL_MARK)[0])
        result.update(changed=False, elapsed=elapsed, images=listed.get('images') or [],
                      imported=status['imported'],
                      msg='k3s lists all %d images the lab needs after %d s' % (len(needed), elapsed))
        return result
