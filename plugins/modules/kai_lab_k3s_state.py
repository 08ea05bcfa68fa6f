#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_lab_k3s_state
short_description: Tell whether a k3s lab VM is still as the last full provision left it
version_added: "0.3.0"
description:
  - With O(mode=record) (the end of a full provision on the k3s target; reported as no change), records in
    O(record) the digest of the settings, the airgap files' sizes and times on the control host (O(sources)) and a
    snapshot of the VM as O(spec) names it - the size and time of each file provision wrote, the archives of the
    directories k3s imports from, k3s's unit (its state and invocation), the node (Ready, the lab's labels, its
    GPUs), every Deployment's and DaemonSet's generation, observed generation and readiness and every live pod's
    uid and restarts in the namespaces named, the deployed Helm releases' revisions, and the resourceVersions of
    the learner's objects (by their labels).
  - With O(mode=check) (the start of a provision), takes the same snapshot with the record's spec, with one
    C(k3s kubectl) call per kind of thing, and compares; nothing is hashed and nothing waited for. The VM is
    unchanged when the settings' digest and the airgap files are the same, every value of the snapshot equals the
    record, the node is Ready and every workload's controller has observed its generation and is ready.
  - A check that finds a difference, or cannot read the VM, removes the record, so only a provision that completes
    records again; the result names what differed first.
  - Reads the cluster through C(k3s kubectl) with O(kubeconfig) and needs nothing but Python's standard library (it
    runs with the VM's own Python, before the lab's environment is chosen).
options:
  mode:
    description: V(check) compares the VM with the record; V(record) writes the record.
    type: str
    choices: [check, record]
    default: check
  record:
    description: The record's file on the VM (mode 0600).
    type: path
    required: true
  inputs_digest:
    description: The digest of the settings and the collection's files, computed on the control host.
    type: str
    required: true
  sources:
    description: The airgap directory's files on the control host, each path with its size and time.
    type: dict
    default: {}
  spec:
    description:
      - What to record (O(mode=record); a check uses the spec of the record).
      - C(files) - paths of files provision wrote; C(archive_dirs) - directories whose image archives k3s imports.
      - C(node) - the node's name; C(node_labels) - label keys whose values are recorded.
      - C(namespaces) - namespaces whose Deployments, DaemonSets and pods are recorded.
      - C(learner_labels) - the labels of the learner's objects (a dict).
      - C(owned) - the objects provision owns, as module gsb.kai_lab.kai_lab_owned_objects returns their
        C(references) (each C(resource), C(group), C(kind), C(namespace), C(name)); a hash of each is recorded,
        without its status.
    type: dict
    default: {}
  k3s:
    description: The k3s binary.
    type: path
    default: /usr/local/bin/k3s
  kubeconfig:
    description: root's kubeconfig.
    type: path
    default: /root/.kube/config
attributes:
  check_mode:
    support: full
    description: A check only reads; a record in check mode writes nothing.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Check whether the VM is as the last provision left it
  gsb.kai_lab.kai_lab_k3s_state:
    record: /var/lib/gsb-kai-lab/provisioned.json
    inputs_digest: "{{ settings | to_json | hash('sha256') }}"
  register: state
'''

RETURN = r'''
unchanged:
  description: Whether the VM is as recorded (O(mode=check)).
  type: bool
  returned: always
differences:
  description: What differs, one line each (O(mode=check)).
  type: list
  elements: str
  returned: always
seconds:
  description: How long the snapshot took.
  type: float
  returned: always
'''

import json
import os
import subprocess
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s import state as k3s_state


def _run(argv):
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError('%s exited %d: %s' % (' '.join(argv[:4]), done.returncode,
                                                 ' '.join(done.stderr.decode('utf-8', 'replace').split())[:300]))
    return done.stdout.decode('utf-8', 'replace')


def _read(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def main():
    module = AnsibleModule(argument_spec=k3s_state.ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    start = time.time()
    if params['mode'] == 'record':
        spec = dict(params['spec'], k3s=params['k3s'], kubeconfig=params['kubeconfig'])
        try:
            now = k3s_state.snapshot(spec, _run)
        except (RuntimeError, ValueError, KeyError, OSError, subprocess.SubprocessError) as error:
            module.fail_json(msg='The VM could not be read for the provision record: %s' % error)
        if not module.check_mode:
            record = {'schema': k3s_state.SCHEMA, 'inputs_digest': params['inputs_digest'],
                      'sources': params['sources'], 'spec': spec, 'snapshot': now}
            fd = os.open(params['record'] + '.tmp', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, 'w') as handle:
                json.dump(record, handle, sort_keys=True)
            os.rename(params['record'] + '.tmp', params['record'])
        module.exit_json(changed=False, unchanged=True, differences=[], seconds=round(time.time() - start, 2))
    record = _read(params['record'])
    found = []
    if record and record.get('schema') == k3s_state.SCHEMA:
        try:
            now = k3s_state.snapshot(record['spec'], _run)
        except (RuntimeError, ValueError, KeyError, OSError, subprocess.SubprocessError) as error:
            found = ['the VM could not be read: %s' % error]
        else:
            found = k3s_state.differences(record, params['inputs_digest'], params['sources'], now)
    else:
        found = k3s_state.differences(record, params['inputs_digest'], params['sources'], {})
    if found and record and not module.check_mode:
        os.remove(params['record'])
    module.exit_json(changed=False, unchanged=not found, differences=found, seconds=round(time.time() - start, 2))


if __name__ == '__main__':
    main()
