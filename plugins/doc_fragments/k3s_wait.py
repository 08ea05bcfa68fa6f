# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # What the k3s waits share (k3s_node_wait, k3s_images_wait, k3s_workloads_wait): the options of
    # module_utils/targets/k3s/progress.py WAIT_ARGS (ansible-test's validate-modules holds each module to it)
    # and how they run.
    DOCUMENTATION = r'''
options:
  k3s:
    description: The k3s binary on the VM.
    type: path
    default: /usr/local/bin/k3s
  interval:
    description: Seconds between two looks.
    type: int
    default: 5
attributes:
  check_mode:
    support: full
    description: Only reads.
  action:
    support: full
    description: Runs on the controller; it runs its command on the VM through the connection (as the task's C(become)).
'''
