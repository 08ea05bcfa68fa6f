# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A bounded wait: poll until a predicate holds, on a monotonic clock.

Layer: the cluster client; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time


class WaitTimeout(Exception):
    """Raised when the wait ran out; names what it waited for and what it saw last."""

    def __init__(self, what, timeout, last_seen):
        self.what = what
        self.timeout = timeout
        self.last_seen = last_seen
        super(WaitTimeout, self).__init__('timed out after %ss waiting for %s; last seen: %s'
                                          % (timeout, what, last_seen))


def wait_until(what, probe, done, timeout, interval=0.5, describe=None, progress=None,
               clock=time.monotonic, sleep=time.sleep):
    """Call probe() until done(value) is true; return that value.

    describe(value) turns the last value into the words used in the timeout
    message and in progress lines; progress(line) is called when what is
    seen changes, so a caller can show the wait moving.
    """
    describe = describe or repr
    deadline = clock() + timeout
    last_line = None
    while True:
        value = probe()
        if done(value):
            return value
        line = describe(value)
        if progress and line != last_line:
            progress('%s: %s' % (what, line))
        last_line = line
        remaining = deadline - clock()
        if remaining <= 0:
            raise WaitTimeout(what, timeout, line)
        sleep(min(interval, remaining))


class Waiter(object):
    """Waits for a decision of the cluster by polling (wait_until)."""

    def wait(self, what, probe, done, timeout, describe=None, progress=None):
        return wait_until(what, probe, done, timeout, describe=describe, progress=progress)


class NoOpWaiter(object):
    """Check mode's waiter: nothing was created, so nothing is waited for.

    Returns what is there now, at once, as kubernetes.core's DummyWaiter
    returns the object it was asked to wait on.
    """

    def wait(self, what, probe, done, timeout, describe=None, progress=None):
        return probe()


def get_waiter(check_mode=False):
    return NoOpWaiter() if check_mode else Waiter()
