# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait for an asynchronous build, printing one progress line per tick."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import re
import time

from ansible.plugins.action import ActionBase
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim.build_progress import ARGUMENT_SPEC
from ansible.utils.display import Display

display = Display()

_PLAN = re.compile(r'^== (\d+) packages to compile for (\d+) binaries', re.M)
# What `go build -v` prints for each package it compiles: an import path alone.
_COMPILED = re.compile(r'^[A-Za-z0-9_.~+-]+(?:/[A-Za-z0-9_.~+-]+)*$')


def progress_line(label, log, total, elapsed):
    """'kai: 812 of 2372 packages compiled (last k8s.io/...), build log 12 kB, 2m05s elapsed'
    from build.sh's log; packages found in Go's build cache are not compiled
    again, so a warm build ends below the total."""
    lines = log.splitlines()
    plan = _PLAN.search(log)
    when = 'build log %d kB, %dm%02ds elapsed' % (len(log) // 1024, elapsed // 60, elapsed % 60)
    if '\n== done' in '\n' + log:
        return '%s: %d/%d binaries built, %s' % (label, total, total, when)
    if not plan:
        downloads = sum(1 for line in lines if line.startswith('go: downloading '))
        return '%s: finding the packages to compile (%d modules downloaded), %s' % (label, downloads, when)
    compiled = [line for line in log[plan.end():].splitlines()[1:] if _COMPILED.match(line)]
    last = ' (last %s)' % compiled[-1] if compiled else ''
    return '%s: %d of %s packages compiled%s, 0/%d binaries, %s' % (
        label, len(compiled), plan.group(1), last, total, when)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)

    def _log(self, path, task_vars):
        read = self._execute_module('ansible.builtin.slurp', module_args={'src': path}, task_vars=task_vars)
        if read.get('failed'):
            return ''
        return base64.b64decode(read.get('content', '')).decode('utf-8', 'replace')

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        # As ansible.builtin.async_status finds the job's file.
        async_dir = self.get_shell_option('async_dir', default='~/.ansible_async')
        start = time.time()
        status = {}
        while True:
            status = self._execute_module('ansible.legacy.async_status', module_args={
                'jid': args['jid'], '_async_dir': async_dir}, task_vars=task_vars)
            elapsed = int(time.time() - start)
            log = self._log(args['log_file'], task_vars)
            if status.get('finished') or status.get('failed') or elapsed >= args['timeout']:
                break
            display.display(progress_line(args['label'], log, args['total'], elapsed))
            time.sleep(args['interval'])
        cleanup = {'jid': args['jid'], 'mode': 'cleanup', '_async_dir': async_dir}
        self._execute_module('ansible.legacy.async_status', module_args=cleanup, task_vars=task_vars)
        succeeded = bool(status.get('finished')) and status.get('rc') == 0
        lines = [line for line in log.splitlines() if line.strip()]
        result.update(changed=False, succeeded=succeeded, elapsed=elapsed, log_tail=lines[-25:],
                      summary=progress_line(args['label'], log, args['total'], elapsed))
        if not status.get('finished'):
            result['log_tail'].append('(still running after %d s: the build timed out)' % elapsed)
        return result
