#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_lab_ready
short_description: Prove that the KAI-Scheduler lab works end to end, naming the broken link
version_added: "0.1.0"
description:
  - The lab's readiness gate. Proves, in order, each link the lab's steps rely
    on and stops at the first broken one with a message naming it and what was
    seen last.
  - C(binder) - KAI's binder runs with C(--fake-gpu-nodes) (read from the
    binder process's argv when O(binder_pid_file) is set, else from the
    binder Deployment).
  - C(gpu_pod) - KAI schedules and binds a pod that asks for one GPU.
  - C(fraction) - a pod with C(gpu-fraction) C("0.5") gets KAI's reservation
    pod in O(reservation_namespace), the reservation pod gets the
    C(run.ai/reserve_for_gpu_index) annotation, and the fraction pod is bound.
    A fraction probe bound into a GPU group whose reservation pod KAI's
    binder deleted at the same moment (a race of its reservation sync) is
    created again, up to three times, and the progress says so.
  - C(image) - the probe pods use O(image), the lab pods' image, so it is
    pulled onto the node and then checked in the node's C(status.images).
    With O(pull_images=false) (a KWOK node runs no containers) the link is
    reported as not applicable.
  - When every GPU is held by other pods (a solved lab), the GPU probes are
    skipped and say so, and a CPU pod proves that KAI schedules.
  - Probe pods live in O(probe_namespace), never in the learner's namespace,
    and are deleted before the module returns; it reports no change.
  - Before any probe, the version of the KAI that runs is read (O(kai_record) on the sim, else through the
    API in O(kai_namespace)) and returned with the line saying which steps differ on it from the lab text;
    a version that cannot be read, or one other than O(kai_version), fails the gate as link C(kai_version).
  - After a full pass a fingerprint of what the pass depended on (the
    processes of O(identity_pid_files), the pods of O(identity_namespaces),
    the nodes' GPUs, O(image)) is kept in C(kai-lab-ready.json) in
    O(state_dir), mode 0600. While it is unchanged the probes are not run again
    (links reported C(proven)), unless O(reprove=true). The file is believed only
    when it and O(state_dir) belong to this user (or root) and no one else can
    write them; nothing in the cluster (which others may write) is taken for it.
options:
  probe_namespace:
    description: Namespace of the probe pods; created when missing.
    type: str
    default: kai-lab-probe
  image:
    description: Image of the probe pods; the lab pods' image.
    type: str
    default: ubuntu:22.04
  timeout:
    description:
      - Seconds the whole gate may take, removing its probe pods included; one deadline taken at its start.
      - The links stop 10 seconds (at most a quarter of O(timeout)) before it and name the link they waited for;
        those last seconds are for removing the probe pods (the lab's steps count every GPU, so the gate waits,
        within the deadline, until its probes and their reservation pods are gone).
    type: int
    default: 180
  reservation_namespace:
    description: Namespace of KAI's GPU reservation pods.
    type: str
    default: kai-resource-reservation
  kai_namespace:
    description: Namespace of KAI's Deployments (binder Deployment lookup, and the version that runs when
      O(kai_record) is unset).
    type: str
    default: kai-scheduler
  binder_pid_file:
    description: Pid file of a binder run as a process (the sim). When unset, the binder Deployment is read.
    type: path
  binder_deployment:
    description: Name of KAI's binder Deployment in O(kai_namespace).
    type: str
    default: binder
  pull_images:
    description: Whether the node pulls images (false on a KWOK node, where the image link is not applicable).
    type: bool
    default: true
  identity_pid_files:
    description: Pid files of the lab's processes whose identity (pid and start time) enters the fingerprint.
    type: list
    elements: path
    default: []
  identity_namespaces:
    description: Namespaces whose pods (uid, phase, restarts) enter the fingerprint.
    type: list
    elements: str
    default: []
  reprove:
    description: Run the probes even when the fingerprint is unchanged.
    type: bool
    default: false
  state_dir:
    description:
      - The lab's private state directory (only root or the lab's user can write it), where the fingerprint of the
        last full pass is kept; created with mode 0700 when missing.
      - When unset no fingerprint is kept and the probes run every time.
    type: path
extends_documentation_fragment:
  - gsb.kai_lab.kai_running
  - gsb.kai_lab.connection
