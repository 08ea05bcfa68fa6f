# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When a k3s wait shows its progress line: when what it says changed, else every 30 s.

The waits on the k3s VM (actions gsb.kai_lab.k3s_node_wait, k3s_images_wait,
k3s_workloads_wait) look every few seconds; a person reads one line per
change, not one per look. A line ends with its time ("; 40 s of at most
300 s"), which is not a change.

Layer: the targets (k3s); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

# Seconds between two lines that say the same.
REPEAT_EVERY = 30

# The options every k3s wait has (doc fragment gsb.kai_lab.k3s_wait).
WAIT_ARGS = dict(
    k3s=dict(type='path', default='/usr/local/bin/k3s'),
    interval=dict(type='int', default=5),
)


class Progress(object):
    """Shows a wait's lines through show (Display().display), each change once and an unchanged one every 30 s."""

    def __init__(self, show, clock=time.time):
        self.show = show
        self.clock = clock
        self.said, self.said_at = None, 0

    def line(self, text):
        said = text.rsplit(';', 1)[0]
        if said != self.said or self.clock() - self.said_at >= REPEAT_EVERY:
            self.show(text)
            self.said, self.said_at = said, self.clock()
