# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
name: lab_steps
short_description: The ids of the KAI-Scheduler lab's steps, in order
version_added: "0.1.0"
description:
  - Returns the step ids C(gsb.kai_lab.kai_lab_step) accepts, in the order
    of the lab text, from the collection's step registry, so a playbook that
    solves the lab step by step need not repeat the list.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Carry out every step in order
  gsb.kai_lab.kai_lab_step:
    step: "{{ item }}"
  loop: "{{ query('gsb.kai_lab.lab_steps') }}"
'''

RETURN = r'''
_raw:
  description: The step ids, e.g. queues, podgroup, nolimit, limit_fix, gang, preempt, fraction, report.
  type: list
  elements: str
'''

from ansible.plugins.lookup import LookupBase

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.registry import STEP_IDS


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        return list(STEP_IDS)
