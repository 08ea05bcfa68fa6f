# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's steps, registered once and in order: the one step list.

Each step is one module here holding its files and objects, how it is
solved, how it is checked and its words in Korean and English. Everything
that counts or lists the steps is derived from LAB: a step's number (its
place), the number of steps and checks, the total weight, the files a
learner writes, the queues the steps create, the word tables. The solver,
the grader, kai-lab, the lab text, the docs pages and README's step table
(docs/lab_pages.py), the role's file list and solve.yml (through the
gsb.kai_lab.lab_steps lookup) take them from here; nothing else states them.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import (
    evictions, evidence, fraction, gang, learner, limit_fix, nolimit, podgroup, preempt, queues, report)

# The lab's steps, in the order of the lab text.
LAB = (queues.STEP, podgroup.STEP, nolimit.STEP, limit_fix.STEP, gang.STEP, preempt.STEP, fraction.STEP, report.STEP)
# The words every step's checks may say through a shared reader (the learner's files, KAI's word, evictions).
SHARED_WORDS = (('learner', learner.WORDS), ('evidence', evidence.WORDS), ('evictions', evictions.WORDS))


def _children_first(parents):
    """Queue names (name -> parent) ordered so that every child comes before its parent."""
    def depth(name):
        return 0 if parents.get(name) not in parents else 1 + depth(parents[name])
    return tuple(sorted(parents, key=lambda name: (-depth(name), name)))


def use(steps):
    """Make steps (in order) the step list: numbers them and sets STEPS, STEP_IDS, CHECKS, FILES and
    QUEUE_NAMES. The collection uses LAB; a lab author's test adds its step with use(LAB + (step,))
    and goes back with use(LAB)."""
    global STEPS, STEP_IDS, CHECKS, FILES, QUEUE_NAMES
    ids = [s.id for s in steps]
    if len(set(ids)) != len(ids):
        raise ValueError('a step id is registered twice: %s' % ', '.join(ids))
    for number, entry in enumerate(steps, 1):
        entry.number = number
    STEPS = tuple(steps)
    STEP_IDS = tuple(ids)
    CHECKS = tuple(c for s in STEPS for c in s.checks)
    # The learner's files of every step, in order (the role's kai_lab_files, through the lab_steps lookup).
    FILES = tuple(name for s in STEPS for name in s.files)
    # The queues the lab's steps create, children first: reset removes these (module kai_lab_reset), and
    # the learner's admission policy lets its account create these and no other (roles/kai_lab, through
    # the gsb.kai_lab.lab_steps lookup).
    parents = {}
    for entry in STEPS:
        parents.update(entry.queues)
    QUEUE_NAMES = _children_first(parents)


STEPS = STEP_IDS = CHECKS = FILES = QUEUE_NAMES = ()
use(LAB)


def lab_objects():
    """The names of what the steps create in the lab namespace, by kind, as each step declares them
    (Step.objects): pods, Jobs (step 5's, KAI from v0.14.7), PodGroups made by hand (step 5's, KAI before it)
    and, of the pods, step 5's (named so before KAI v0.14.7; its Job's pods after) and the fraction pods (KAI's
    binder makes ConfigMaps for each). The lab namespace's ResourceQuota is sized from these (roles/kai_lab,
    through the lab_steps lookup), and the grade tells a learner's own objects from the lab's by them
    (grading/flood.py)."""
    namespace = None  # the names are the same in any
    found = dict((kind, []) for kind in ('pods', 'jobs', 'podgroups', 'gang_pods', 'fraction_pods'))
    for entry in STEPS:
        for kind, objects in sorted((entry.objects(namespace) if entry.objects else {}).items()):
            found.setdefault(kind, []).extend(kai.name_of(o) for o in objects)
    return found


def step(step_id):
    for entry in STEPS:
        if entry.id == step_id:
            return entry
    raise KeyError(step_id)


def total_weight():
    """The lab's points: the weights of every check."""
    return sum(c.weight for c in CHECKS)


def word_tables():
    """[(name, table)] of every word table the steps say: the shared readers', each step's own (Step.words)
    and each check's (a step that declares none still has its checks')."""
    tables = list(SHARED_WORDS)
    for entry in STEPS:
        tables.extend(('%s[%d]' % (entry.id, n), table) for n, table in enumerate(entry.words))
        tables.extend((check.id, check.words) for check in entry.checks)
    return tables
