#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: k3s_node_wait
short_description: Wait until the k3s VM's node is Ready, saying why not yet
version_added: "0.1.0"
description:
  - After k3s starts on the k3s target, waits until its node O(name) is Ready, from one
    C(k3s kubectl get node <name> -o json) on the VM per look.
  - Prints one progress line a person reads when what it says changes, and every 30 s otherwise (the API server does
    not answer yet, the node is not registered yet, or the kubelet's reason it is not Ready, and the time), not a
    retry count.
  - Fails, in English and Korean, when O(timeout) passes, naming the last reason and where to look on the VM.
options:
  name:
    description: The node's name.
    type: str
    required: true
  kubeconfig:
    description: The kubeconfig on the VM.
    type: path
    default: /root/.kube/config
  timeout:
    description: Seconds to wait at most.
    type: int
    default: 300
extends_documentation_fragment:
  - gsb.kai_lab.k3s_wait
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Wait for the node to be Ready
  gsb.kai_lab.k3s_node_wait:
    name: kai-lab-vm
    kubeconfig: /root/.kube/config
    timeout: 600
'''

RETURN = r'''
elapsed:
  description: Seconds waited.
  type: int
  returned: always
looks:
  description: How many times the node was read.
  type: int
  returned: success
why:
  description: Why the node was not Ready when the wait failed.
  type: str
  returned: failure
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s.node import ARGUMENT_SPEC


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg='k3s_node_wait runs as an action plugin on the controller; call it as a task.')


if __name__ == '__main__':
    main()
