# -*- coding: utf-8 -*-
"""Issue 40 rows 1, 2 and 8: no task acts as root through a path the learner controls.

The learner owns its home: ~/.kube, ~/.kube/config and its workdir may be
links it planted. Ansible's file, copy, template and command modules resolve
such a path and follow them (row 1: provision's file task chowned the
directory holding kai-lab to the learner; row 2: teardown removed what
~/.kube/config led to; row 8: molecule/learner's own setup copied kubectl
into ~/bin). A task that names a path in a learner's home must go through
a module that opens it one component at a time without following a link.
"""

from __future__ import annotations

import glob
import json
import os
import re

import pytest
import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))

# What names a path inside the learner's home (or the workdir, which lies there when a learner has a login).
LEARNER_PATHS = re.compile(r"kai_lab_learner_home|kai_lab_learner_kubeconfig|kai_lab_workdir\b|kai_lab_grade_dir"
                           r"|getent_passwd'\]\[k3s_learner_user\]\[4\]|\bhome\(\)")
# The modules that open such a path without following a link (module_utils/learner/: workdir_fd, home_file).
SAFE = {
    'gsb.kai_lab.kai_lab_learner_file',  # the learner's ~/.kube/config
    'gsb.kai_lab.kai_lab_workdir',  # the workdir: create, mark, reset
    'gsb.kai_lab.kai_lab_grade',  # reads and writes the workdir through one descriptor
    'gsb.kai_lab.kai_lab_step',  # the solver: the same
    'gsb.kai_lab.kai_lab_sim_state',  # only looks whether the workdir is a real directory
    'gsb.kai_lab.kai_lab_k3s_state',  # only lstat()s the learner's kubeconfig: size and time, never a link's target
    'ansible.builtin.assert',  # touches nothing
    'ansible.builtin.debug',
    'ansible.builtin.set_fact',
}
NOT_MODULES = {'name', 'when', 'become', 'become_user', 'vars', 'register', 'loop', 'loop_control', 'tags', 'notify',
               'changed_when', 'failed_when', 'check_mode', 'no_log', 'delegate_to', 'environment', 'until',
               'retries', 'delay', 'ignore_errors', 'block', 'rescue', 'always', 'args', 'diff', 'listen',
               'run_once', 'throttle', 'timeout', 'async', 'poll', 'any_errors_fatal', 'module_defaults',
               'become_method', 'become_flags', 'connection', 'collections', 'debugger', 'ignore_unreachable'}


def _task_files():
    patterns = ['roles/*/tasks/*.yml', 'roles/*/handlers/*.yml', 'playbooks/*.yml',
                # The scenarios with a learner login (the others' learner is root, in root's own directories).
                'molecule/learner/*.yml', 'molecule/learner/tasks/*.yml', 'molecule/vm/*.yml', 'molecule/k3s/*.yml']
    return sorted(f for p in patterns for f in glob.glob(os.path.join(ROOT, p)))


def _tasks(node):
    if isinstance(node, list):
        for item in node:
            yield from _tasks(item)
    elif isinstance(node, dict):
        if 'hosts' in node or 'import_playbook' in node or 'ansible.builtin.import_playbook' in node:
            for key in ('pre_tasks', 'tasks', 'post_tasks', 'handlers'):
                yield from _tasks(node.get(key))
            return
        yield node
        for key in ('block', 'rescue', 'always'):
            yield from _tasks(node.get(key))


def _acting(task):
    """(module, its arguments) of a task, or None for a block."""
    modules = [k for k in task if k not in NOT_MODULES]
    if not modules:
        return None
    return modules[0], {modules[0]: task[modules[0]], 'args': task.get('args'), 'loop': task.get('loop')}


def learner_path_tasks():
    found = []
    for path in _task_files():
        with open(path) as handle:
            data = yaml.safe_load(handle)
        for task in _tasks(data):
            acting = _acting(task)
            if acting and LEARNER_PATHS.search(json.dumps(acting[1])):
                found.append((os.path.relpath(path, ROOT), task.get('name'), acting[0]))
    return found


def test_the_scan_sees_the_tasks_that_write_the_learners_files():
    """The scan is not empty: it finds the kubeconfig's writer, teardown's removals and the workdir's."""
    modules = set(module for _file, _name, module in learner_path_tasks())
    assert {'gsb.kai_lab.kai_lab_learner_file', 'gsb.kai_lab.kai_lab_workdir'} <= modules


@pytest.mark.parametrize('where, name, module', learner_path_tasks())
def test_a_task_on_a_learner_path_opens_it_without_following_a_link(where, name, module):
    assert module in SAFE, (
        '%s: task "%s" gives a path in the learner\'s home to %s, which follows a link the learner can plant there; '
        'use gsb.kai_lab.kai_lab_learner_file (a file) or kai_lab_workdir (the workdir), or act as the learner'
        % (where, name, module))
