#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_podgroup_info
short_description: Read KAI-Scheduler PodGroups with their scheduling reasons, pods and events
version_added: "0.1.0"
description:
  - Lists the PodGroups of a namespace (or one, by name or by a pod that
    belongs to it) with KAI's parsed C(status.schedulingConditions) (each
    reason code and message), the member pods and the events of the
    PodGroup and of its pods, oldest first.
  - KAI v0.17+ clears scheduling conditions once a PodGroup is scheduled; the
    events keep the text until they expire.
options:
  namespace:
    description: Namespace of the PodGroups.
    type: str
    required: true
  name:
    description: Only the PodGroup of this name.
    type: str
  pod:
    description: Only the PodGroup this pod belongs to (its C(pod-group-name) annotation).
    type: str
extends_documentation_fragment:
  - gsb.kai_lab.connection
  - gsb.kai_lab.info_module
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Why is nl-1 Pending?
  gsb.kai_lab.kai_podgroup_info:
    namespace: kai-lab
    pod: nl-1
  register: pg

- name: Show KAI's reasons
  ansible.builtin.debug:
    msg: "{{ pg.podgroups[0].reasons }}"
'''

RETURN = r'''
podgroups:
  description: The PodGroups found.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: PodGroup name.
      type: str
    queue:
      description: The queue it was put in.
      type: str
    min_member:
      description: Pods that must be placed together.
      type: int
    reasons:
      description: KAI's reasons, each with C(reason) (e.g. OverLimit, PodSchedulingErrors) and C(message).
      type: list
      elements: dict
    conditions:
      description: The scheduling conditions as written by KAI.
      type: list
      elements: dict
    pods:
      description: Member pods with phase and node.
      type: list
      elements: dict
    events:
      description: Events of the PodGroup and its pods, oldest first.
      type: list
      elements: dict
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import reports as kai_reports
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.args import CONNECTION_ARGS
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.module import connect
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import ClusterError


def main():
    argument_spec = dict(
        namespace=dict(type='str', required=True),
        name=dict(type='str'),
        pod=dict(type='str'),
    )
    argument_spec.update(CONNECTION_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           mutually_exclusive=[('name', 'pod')])
    params = module.params
    cluster = connect(module)
    try:
        wanted = params['name']
        if params['pod']:
            pod = cluster.get('v1', 'Pod', params['pod'], params['namespace'])
            if pod is None:
                module.fail_json(msg='pod %s does not exist in namespace %s' % (params['pod'], params['namespace']))
            wanted = kai.podgroup_name_of_pod(pod)
            if not wanted:
                module.exit_json(changed=False, podgroups=[], msg='pod %s has no PodGroup: it is not scheduled by KAI '
                                 '(schedulerName %s) or the pod-grouper has not seen it yet'
                                 % (params['pod'], kai.scheduler_name(pod)))
        podgroups = cluster.list(kai.PODGROUP_API, 'PodGroup', params['namespace'])
        pods = cluster.list('v1', 'Pod', params['namespace'])
        events = cluster.list('v1', 'Event', params['namespace'])
    except ClusterError as exc:
        module.fail_json(msg=str(exc))
    selected = [pg for pg in podgroups if wanted is None or kai.name_of(pg) == wanted]
    module.exit_json(changed=False, podgroups=[kai_reports.podgroup_report(pg, pods, events) for pg in selected])


if __name__ == '__main__':
    main()
