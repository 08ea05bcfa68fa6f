# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
name: lab_steps
short_description: The ids of the KAI-Scheduler lab's steps, in order, or what they create
version_added: "0.1.0"
description:
  - Returns the step ids C(gsb.kai_lab.kai_lab_step) accepts, in the order
    of the lab text, from the collection's step registry, so a playbook that
    solves the lab step by step need not repeat the list.
  - With the term V(queues), the names of the queues the steps create,
    children before their parents (what reset removes, and what the
    learner's admission policy lets its account create).
  - With the term V(files), the names of the files the steps ask the
    learner for, in the steps' order (what reset moves out of the workdir).
  - With the term V(objects), one dictionary of the names of what the steps
    create in the lab namespace, by kind, and how many ConfigMaps KAI's
    binder makes for each fraction pod (what the lab namespace's
    ResourceQuota is sized from).
options:
  _terms:
    description:
      - Nothing for the step ids, V(queues) for the queue names, V(files) for
        the learner's files, or V(objects) for the lab namespace's objects.
    required: false
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Carry out every step in order
  gsb.kai_lab.kai_lab_step:
    step: "{{ item }}"
  loop: "{{ query('gsb.kai_lab.lab_steps') }}"

- name: Show the queues the steps create, children first
  ansible.builtin.debug:
    msg: "{{ query('gsb.kai_lab.lab_steps', 'queues') }}"

- name: Show how many pods the steps create in the lab namespace
  ansible.builtin.debug:
    msg: "{{ (query('gsb.kai_lab.lab_steps', 'objects') | first).pods | length }}"

- name: Show the files the steps ask the learner for
  ansible.builtin.debug:
    msg: "{{ query('gsb.kai_lab.lab_steps', 'files') }}"
'''

RETURN = r'''
_raw:
  description:
    - The step ids, e.g. V(queues) first.
    - With V(queues), the queue names, e.g. V(lab) last.
    - With V(files), the learner's file names, e.g. V(queues.yaml) first.
    - With V(objects), one dictionary - C(pods) (every step's pods, e.g. p1), C(jobs) (step 5's Job, KAI
      from v0.14.7), C(podgroups) (step 5's PodGroup made by hand, KAI before it), C(gang_pods),
      C(fraction_pods), each a list of names as the steps declare them, and C(binder_configmaps), the
      ConfigMaps KAI's binder makes in the pod's namespace for each fraction pod (2).
  type: list
  elements: raw
'''

from ansible.errors import AnsibleError
from ansible.plugins.lookup import LookupBase

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        if not terms:
            return list(registry.STEP_IDS)
        if list(terms) == ['queues']:
            return list(registry.QUEUE_NAMES)
        if list(terms) == ['files']:
            return list(registry.FILES)
        if list(terms) == ['objects']:
            return [dict(registry.lab_objects(), binder_configmaps=kai_gpu.BINDER_CONFIGMAPS)]
        raise AnsibleError('gsb.kai_lab.lab_steps takes no term (the step ids), queues (the queue names), files (the '
                           'learner\'s files) or objects (the lab namespace\'s objects), not %s'
                           % ', '.join(str(t) for t in terms))
