# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's eight steps, registered once and in order.

Each step is one module here holding its files and objects, how it is
solved, how it is checked and its words in Korean and English. The solver,
the grader, kai_lab_step's choices, the docs and solve.yml (through the
gsb.kai_lab.lab_steps lookup) take their lists from STEPS.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import (
    fraction, gang, limit_fix, nolimit, podgroup, preempt, queues, report)

STEPS = (queues.STEP, podgroup.STEP, nolimit.STEP, limit_fix.STEP, gang.STEP, preempt.STEP, fraction.STEP, report.STEP)
STEP_IDS = tuple(s.id for s in STEPS)
CHECKS = tuple(c for s in STEPS for c in s.checks)


def _children_first(parents):
    """Queue names (name -> parent) ordered so that every child comes before its parent."""
    def depth(name):
        return 0 if parents.get(name) not in parents else 1 + depth(parents[name])
    return tuple(sorted(parents, key=lambda name: (-depth(name), name)))


# The queues the lab's steps create, children first (step 1's three, step 3's
# nolimit): reset removes these (module kai_lab_reset), and the learner's admission
# policy lets its account create these and no other (roles/kai_lab, through
# the gsb.kai_lab.lab_steps lookup).
QUEUE_NAMES = _children_first(dict(
    [(name, queue['parent']) for name, queue in queues.QUEUES.items()]
    + [(nolimit.NOLIMIT_QUEUE['name'], nolimit.NOLIMIT_QUEUE['parent'])]))


def step(step_id):
    for entry in STEPS:
        if entry.id == step_id:
            return entry
    raise KeyError(step_id)
