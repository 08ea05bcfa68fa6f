#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_lab_sim_state
short_description: Tell whether a running sim lab is already as provision would make it
version_added: "0.3.0"
description:
  - With O(mode=record) (the end of a full provision; reported as no change, like the readiness gate's fingerprint),
    records in O(state_dir) what the provision made, as
    O(spec) names it - each component's pid, start time, argv, binary (and its sha256) and port; the sha256 and
    mode of the files it wrote; links; directories; certificates; a hash of each API object it applied (without
    status and the fields the server writes) or of every object of a kind; the chart hash its CRDs carry; and
    the readiness gate's fingerprint - together with the digest of O(inputs) and O(input_paths).
  - With O(mode=check) (the start of a provision), takes the same snapshot now, with one list per kind (and namespace)
    from the API server, and compares. The lab is unchanged when every component named in O(rendered_args) runs the
    arguments given there (what the profile renders now); the inputs digest is the same (so the roles would render
    the same argv and objects); every component is alive with the recorded pid and start time, runs the recorded
    argv from the recorded binary, still on disk with the same hash, and listens on its port; no certificate
    expires within its renew days (recorded with it, else O(cert_renew_days)); every file, link, object and CRD
    equals the record (a CRD by its whole spec as well as its chart hash; every object of a kind in C(kinds), so one
    provision did not make is a difference); and the gate's fingerprint is the one of its last full pass.
  - Namespaced kinds are listed only in the namespaces the spec names (never across every namespace). An object
    that cannot be read (nested too deep, too large) does not fail the record; a list a foreign object makes
    unreadable is read again name by name, and an object of the spec that cannot be read is recorded so, with a
    warning naming it; a check then names it as a difference.
  - A check that fails for any reason (an object that cannot be read, an error of the module itself) is not a
    failure; the lab is then changed, and the first difference says why in one line.
  - When anything differs (or O(forget=true)), the record is removed, so only a provision that completes records
    again. The result names what differed first.
options:
  mode:
    description: V(check) compares the lab with the record; V(record) writes the record.
    type: str
    choices: [check, record]
    default: check
  state_dir:
    description: The sim's state directory; the record is C(provisioned.json) in it.
    type: path
    required: true
  inputs:
    description: The settings the roles render from (the lab's variables); their digest is part of the record.
    type: raw
    default: {}
  input_paths:
    description: Directories whose files (names and content) enter the inputs digest (the collection's roles, plugins, playbooks).
    type: list
    elements: path
    default: []
  inputs_digest:
    description: The digest of the inputs as an earlier check returned it (RV(inputs_digest)); used instead of O(inputs).
    type: str
  spec:
    description:
      - What to record (O(mode=record); a check uses the spec of the record).
      - C(components) - list of dicts, each with C(name), C(pid_file) and C(port) (optional), or with C(pid_dir),
        C(names) and C(ports) (name to port; a name without a port is not checked for listening).
      - C(files), C(links), C(dirs) - lists of paths.
      - C(trees) - list of directories whose files (names and content, not Python's compiled files) are recorded
        as one sha256 (the installed C(kai-lab)'s code).
      - C(certs) - list of paths, or of dicts with C(path), C(renew_days) (the role renews the certificate when it
        expires within that many days; default O(cert_renew_days)) and C(setting) (the variable that sets them,
        named when the certificate is found expiring).
      - C(objects) - list of references (C(api_version), C(kind), C(name), C(namespace)) or of the applied objects.
      - C(kinds) - list of dicts with C(api_version), C(kind) and, for a namespaced kind, C(namespaces) (the
        namespaces it is recorded in; without, every namespace); every object of the kind there is recorded.
      - C(crds) - dict with C(names) and C(annotation), the annotation carrying the chart's CRD hash.
      - C(fingerprint) - dict with C(namespace) (the gate's probe namespace), C(pid_files), C(image) and
        C(state_dir) (where the gate keeps the fingerprint of its last full pass, as module M(gsb.kai_lab.kai_lab_ready)).
    type: dict
    default: {}
  rendered_args:
    description:
      - Component name to the arguments (the command line without the program) that provision renders for it now.
        A running component with other arguments makes the lab changed, naming the first flag that differs.
      - Components not named here are compared with the argv of the record only.
    type: dict
    default: {}
  cert_renew_days:
    description: A certificate that expires within this many days makes the lab changed (unless the record gives
      the certificate its own renew days).
    type: int
    default: 30
  forget:
    description: Remove the record whatever the check finds (the caller takes the full path anyway).
    type: bool
    default: false
  hash_cache:
    description:
      - A JSON file of the binaries' sha256, each with the file stat (device, inode, size, mtime, ctime) it
        was taken at. A binary whose stat is the cached one is not read again; the record adds what it hashed.
      - Kept outside I(state_dir), so a provision after a teardown does not hash the binaries again.
      - Omitted, every binary the record does not know is read.
    type: path
extends_documentation_fragment:
  - gsb.kai_lab.connection
attributes:
  check_mode:
    support: full
    description: Compares as usual; neither writes nor removes the record.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Is the sim lab as provision would make it?
  gsb.kai_lab.kai_lab_sim_state:
    state_dir: ~/.local/state/gsb-kai-lab/sim
    kubeconfig: ~/.local/state/gsb-kai-lab/sim/kwok/clusters/kai-lab/kubeconfig.yaml
    inputs: {kai_lab_sim_port_base: 16300}
  register: sim_state

- name: Record what the provision made
  gsb.kai_lab.kai_lab_sim_state:
    mode: record
    state_dir: ~/.local/state/gsb-kai-lab/sim
    kubeconfig: ~/.local/state/gsb-kai-lab/sim/kwok/clusters/kai-lab/kubeconfig.yaml
    inputs: {kai_lab_sim_port_base: 16300}
    hash_cache: ~/.cache/gsb-kai-lab/binary-sha256.json
    spec:
      components:
        - pid_dir: ~/.local/state/gsb-kai-lab/sim/kwok/clusters/kai-lab/pids
          names: [etcd, kube-apiserver]
          ports: {etcd: 16301, kube-apiserver: 16443}
      objects:
        - {api_version: v1, kind: Namespace, name: kai-lab}
'''

RETURN = r'''
unchanged:
  description: Whether the lab is as the last full provision left it (false after O(mode=record)).
  returned: always
  type: bool
differences:
  description: What differs, in the order checked; the first is what differed first.
  returned: always
  type: list
  elements: str
  sample:
    - "binder: not running (pid file /root/.local/state/gsb-kai-lab/sim/kai/pids/binder.pid)"
    - "admission: runs --gpu-sharing-enabled=true, provision renders --gpu-sharing-enabled=false"
lines:
  description: 'One line per component: "<name>: up, unchanged", or the first thing found about it.'
  returned: always
  type: list
  elements: str
  sample: ["kube-apiserver: up, unchanged"]
crds_unchanged_hash:
  description:
    - The chart hash the record's CRDs carry, when every one was compared with the lab and found as the last full
      provision left it (by its whole spec, chart hash and Established condition), whatever else differs; the full
      path need not send KAI's CRDs again while the chart's hash is this one. Empty without a record of this
      format, when the API server did not answer, when a CRD differs, and after O(mode=record).
  returned: always
  type: str
inputs_digest:
  description: The sha256 of O(inputs) and O(input_paths) (or O(inputs_digest) when given).
  returned: always
  type: str
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import differences as sim_differences
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import provision_record as sim_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import state as sim_state
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.args import CONNECTION_ARGS
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.module import connect, require_libraries
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import Cluster, ClusterError

ARGUMENT_SPEC = dict(
    mode=dict(type='str', choices=['check', 'record'], default='check'),
    state_dir=dict(type='path', required=True),
    inputs=dict(type='raw', default={}),
    input_paths=dict(type='list', elements='path', default=[]),
    inputs_digest=dict(type='str'),
    spec=dict(type='dict', default={}),
    rendered_args=dict(type='dict', default={}),
    cert_renew_days=dict(type='int', default=30),
    forget=dict(type='bool', default=False),
    hash_cache=dict(type='path'),
)


def record(module, digest):
    """The end of a full provision: write what it made."""
    params = module.params
    spec = sim_record.normalize_spec(params['spec'])
    cluster = connect(module)
    cache = sim_record.read_hash_cache(params['hash_cache']) if params['hash_cache'] else {}
    try:
        now = sim_state.snapshot(spec, cluster, sim_state.System(sim_record.known_hashes(None, cache)))
    except ClusterError as exc:
        module.fail_json(msg='Cannot record the provisioned sim: %s' % exc)
    for line in sim_state.unreadable(now):
        module.warn('The record of the provisioned sim could not read %s. The next provision takes the full path '
                    'until that object is deleted or mended.' % line)
    now.update(version=sim_record.RECORD_VERSION, inputs=digest, spec=spec)
    if not module.check_mode:
        sim_record.write_record(params['state_dir'], now)
        if params['hash_cache']:
            sim_record.write_hash_cache(params['hash_cache'], cache, now)
    # Bookkeeping of the provision, as the gate's fingerprint: not a change of the lab.
    module.exit_json(changed=False, unchanged=False, inputs_digest=digest, differences=[], lines=[],
                     crds_unchanged_hash='')


def compare(params, digest, recorded, connect_cluster):
    """(differences, lines, the chart hash of CRDs as recorded or '') between the record and the lab now;
    connect_cluster() gives the Cluster."""
    spec = (recorded or {}).get('spec')
    now, lines = {}, []
    if spec:
        cache = sim_record.read_hash_cache(params['hash_cache']) if params['hash_cache'] else {}
        system = sim_state.System(sim_record.known_hashes(recorded, cache))
        now = sim_state.machine_state(spec, system)
        try:
            # A kubeconfig gone, or an API server down, is a difference, not a failure: the full path mends it.
            now.update(sim_state.cluster_state(spec, connect_cluster(), system))
        except ClusterError as exc:
            now['api_error'] = str(exc)
        now['inputs'] = digest
    found = sim_differences.differences(recorded, now, params['cert_renew_days'], sim_differences.utc_now(),
                                        rendered=params['rendered_args'])
    if spec:
        lines = sim_differences.component_lines(now, found)
    return found, lines, sim_differences.crds_as_recorded(recorded, now)


def safe_compare(params, digest, recorded, connect_cluster):
    """As compare(); a check that fails for any reason is one difference saying why (the full path then runs)."""
    try:
        return compare(params, digest, recorded, connect_cluster)
    except Exception as exc:  # pylint: disable=broad-exception-caught
        text = (str(exc).splitlines() or [''])[0][:200]
        return ['the state check failed (%s: %s), so the full provision runs' % (type(exc).__name__, text)], [], ''


def check(module, digest):
    """The start of a provision: compare the lab with the record."""
    params = module.params
    recorded = sim_record.read_record(params['state_dir'])
    if (recorded or {}).get('spec'):
        require_libraries(module)
    found, lines, crds_hash = safe_compare(params, digest, recorded, lambda: Cluster(
        params['kubeconfig'], params['context'], params['request_timeout'], light=True))
    unchanged = not found and not params['forget']
    if not unchanged and not module.check_mode:
        sim_record.forget_record(params['state_dir'])
    module.exit_json(changed=False, unchanged=unchanged, inputs_digest=digest, differences=found, lines=lines,
                     crds_unchanged_hash=crds_hash)


def main():
    argument_spec = dict(ARGUMENT_SPEC)
    argument_spec.update(CONNECTION_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    digest = params['inputs_digest'] or sim_record.inputs_digest(params['inputs'], params['input_paths'])
    if params['mode'] == 'record':
        record(module, digest)
    check(module, digest)


if __name__ == '__main__':
    main()
