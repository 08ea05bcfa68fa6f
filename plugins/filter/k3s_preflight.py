# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The k3s target's preflight decisions (module_utils/targets/k3s/preflight.py) for roles/k3s/tasks/preflight.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: k3s_preflight
short_description: What keeps a learner VM from taking the k3s lab
version_added: 0.1.0
description:
  - Decides from the VM's facts and probes whether it can take the lab, namely a supported OS and version, the Python the
    VM's environment is pinned for, amd64 or arm64, CPUs, memory and free disk against the stated minimum,
    systemd, a working C(python3 -m venv) and a synchronised clock.
  - Returns one entry per problem, each saying what to do in English (C(en)) and Korean (C(ko)); an empty list
    means the VM passes.
options:
  _input:
    description: The VM's C(ansible_facts), subsets C(min) and C(hardware).
    type: dict
    required: true
  probes:
    description:
      - C(venv_rc) and C(venv_stderr) of C(python3 -m venv) in a temporary directory, C(ntp_synchronized)
        (timedatectl's C(NTPSynchronized)), and C(clock), the VM's clock read between two times of the
        control host (C(before), when the command was sent; C(vm), the VM's C(date +%s); C(after), when
        the answer was back; only a reading outside that window counts as skew), or C(clock_skew) (VM clock
        minus the control host's, seconds) directly.
    type: dict
    required: true
  data_dir:
    description: k3s's data directory, whose filesystem must have the free disk.
    type: string
    default: /var/lib/rancher/k3s
  pythons:
    description: Python versions (C(3.11)) that a pinned set of the VM's packages exists for.
    type: list
    elements: string
  skip:
    description: Checks not to make (C(os), C(python), C(architecture), C(cpus), C(memory), C(disk), C(systemd),
      C(venv), C(time)).
    type: list
    elements: string
    default: []
'''

EXAMPLES = r'''
- name: Check the VM
  ansible.builtin.assert:
    that: problems | length == 0
    fail_msg: "{{ problems | map(attribute='en') | join(' ') }}"
  vars:
    problems: "{{ ansible_facts | gsb.kai_lab.k3s_preflight({'venv_rc': 0, 'ntp_synchronized': 'yes'}) }}"
'''

RETURN = r'''
_value:
  description: The problems, each with C(check) (its name), C(en) and C(ko) (what is wrong and what to do).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s import preflight as k3s_preflight


def preflight(facts, probes, data_dir='/var/lib/rancher/k3s', pythons=None, skip=None):
    if not isinstance(facts, dict) or not isinstance(probes, dict):
        raise AnsibleFilterError('k3s_preflight needs the facts and the probes as dicts')
    return k3s_preflight.check(facts, probes, data_dir=data_dir, pythons=pythons, skip=skip)


class FilterModule(object):
    def filters(self):
        return {'k3s_preflight': preflight}
