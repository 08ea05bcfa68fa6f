#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: k3s_workloads_wait
short_description: Wait until a namespace's Deployments and DaemonSets on the k3s VM are ready, saying why not yet
version_added: "0.1.0"
description:
  - After a chart's install on the k3s target, waits until every Deployment and DaemonSet of O(namespace) (and every
    Deployment named in O(deployments), which an operator may make later) is ready, from one
    C(k3s kubectl get deployments,daemonsets,pods -o json) of the namespace on the VM per look.
  - Prints one progress line a person reads (how many workloads are ready, each pod not ready with its reason).
    On a slow VM (QEMU without KVM) the first container of each image can fail with C(context deadline exceeded)
    while containerd unpacks the image, and comes up on the kubelet's retry; that is waited for and said, not failed.
  - Fails, in English and Korean, when O(timeout) passes (naming each pod not ready and why), or at once when
    O(airgap) is set and a container's image cannot come (C(ErrImageNeverPull), C(ImagePullBackOff), ...), naming
    the image.
options:
  namespace:
    description: The namespace.
    type: str
    required: true
  deployments:
    description: Deployments that must exist and be ready (an operator may create them after the chart's install).
    type: list
    elements: str
    default: []
  label:
    description: What is waited for, for the progress lines and the message.
    type: str
    required: true
  kubeconfig:
    description: The kubeconfig on the VM.
    type: path
    default: /root/.kube/config
  airgap:
    description: The VM pulls nothing; a missing image fails at once.
    type: bool
    default: false
  timeout:
    description: Seconds to wait at most.
    type: int
    default: 600
extends_documentation_fragment:
  - gsb.kai_lab.k3s_wait
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Wait for KAI-Scheduler's Deployments
  gsb.kai_lab.k3s_workloads_wait:
    namespace: kai-scheduler
    deployments: [kai-operator, binder, admission]
    label: KAI-Scheduler
'''

RETURN = r'''
elapsed:
  description: Seconds waited.
  type: int
  returned: always
looks:
  description: How many times the namespace was read.
  type: int
  returned: success
waiting:
  description: Each pod (or Deployment) not ready when the wait failed, with why.
  type: list
  elements: list
  returned: failure
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s.workloads import ARGUMENT_SPEC


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg='k3s_workloads_wait runs as an action plugin on the controller; call it as a task.')


if __name__ == '__main__':
    main()
