#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_lab_owned_objects
short_description: Make the objects provision owns as provision writes them, putting back whatever was changed
version_added: "0.3.0"
description:
  - Provision's write of the objects it owns (KAI's CRDs and chart objects, its Config, fake-gpu-operator's
    namespaces and topology, the lab namespace and the learner's account), on both targets.
  - Each object of O(objects) that is missing is created. One that exists is compared by content with what the API
    server makes of it as provision writes it - a replace (PUT) with the live C(resourceVersion), sent as a dry run,
    so the server's defaults count as written - and, when anything differs, replaced. A field added, a field
    removed and a value changed are each put back (a server-side apply would keep fields another field manager
    added, such as a validation rule patched into a CRD).
  - A replace keeps what the cluster writes itself, which provision never writes - the object's status, the
    C(finalizers) and C(ownerReferences) of its controllers, Helm's ownership label and annotations (C(helm
    upgrade) needs them), a service account token Secret's C(data) and the token controller's uid annotation,
    and the rules an aggregating ClusterRole is given.
  - An object a replace cannot change (the API server refuses it as invalid, for example an immutable C(roleRef) or
    a PriorityClass's C(value)) is deleted and created again, unless it is a Namespace, a
    CustomResourceDefinition or KAI's Config, whose deletion would take what is in them.
  - An object that cannot be put back fails the module with one message per object, in English and Korean -
    which object, what differs, why (the API server's own words on one line) and the command that fixes it by
    hand - never a raw API error; every other object is still put back.
  - Objects are handled in the order given (a CRD before its objects; the kinds the API server serves are read
    from its discovery).
options:
  objects:
    description: The objects as provision writes them, in order.
    type: list
    elements: dict
    default: []
  create_only:
    description:
      - Objects another task owns, created when missing and otherwise left as they are (handled before O(objects)).
    type: list
    elements: dict
    default: []
  kubectl:
    description:
      - The kubectl command a person runs on the lab's host, named in the commands of a failure;
        C(--kubeconfig) with O(kubeconfig) is added to it when O(kubeconfig) is set.
    type: str
    default: kubectl
extends_documentation_fragment:
  - gsb.kai_lab.connection
attributes:
  check_mode:
    support: full
    description: Compares as usual (the replace and the create are sent as dry runs) and reports what it would put back.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Put KAI's CRDs back as the chart writes them
  gsb.kai_lab.kai_lab_owned_objects:
    kubeconfig: ~/.local/state/gsb-kai-lab/sim/kwok/clusters/kai-lab/kubeconfig.yaml
    kubectl: ~/.local/state/gsb-kai-lab/sim/kubectl
    objects: "{{ kai_scheduler_crds }}"

- name: Create the reservation namespace when missing, and put back fake-gpu-operator's topology
  gsb.kai_lab.kai_lab_owned_objects:
    create_only:
      - {apiVersion: v1, kind: Namespace, metadata: {name: kai-resource-reservation}}
    objects:
      - apiVersion: v1
        kind: ConfigMap
        metadata: {name: topology, namespace: gpu-operator}
        data: {topology.yml: "{{ lookup('ansible.builtin.template', 'topology.yml.j2') }}"}
'''

RETURN = r'''
created:
  description: The objects created (in check mode, that would be), as "<Kind> <name>" or "<Kind> <namespace>/<name>".
  returned: always
  type: list
  elements: str
  sample: ["Namespace kai-lab"]
repaired:
  description:
    - 'The objects put back, each with C(object), C(action) (V(replaced), or V(recreated) when it was deleted and
      created again) and C(differences) - what differed from what provision writes, one line per field
      (C(<path>: added (<value>)), C(<path>: removed (provision writes <value>)), C(<path>: <value>, provision writes
      <value>)), at most six and how many more.'
  returned: always
  type: list
  elements: dict
  sample:
    - object: CustomResourceDefinition queues.scheduling.run.ai
      action: replaced
      differences: ['spec.versions[name=v2].schema.openAPIV3Schema.x-kubernetes-validations: added ([{"rule":"false"}])']
lines:
  description: One line per object created or put back, what differed in brackets.
  returned: always
  type: list
  elements: str
  sample:
    - 'CustomResourceDefinition queues.scheduling.run.ai: replaced (spec.versions[name=v2].schema.openAPIV3Schema.x-kubernetes-validations:
      added ([{"rule":"false"}]))'
unchanged:
  description: The objects that were as provision writes them.
  returned: always
  type: list
  elements: str
references:
  description:
    - Each object of O(objects) made as provision writes it, as C(resource) (plural and group, as kubectl takes it),
      C(group), C(kind), C(namespace) (empty for a cluster-wide kind) and C(name); the k3s target records them
      so that its next provision's check finds any of them changed (module gsb.kai_lab.kai_lab_k3s_state).
  returned: always
  type: list
  elements: dict
  sample:
    - {resource: customresourcedefinitions.apiextensions.k8s.io, group: apiextensions.k8s.io,
       kind: CustomResourceDefinition, namespace: '', name: queues.scheduling.run.ai}
refused:
  description:
    - The objects that could not be put back (the module then fails), each with C(object), C(differences), C(why),
      C(command) (what fixes it by hand) and C(msg) (all of it in English and Korean).
  returned: always
  type: list
  elements: dict
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.args import CONNECTION_ARGS
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.module import connect
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.owned import owner as owned_owner
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.owned import words as owned_words

ARGUMENT_SPEC = dict(
    objects=dict(type='list', elements='dict', default=[]),
    create_only=dict(type='list', elements='dict', default=[]),
    kubectl=dict(type='str', default='kubectl'),
)


def kubectl_command(params):
    """The kubectl a person runs, with the module's kubeconfig."""
    if params['kubeconfig']:
        return '%s --kubeconfig=%s' % (params['kubectl'], params['kubeconfig'])
    return params['kubectl']


def main():
    argument_spec = dict(ARGUMENT_SPEC)
    argument_spec.update(CONNECTION_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    owner = owned_owner.Owner(connect(module), check_mode=module.check_mode, kubectl=kubectl_command(params))
    outcome = owner.put_back(params['objects'], params['create_only'])
    changed = bool(outcome['created'] or outcome['repaired'])
    lines = owned_words.outcome_lines(outcome)
    if outcome['refused']:
        module.fail_json(msg=' '.join(refusal['msg'] for refusal in outcome['refused']), changed=changed, lines=lines,
                         **outcome)
    module.exit_json(changed=changed, lines=lines, **outcome)


if __name__ == '__main__':
    main()
