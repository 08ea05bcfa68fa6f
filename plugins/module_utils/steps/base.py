# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the lab's steps share: how a step and a check are declared, a
check's result, bilingual wording, and the lab's pods that more than one
step refers to.

The lab's numbers and names are set in the step modules (this one for
what several steps share); the lab text (steps/lab_text.py) takes them from there.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import fill

PASSED, FAILED, UNVERIFIED = 'passed', 'failed', 'unverified'

# The lab's queue tree is step 1's (steps/queues.py), its root and the queue
# the lab's workloads go to named here once, as steps 1 and 3 write them.
LAB_QUEUE = 'lab'
RESEARCH = 'research'
# GPU quota and limit as given, CPU and memory unlimited: every queue of the lab.
CPU_MEMORY = {'quota': -1, 'limit': -1}
# Pods and objects named by more than one step: p1 (step 2) may be step 6's
# victim; the train and build pods of step 6 tell steps 2 and 5 that the lab
# has moved on; step 7 frees a GPU of a train pod; step 4 patches step 3's
# queue and waits for its pod nl-1; step 8 reads fr-1 of step 7.
P1 = 'p1'
TRAIN_PODS = ('tr-1', 'tr-2')
BUILD_POD = 'bd-1'
TRAIN_CLASS = 'train'
BUILD_CLASS = 'build'
NL1 = 'nl-1'
# The trap queue; its GPU limit is deliberately not written.
NOLIMIT_QUEUE = {'name': 'nolimit', 'parent': LAB_QUEUE, 'gpu_quota': 1, 'gpu_limit': None}
FRACTION_PODS = ('fr-1', 'fr-2')
# The values of KAI's default PriorityClasses the lab's pods name (KAI's chart
# creates them): build is never preempted, train may be.
PRIORITIES = {TRAIN_CLASS: 50, BUILD_CLASS: 100}
# The image and command of every pod the lab writes (the lab text names them; any image with sleep would do).
POD_IMAGE = 'ubuntu:22.04'
POD_COMMAND = ['sleep', 'infinity']


class Step(object):
    """One lab step: its files, how it is solved and how it is checked.

    Its number is its place in the step list (steps/registry.py sets it).
    What it does to the lab beyond its own objects is declared here, so that
    the other steps read it instead of assuming it:

    words      the step's word tables (its checks' and any other words it says)
    values     values(namespace, path) -> the lab text's placeholders of this
               step (path(name): a file in the learner's workdir)
    queues     {queue name: parent} of the queues it creates
    began_by   pods whose arrival is the step's act: when the first of them
               (or KAI's word about it) was stored, the lab had reached it
    evicts     the evictions of KAI it causes (steps/evictions.py's Evicts)
    evictable  its own pods that KAI may evict in a later step (by a declared eviction)
    needs      earlier steps whose objects it works on
    clears     earlier steps whose objects it removes (through their remove)
    deletes    earlier steps' pods it may delete
    remove     remove(runner): deletes the step's objects, for a later step's clears
    objects    objects(namespace) -> {kind: [objects]} it creates in the lab namespace ('pods', 'jobs',
               'podgroups'; 'gang_pods', 'fraction_pods' name some of its pods): registry.lab_objects
    """

    def __init__(self, step_id, title, files, expects, solve, checks, words=(), values=None, queues=None,
                 began_by=(), evicts=(), evictable=(), needs=(), clears=(), deletes=(), remove=None, objects=None):
        self.id = step_id
        self.number = None
        self.title = title
        self.files = files
        self.expects = expects
        self.solve = solve
        self.checks = checks
        self.words = tuple(words)
        self.values = values
        self.queues = dict(queues or {})
        self.began_by = tuple(began_by)
        self.evicts = tuple(evicts)
        self.evictable = tuple(evictable)
        self.needs = tuple(needs)
        self.clears = tuple(clears)
        self.deletes = tuple(deletes)
        self.remove = remove
        self.objects = objects


class Check(object):
    """One graded fact. run(snapshot) returns a Result; words holds its
    desc, fail and hint texts (en, ko) and any mistake-specific ones.
    A check that reads only the learner's files runs even when the cluster
    cannot be read or time is up."""

    def __init__(self, check_id, weight, run, words, files_only=False):
        self.id = check_id
        self.step_id = check_id.split('.', 1)[0]
        self.weight = weight
        self.run = run
        self.words = words
        self.files_only = files_only


class Result(object):
    """A check's outcome: status, the problem (en/ko), the evidence looked at.

    message and hint, when given (en/ko), replace the check's own wording.
    """

    def __init__(self, status, problem=None, evidence=None, hint=None, message=None):
        self.status = status
        self.problem = problem
        self.evidence = evidence
        self.hint = hint
        self.message = message


def passed(evidence=None):
    return Result(PASSED, evidence=evidence)


def failed(problem, evidence=None, hint=None):
    return Result(FAILED, problem, evidence, hint)


def unverified(why, evidence=None):
    return Result(UNVERIFIED, why, evidence)


class Stop(Exception):
    """Raised by a shared reader when its input ends the check (a missing or
    unreadable file, a pod in the wrong namespace); carries the Result."""

    def __init__(self, result):
        super(Stop, self).__init__(result.status)
        self.result = result


def bilingual(en, ko):
    """A text stated in both languages."""
    return {'en': en, 'ko': ko}


def joined(problems):
    """Several problems (each en/ko) as one, separated by '; '."""
    return bilingual('; '.join(p['en'] for p in problems), '; '.join(p['ko'] for p in problems))


def say(entry, lang, **values):
    """A {en, ko} template in lang, filled with values (str.format; a Korean particle as a field's format
    spec, '{name:을}', takes the form its value needs: learner/text.py fill)."""
    template = entry.get(lang) or entry['en']
    try:
        return fill(template, **values)
    except (KeyError, IndexError, AttributeError):
        return template


def say_both(entry, **values):
    """A {en, ko} template filled in both languages."""
    return bilingual(say(entry, 'en', **values), say(entry, 'ko', **values))


def queue_manifest(name, parent, gpu_quota, gpu_limit):
    """A lab queue: GPU quota and limit as given (None: not written), CPU and memory unlimited."""
    return kai.queue_definition(name, parent, resources={
        'gpu': {'quota': gpu_quota, 'limit': gpu_limit}, 'cpu': dict(CPU_MEMORY), 'memory': dict(CPU_MEMORY)})


def gpu_pod(name, namespace, queue, gpus=1, priority_class=None, annotations=None, labels=None):
    """A sleeping pod for KAI; gpus=0 gives it no nvidia.com/gpu limit (fractions)."""
    container = {'name': 'main', 'image': POD_IMAGE, 'command': list(POD_COMMAND)}
    if gpus:
        container['resources'] = {'limits': {kai_gpu.GPU_RESOURCE: gpus}}
    pod = {
        'apiVersion': 'v1', 'kind': 'Pod',
        'metadata': {'name': name, 'namespace': namespace,
                     'labels': dict({kai.QUEUE_LABEL: queue}, **(labels or {}))},
        'spec': {'schedulerName': kai.SCHEDULER_NAME, 'terminationGracePeriodSeconds': 0,
                 'containers': [container]},
    }
    if annotations:
        pod['metadata']['annotations'] = dict(annotations)
    if priority_class:
        pod['spec']['priorityClassName'] = priority_class
    return pod
