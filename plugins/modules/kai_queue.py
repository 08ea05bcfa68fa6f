#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_queue
short_description: Ensure a KAI-Scheduler Queue (scheduling.run.ai/v2) is present with given quotas and limits
version_added: "0.1.0"
description:
  - Creates or updates a KAI-Scheduler Queue with server-side apply, or deletes it.
  - Only the fields given change. A new Queue is created with server-side
    apply (field manager C(gsb.kai_lab.kai_queue)); an existing one gets a
    merge patch of just those fields, so everything else in it stays. A resource limit that is not given is
    not written, and KAI reads an unwritten limit as 0 (nothing may run beyond
    it); the module warns when it creates a queue that way. Use V(-1) for
    unlimited.
  - Reports a diff of the Queue's spec and supports check mode (server-side dry run).
options:
  name:
    description: Name of the Queue (cluster-scoped).
    type: str
    required: true
  state:
    description: Whether the Queue should exist.
    type: str
    choices: [present, absent]
    default: present
  parent:
    description: The parent queue (C(spec.parentQueue)). Work can only go to leaf queues.
    type: str
  display_name:
    description: C(spec.displayName); KAI's messages name the queue by it.
    type: str
  priority:
    description: C(spec.priority) (KAI's default is 100).
    type: int
  gpu:
    description: GPU quota, limit and over-quota weight.
    type: dict
    suboptions:
      quota:
        description: Deserved GPUs; V(-1) means unlimited.
        type: float
      limit:
        description: At most this many GPUs; V(-1) means unlimited; not given means 0.
        type: float
      over_quota_weight:
        description: Share of unused quota this queue may take.
        type: float
  cpu:
    description: CPU quota, limit and over-quota weight, in millicores.
    type: dict
    suboptions:
      quota:
        description: Deserved millicores; V(-1) means unlimited.
        type: float
      limit:
        description: At most this many millicores; V(-1) means unlimited; not given means 0.
        type: float
      over_quota_weight:
        description: Share of unused quota this queue may take.
        type: float
  memory:
    description: Memory quota, limit and over-quota weight, in megabytes.
    type: dict
    suboptions:
      quota:
        description: Deserved megabytes; V(-1) means unlimited.
        type: float
      limit:
        description: At most this many megabytes; V(-1) means unlimited; not given means 0.
        type: float
      over_quota_weight:
        description: Share of unused quota this queue may take.
        type: float
extends_documentation_fragment:
  - gsb.kai_lab.connection
attributes:
  check_mode:
    support: full
    description: Applies with server-side dry run and reports the change.
  diff_mode:
    support: full
    description: Shows the Queue's spec before and after.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: A research queue of 2 deserved and at most 4 GPUs under lab
  gsb.kai_lab.kai_queue:
    name: research
    parent: lab
    gpu: {quota: 2, limit: 4}
    cpu: {quota: -1, limit: -1}
    memory: {quota: -1, limit: -1}

- name: Lift only the GPU limit of a queue
  gsb.kai_lab.kai_queue:
    name: nolimit
    gpu: {limit: -1}
'''

RETURN = r'''
queue:
  description: The Queue as the API server returned it (after a dry run in check mode); null when absent.
  returned: always
  type: dict
summary:
  description: Parent, display name and per-resource quota, limit (with whether it was written) and weight.
  returned: when present
  type: dict
  sample: {name: research, parent: lab, gpu: {quota: 2, limit: 4, limit_set: true, over_quota_weight: 1}}
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.args import CONNECTION_ARGS
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.module import connect
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import ClusterError, comparable

RESOURCE_OPTIONS = dict(quota=dict(type='float'), limit=dict(type='float'), over_quota_weight=dict(type='float'))
# Its own field manager: fields set by others (kubectl, the lab's solver) stay.
FIELD_MANAGER = 'gsb.kai_lab.kai_queue'


def _numbers(values):
    return dict((k, int(v) if v is not None and v == int(v) else v) for k, v in (values or {}).items())


def main():
    argument_spec = dict(
        name=dict(type='str', required=True),
        state=dict(type='str', choices=['present', 'absent'], default='present'),
        parent=dict(type='str'),
        display_name=dict(type='str'),
        priority=dict(type='int'),
        gpu=dict(type='dict', options=RESOURCE_OPTIONS),
        cpu=dict(type='dict', options=RESOURCE_OPTIONS),
        memory=dict(type='dict', options=RESOURCE_OPTIONS),
    )
    argument_spec.update(CONNECTION_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    cluster = connect(module)
    try:
        before = cluster.get(kai.QUEUE_API, 'Queue', params['name'])
        if params['state'] == 'absent':
            changed = before is not None
            if changed:
                cluster.delete(kai.QUEUE_API, 'Queue', params['name'], dry_run=module.check_mode)
            module.exit_json(changed=changed, queue=None,
                             diff={'before': (before or {}).get('spec', {}), 'after': {}})
        resources = dict((r, _numbers(params[r])) for r in ('gpu', 'cpu', 'memory') if params[r])
        wanted = kai.queue_definition(params['name'], params['parent'], params['display_name'],
                                      params['priority'], resources)
        if before is None:
            changed, after = cluster.apply(wanted, dry_run=module.check_mode, field_manager=FIELD_MANAGER)
        else:
            # A merge patch of just the given fields: everything else in the Queue stays as it is.
            after = cluster.patch(kai.QUEUE_API, 'Queue', params['name'], {'spec': wanted['spec']},
                                  dry_run=module.check_mode)
            changed = comparable(before) != comparable(after)
    except ClusterError as exc:
        module.fail_json(msg='queue %s: %s' % (params['name'], exc))
    if before is None:
        unset = [r for r in ('gpu', 'cpu', 'memory') if 'limit' not in ((after.get('spec') or {}).get('resources') or {}).get(r, {})]
        if unset:
            module.warn('queue %s has no %s limit: KAI reads it as 0, so nothing can use that resource in it; '
                        'write limit -1 for unlimited' % (params['name'], ', '.join(unset)))
    module.exit_json(changed=changed, queue=after, summary=kai.queue_summary(after),
                     diff={'before': (before or {}).get('spec', {}), 'after': after.get('spec', {})})


if __name__ == '__main__':
    main()
