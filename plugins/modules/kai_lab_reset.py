#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_lab_reset
short_description: Remove from the cluster what the learner added outside the lab namespace
version_added: "0.3.0"
description:
  - Reset's cluster part outside the lab namespace (the role empties and recreates the namespace itself).
  - Removes the lab's queues (O(queues)), children first, and every other Queue, PriorityClass,
    ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding that provision did not make; and, in every
    namespace but O(namespace), the Jobs, Pods and PodGroups that carry one of the lab's queues (label
    C(kai.scheduler/queue)), which would hold the lab's GPUs. It does not wait for their pods to end.
  - There too, the controllers that would make such pods again - each workload's controller (its C(ownerReferences)
    entry marked C(controller)) followed up to its top owner (Pod, ReplicaSet, Deployment; Pod, Job, CronJob;
    StatefulSet; DaemonSet), and any Deployment, ReplicaSet, StatefulSet, DaemonSet or CronJob whose own labels
    carry one of the lab's queues (KAI reads a pod's queue from its top owner too) - top owners first.
  - A top owner that stays by the rules below keeps what is below it, and is named in RV(kept); an owner that
    cannot be read, or of another kind, is named in RV(kept) and left.
  - Kept are the lab's own objects (O(own), O(own_labels)); what provision made - the objects the sim's record
    of the last full provision names (O(state_dir)), objects created no later than O(proved_namespace) (the
    readiness gate's, made once KAI and the lab's objects are in), and anything Helm installed (its release
    annotation); objects another object owns (C(ownerReferences)); and Kubernetes' PriorityClasses (C(system-*)).
  - With neither a record nor O(proved_namespace) in the cluster, what provision made cannot be told, so only the
    lab's queues and workloads are removed, and a warning names what was kept.
  - A list an object makes unreadable (nested too deep) is read name by name; such an object is removed by its
    name when the record shows provision did not make it, and otherwise named in a warning.
  - Touches nothing on disk.
options:
  namespace:
    description: The lab namespace; its objects are not this module's (the role empties the namespace).
    type: str
    required: true
  queues:
    description: The lab's queues (the C(gsb.kai_lab.lab_steps) lookup with V(queues)); always removed.
    type: list
    elements: str
    required: true
  own:
    description: The lab's own objects (as the role renders them; only C(kind) and C(metadata.name) are read), kept.
    type: list
    elements: dict
    default: []
  own_labels:
    description: Labels that mark an object as the lab's own (all of them), kept.
    type: dict
    default: {}
  state_dir:
    description:
      - The sim's state directory, whose record of the last full provision (C(provisioned.json)) names what
        provision made. Omitted (a VM), the other rules tell what provision made.
    type: path
  proved_namespace:
    description:
      - The readiness gate's probe namespace; an object created no later than it was made by provision.
    type: str
extends_documentation_fragment:
  - gsb.kai_lab.connection
attributes:
  check_mode:
    support: full
    description: Reports what would be removed and removes nothing.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Remove what the learner added outside the lab namespace
  gsb.kai_lab.kai_lab_reset:
    kubeconfig: ~/.local/state/gsb-kai-lab/sim/kwok/clusters/kai-lab/kubeconfig.yaml
    namespace: kai-lab
    queues: "{{ query('gsb.kai_lab.lab_steps', 'queues') }}"
    own_labels: {app.kubernetes.io/part-of: gsb-kai-lab}
    state_dir: ~/.local/state/gsb-kai-lab/sim
    proved_namespace: kai-lab-probe
'''

RETURN = r'''
removed:
  description: What was removed (in check mode, what would be), as "<Kind> <name>" or "<Kind> <namespace>/<name>".
  returned: always
  type: list
  elements: str
  sample: ["Deployment default/trainer", "ReplicaSet default/trainer-5d8f7c9b6", "Job default/gang",
           "Pod default/trainer-5d8f7c9b6-x2k4p", "Queue research", "PriorityClass urgent"]
kept:
  description:
    - Objects of those kinds left in place that the module could not tell apart, each with why; and workloads
      of the lab's queues kept with their top owner, or whose controller it could not follow.
  returned: always
  type: list
  elements: str
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.args import CONNECTION_ARGS
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.module import connect
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import ClusterError
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets import reset as lab_reset
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets import reset_workloads
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import provision_record as sim_record

ARGUMENT_SPEC = dict(
    namespace=dict(type='str', required=True),
    queues=dict(type='list', elements='str', required=True),
    own=dict(type='list', elements='dict', default=[]),
    own_labels=dict(type='dict', default={}),
    state_dir=dict(type='path'),
    proved_namespace=dict(type='str'),
)


def run(params, cluster, check_mode):
    """(removed, kept) for the module's params."""
    proved = cluster.get('v1', 'Namespace', params['proved_namespace']) if params['proved_namespace'] else None
    provisioned = lab_reset.Provisioned.from_record(
        sim_record.read_record(params['state_dir']) if params['state_dir'] else None,
        ((proved or {}).get('metadata') or {}).get('creationTimestamp'))
    own = set((obj.get('kind'), (obj.get('metadata') or {}).get('name')) for obj in params['own'])
    plan = lab_reset.Plan()
    found = reset_workloads.read_workloads(cluster, params['queues'])
    kept = reset_workloads.controller_plan(cluster, plan, found, params['namespace'], own, params['own_labels'],
                                           provisioned)
    reset_workloads.workload_plan(plan, found, params['namespace'], kept)
    lab_reset.cluster_plan(plan, lab_reset.read_cluster_kinds(cluster), set(params['queues']), own,
                           params['own_labels'], provisioned)
    return lab_reset.carry_out(cluster, plan, check_mode), plan.named


def main():
    argument_spec = dict(ARGUMENT_SPEC)
    argument_spec.update(CONNECTION_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    cluster = connect(module)
    try:
        removed, kept = run(module.params, cluster, module.check_mode)
    except ClusterError as exc:
        module.fail_json(msg='Cannot reset what the learner added outside the lab namespace: %s' % exc)
    if kept:
        module.warn('Reset left %d object(s) it could not tell apart: %s' % (len(kept), '; '.join(kept)))
    module.exit_json(changed=bool(removed), removed=removed, kept=kept)


if __name__ == '__main__':
    main()