attributes:
  check_mode:
    support: full
    description: Reads only; the probe links are reported as skipped.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Prove the sim lab
  gsb.kai_lab.kai_lab_ready:
    kubeconfig: ~/.local/state/gsb-kai-lab/sim/kwok/clusters/kai-lab/kubeconfig.yaml
    state_dir: ~/.local/state/gsb-kai-lab/sim
    binder_pid_file: ~/.local/state/gsb-kai-lab/sim/kai/pids/binder.pid
    kai_record: ~/.local/state/gsb-kai-lab/sim/kai/kai-version.json
    pull_images: false

- name: Prove the k3s lab, probing again whatever the fingerprint says
  gsb.kai_lab.kai_lab_ready:
    identity_namespaces: [kai-scheduler, gpu-operator]
    reprove: true
  register: ready
'''

RETURN = r'''
links:
  description: Each link proved, in order, with status (passed, proven, skipped, not applicable), detail and seconds since the start.
  returned: always
  type: list
  elements: dict
  sample: [{link: binder, status: passed, detail: "process 4242 runs with --fake-gpu-nodes", elapsed: 0.0}]
kai:
  description:
    - The KAI that runs, C(version), C(source) (where it was read), C(lab_version), C(differences) (the
      steps whose form differs on it) and C(line), the same in English and Korean (C(en), C(ko)).
  returned: success
  type: dict
probed:
  description: Whether probe pods were created (false when the fingerprint was unchanged, or in check mode).
  returned: success
  type: bool
elapsed:
  description: Seconds the gate took, cleanup included (at most O(timeout), plus an API call under way at the deadline).
  returned: always
  type: float
progress:
  description: What each wait saw as it changed, with seconds since the start.
  returned: always
  type: list
  elements: str
table:
  description: The links as lines for a person to read.
  returned: always
  type: list
  elements: str
broken_link:
  description: The link that failed.
  returned: failure
  type: str
  sample: fraction
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import running as kai_running
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import kai_forms
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.args import CONNECTION_ARGS
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.output import kai_line
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.module import connect
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import ClusterError
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate.gate import Gate
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate.probes import GateFailure, table

ARGUMENT_SPEC = dict(
    probe_namespace=dict(type='str', default='kai-lab-probe'),
    image=dict(type='str', default='ubuntu:22.04'),
    timeout=dict(type='int', default=180),
    reservation_namespace=dict(type='str', default='kai-resource-reservation'),
    kai_namespace=dict(type='str', default='kai-scheduler'),
    binder_pid_file=dict(type='path'),
    binder_deployment=dict(type='str', default='binder'),
    pull_images=dict(type='bool', default=True),
    identity_pid_files=dict(type='list', elements='path', default=[]),
    identity_namespaces=dict(type='list', elements='str', default=[]),
    reprove=dict(type='bool', default=False),
    state_dir=dict(type='path'),
)


def main():
    argument_spec = dict(ARGUMENT_SPEC)
    argument_spec.update(CONNECTION_ARGS)
    argument_spec.update(kai_running.RUNNING_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    cluster = connect(module)
    kai = kai_forms.describe(kai_running.for_module(module, cluster, broken_link='kai_version'))
    kai['line'] = dict((lang, kai_line(kai, lang)) for lang in ('en', 'ko'))
    gate = Gate(cluster, params['probe_namespace'], params['image'], params['timeout'],
                reservation_namespace=params['reservation_namespace'], kai_namespace=params['kai_namespace'],
                binder_pid_file=params['binder_pid_file'], binder_deployment=params['binder_deployment'],
                pull_images=params['pull_images'], identity_pid_files=params['identity_pid_files'],
                identity_namespaces=params['identity_namespaces'], reprove=params['reprove'],
                check_mode=module.check_mode, state_dir=params['state_dir'])
    try:
        result = gate.run()
    except GateFailure as failure:
        module.fail_json(msg='The lab is not ready: link "%s" is broken after %s s: %s'
                         % (failure.link, gate.elapsed(), failure), broken_link=failure.link, links=gate.links,
                         progress=gate.progress, elapsed=gate.elapsed(), table=table(gate.links))
    except ClusterError as exc:
        module.fail_json(msg='The lab is not ready: %s' % exc, broken_link='api', links=gate.links,
                         progress=gate.progress, elapsed=gate.elapsed() if gate.started else 0.0,
                         table=table(gate.links))
    result['table'] = [kai['line']['en'], kai['line']['ko']] + result['table']
    module.exit_json(changed=False, kai=kai, **result)


if __name__ == '__main__':
    main()
