# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
name: lab_steps
short_description: The ids of the KAI-Scheduler lab's steps, in order, or the queues they create
version_added: "0.1.0"
description:
  - Returns the step ids C(gsb.kai_lab.kai_lab_step) accepts, in the order
    of the lab text, from the collection's step registry, so a playbook that
    solves the lab step by step need not repeat the list.
  - With the term V(queues), the names of the queues the steps create,
    children before their parents (what reset removes, and what the
    learner's admission policy lets its account create).
options:
  _terms:
    description: Nothing for the step ids, or V(queues) for the queue names.
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
'''

RETURN = r'''
_raw:
  description:
    - The step ids, e.g. queues, podgroup, nolimit, limit_fix, gang, preempt, fraction, report.
    - With V(queues), the queue names, e.g. research, ops, nolimit, lab.
  type: list
  elements: str
'''

from ansible.errors import AnsibleError
from ansible.plugins.lookup import LookupBase

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.registry import QUEUE_NAMES, STEP_IDS


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        if not terms:
            return list(STEP_IDS)
        if list(terms) == ['queues']:
            return list(QUEUE_NAMES)
        raise AnsibleError('gsb.kai_lab.lab_steps takes no term (the step ids) or queues (the queue names), not %s'
                           % ', '.join(str(t) for t in terms))
