# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
name: fake_gpu_node_pool
short_description: The node pool of the lab's simulated GPUs, its label key or its name
version_added: "0.1.0"
description:
  - fake-gpu-operator gives GPUs to the nodes that carry its node-pool label,
    with the pool's name as the value. The lab's label key and pool name are
    set once in the collection (C(module_utils/kai/gpu.py), C(NODE_POOL_LABEL)
    and C(NODE_POOL)), where C(kai-lab doctor) reads them too; the roles take
    them from this lookup, so the node, the operator's topology and the waits
    name the pool the doctor checks.
options:
  _terms:
    description: V(label) for the label key, V(name) for the pool's name.
    type: list
    elements: str
    required: true
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Select the nodes of the lab's simulated GPU node pool
  kubernetes.core.k8s_info:
    kind: Node
    label_selectors:
      - "{{ lookup('gsb.kai_lab.fake_gpu_node_pool', 'label') }}={{ lookup('gsb.kai_lab.fake_gpu_node_pool', 'name') }}"
'''

RETURN = r'''
_raw:
  description:
    - For each term, V(label) the label key (e.g. V(run.ai/simulated-gpu-node-pool)), V(name) the pool (e.g. V(default)).
  type: list
  elements: str
'''

from ansible.errors import AnsibleError
from ansible.plugins.lookup import LookupBase

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        known = {'label': kai_gpu.NODE_POOL_LABEL, 'name': kai_gpu.NODE_POOL}
        unknown = [str(term) for term in terms if term not in known]
        if not terms or unknown:
            raise AnsibleError('gsb.kai_lab.fake_gpu_node_pool takes label (the label key) or name (the pool), not %s'
                               % (', '.join(unknown) or 'nothing'))
        return [known[term] for term in terms]
