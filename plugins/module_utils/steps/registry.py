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

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
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


def lab_objects():
    """The names of what the steps create in the lab namespace, by kind: pods (p1, nl-1, step 5's three, the
    train, build and fraction pods), Jobs (step 5's, KAI from v0.14.7), PodGroups made by hand (step 5's, KAI
    before it) and, of the pods, step 5's (named so before KAI v0.14.7; its Job's pods after) and the fraction
    pods (KAI's binder makes ConfigMaps for each). The lab namespace's ResourceQuota is sized from these
    (roles/kai_lab, through the lab_steps lookup), and the grade tells a learner's own objects from the lab's
    by them (grading/flood.py)."""
    namespace = None  # the names are the same in any
    gang_pods = gang.gang_pods(namespace)
    fractions = fraction.fraction_pods(namespace)
    pods = ([podgroup.p1(namespace), nolimit.nl1(namespace)] + gang_pods + preempt.train_pods(namespace)
            + [preempt.build_pod(namespace)] + fractions)
    return {
        'pods': [kai.name_of(p) for p in pods],
        'jobs': [kai.name_of(gang.gang_job(namespace))],
        'podgroups': [kai.name_of(gang.gang_podgroup(namespace))],
        'gang_pods': [kai.name_of(p) for p in gang_pods],
        'fraction_pods': [kai.name_of(p) for p in fractions],
    }


def step(step_id):
    for entry in STEPS:
        if entry.id == step_id:
            return entry
    raise KeyError(step_id)
