#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_gpu_allocation_info
short_description: Who holds the GPUs, as KAI-Scheduler allocated them
version_added: "0.1.0"
description:
  - Reads every pod and reports the whole GPUs held (the sum of
    C(nvidia.com/gpu) limits of placed Pending and Running pods, in total and
    per node), KAI's GPU reservation pods with the device each holds, and the
    GPU-fraction pods with their GPU group and the C(NVIDIA_VISIBLE_DEVICES)
    they received, resolved through their ConfigMap without exec.
  - Fraction pods carry no C(nvidia.com/gpu) limit; the reservation pod holds
    their card as one whole GPU, which is why it is counted.
options:
  reservation_namespace:
    description: Namespace of KAI's GPU reservation pods.
    type: str
    default: kai-resource-reservation
extends_documentation_fragment:
  - gsb.kai_lab.connection
  - gsb.kai_lab.info_module
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Read the GPU ledger
  gsb.kai_lab.kai_gpu_allocation_info:
  register: gpus

- name: Show which device the fraction pods share
  ansible.builtin.debug:
    msg: "{{ gpus.fraction_pods | map(attribute='visible_devices') | unique }}"
'''

RETURN = r'''
gpu_allocated:
  description: Whole GPUs held by placed Pending and Running pods, all namespaces.
  returned: always
  type: int
  sample: 4
by_node:
  description: The same per node.
  returned: always
  type: dict
  sample: {kai-lab-vm: 4}
reservation_pods:
  description: KAI's reservation pods with node, GPU group, reserved device and phase.
  returned: always
  type: list
  elements: dict
fraction_pods:
  description: Pods with a gpu-fraction annotation, with fraction, GPU group and visible devices.
  returned: always
  type: list
  elements: dict
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import reports as kai_reports
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.args import CONNECTION_ARGS
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.module import connect
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import ClusterError


def main():
    argument_spec = dict(reservation_namespace=dict(type='str', default=kai_gpu.RESERVATION_NAMESPACE))
    argument_spec.update(CONNECTION_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    cluster = connect(module)
    try:
        pods = cluster.list('v1', 'Pod')
        configmaps = {}
        for pod in pods:
            if kai_gpu.gpu_fraction(pod) is None:
                continue
            namespace = kai.meta(pod).get('namespace')
            for name in kai_gpu.shared_gpu_configmap_names(pod):
                cm = cluster.get('v1', 'ConfigMap', name, namespace)
                if cm:
                    configmaps.setdefault(namespace, {})[name] = cm
    except ClusterError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, **kai_reports.gpu_allocation(pods, configmaps, module.params['reservation_namespace']))


if __name__ == '__main__':
    main()
