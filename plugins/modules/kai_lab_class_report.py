#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_lab_class_report
short_description: Summarise the grades of a class of learners in JSON, CSV, JUnit and HTML
version_added: "0.1.0"
description:
  - Takes, per learner host, the result the M(gsb.kai_lab.kai_lab_grade) task
    registered there (or what Ansible recorded when the host could not be
    reached) and writes in O(dest) C(class.json), C(class.csv),
    C(class-junit.xml) (a testsuite per learner) and C(class.html) (one
    self-contained page, a table of learners by steps with each failing
    cell's messages on hover and on click).
  - A host that could not be reached, or stopped before its grade, is a row
    saying so.
  - Everything a learner controls is escaped. The page carries no script and
    a Content-Security-Policy forbidding any; a CSV cell that a spreadsheet
    would read as a formula (starting with V(=), V(+), V(-), V(@)) is
    prefixed with a quote.
  - Meant to run on the controller (a play on C(localhost)), after the grade
    play.
options:
  grades:
    description:
      - Learner name (the inventory host) to the registered result of its
        grade task, with the grade under C(grade); C(unreachable) and C(msg)
        when the host could not be reached; an empty dict when it was not
        graded.
    type: dict
    required: true
  dest:
    description: Directory the four files are written to; created when missing (with O(directory_mode)).
    type: path
    required: true
  mode:
    description:
      - Permissions of the four files, in octal. Every learner's grades and
        messages are in them, so by default only their owner reads them.
    type: str
    default: '0600'
  directory_mode:
    description: Permissions of O(dest) when this module creates it, in octal.
    type: str
    default: '0700'
attributes:
  check_mode:
    support: full
    description: Computes the summary but writes no file.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Summarise the class on the controller
  gsb.kai_lab.kai_lab_class_report:
    grades: "{{ dict(learners | zip(learners | map('extract', hostvars) | map(attribute='kai_lab_grade', default={}))) }}"
    dest: "{{ inventory_dir }}/class-grade"
  vars:
    learners: "{{ query('ansible.builtin.inventory_hostnames', 'kai_lab') }}"
'''

RETURN = r'''
summary:
  description: The class, as written to class.json (schema_version 1).
  returned: always
  type: dict
  contains:
    counts:
      description: Number of learners, and of those graded, passed, unreachable and not graded.
      type: dict
      sample: {"learners": 4, "graded": 3, "passed": 1, "unreachable": 1, "not_graded": 0}
    steps:
      description: The lab's steps seen in the grades, in lab order, with id, number and title.
      type: list
      elements: dict
    learners:
      description: One row per learner with status, message, score, points, max_points, passed and per step its status and failing checks.
      type: list
      elements: dict
table:
  description: One console line per learner.
  returned: always
  type: list
  elements: str
files:
  description: Files written.
  returned: always
  type: list
  elements: str
'''

import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.class_report import class_summary, console_lines
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.class_report_files import write_summary
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.read import LearnerFileError


def main():
    module = AnsibleModule(argument_spec=dict(grades=dict(type='dict', required=True),
                                              dest=dict(type='path', required=True),
                                              mode=dict(type='str', default='0600'),
                                              directory_mode=dict(type='str', default='0700')),
                           supports_check_mode=True)
    modes = {}
    for option in ('mode', 'directory_mode'):
        try:
            modes[option] = int(module.params[option], 8)
        except ValueError:
            modes[option] = -1
        if not 0 <= modes[option] <= 0o777:
            module.fail_json(msg='%s must be octal permissions like 0600, not %r' % (option, module.params[option]))
    summary = class_summary(module.params['grades'], time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()))
    files = []
    if not module.check_mode:
        try:
            files = write_summary(summary, module.params['dest'], modes['mode'], modes['directory_mode'])
        except (IOError, OSError, LearnerFileError) as exc:
            module.fail_json(msg='could not write the class summary to %s: %s' % (module.params['dest'], exc))
    module.exit_json(changed=bool(files), summary=summary, table=console_lines(summary), files=files)


if __name__ == '__main__':
    main()
