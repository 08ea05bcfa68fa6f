# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r'''
options:
  kubeconfig:
    description:
      - Path to the kubeconfig of the lab cluster. Defaults to the kubernetes
        client's own default (E(KUBECONFIG) or C(~/.kube/config)).
    type: path
  context:
    description: Context in the kubeconfig to use; its current context when omitted.
    type: str
  request_timeout:
    description:
      - Seconds any single API request may take, its whole answer included (one deadline, not a timeout per
        read; a list read in pages takes one such deadline for all its pages).
      - Whatever the timeout, an answer larger than 8 MiB, or an object nested more than 100 levels deep, is refused
        with an error naming it and the bound.
      - The collection's playbooks set it for every module of the action group C(gsb.kai_lab.cluster) from the
        lab's setting C(kai_lab_request_timeout) (C(module_defaults)).
    type: int
    default: 10
attributes:
  action_group:
    description: Use C(group/gsb.kai_lab.cluster) in C(module_defaults) to set its connection options once.
    support: full
    membership:
      - gsb.kai_lab.cluster
requirements:
  - kubernetes >= 24.2.0
'''
