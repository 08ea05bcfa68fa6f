#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_lab_sim_binaries
short_description: Check the sim's built binaries before they are reused, and make a damaged build missing
version_added: "0.3.0"
description:
  - For each build of role C(gsb.kai_lab.sim_binaries) whose output directory is complete (its C(.complete)
    marker), checks every binary named - an ELF file whose headers, segments and sections lie within it (a binary
    cut short fails this), and the sha256 its build recorded (C(.sha256), written by the role's C(files/build.sh)).
  - A binary's sha256 is read only when its stat (device, inode, size, mtime, ctime) is not the one
    O(hash_cache) holds for it; what it reads is added there.
  - A build with a binary cut short or changed is made missing - its markers removed, and those binaries - so
    the role builds it again; RV(damaged) names each binary and why.
  - A build made before manifests gets one written from its binaries, once they are whole.
  - A binary or output directory not owned by the user who runs this, or writable by group or others, fails
    the module, naming the path and the fix (root runs these binaries).
options:
  builds:
    description: The builds of the role.
    type: list
    elements: dict
    required: true
    suboptions:
      dir:
        description: The build's output directory.
        type: path
        required: true
      binaries:
        description: The names of its binaries in it.
        type: list
        elements: str
        default: []
  hash_cache:
    description: The binaries' hash cache (JSON, as module M(gsb.kai_lab.kai_lab_sim_state) keeps it).
    type: path
attributes:
  check_mode:
    support: full
    description: Reports what is damaged; removes and writes nothing.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Check the built binaries before they are reused
  gsb.kai_lab.kai_lab_sim_binaries:
    builds:
      - dir: ~/.cache/gsb-kai-lab/bin/etcd-v3.6.16-4ce22e6567
        binaries: [etcd]
    hash_cache: ~/.cache/gsb-kai-lab/binary-sha256.json
'''

RETURN = r'''
damaged:
  description: Each damaged binary, "<path> <why>"; its build is made missing (in check mode, would be).
  returned: always
  type: list
  elements: str
  sample: ["/root/.cache/gsb-kai-lab/bin/etcd-v3.6.16-4ce22e6567/etcd is cut short (1048576 bytes; its ELF headers,
    segments and sections need 27218082)"]
missing:
  description: The output directories made missing, which the role builds again.
  returned: always
  type: list
  elements: str
'''

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import binaries as sim_binaries
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import provision_record as sim_record


def check(builds, hash_cache, check_mode):
    """(damaged lines, directories made missing); raises sim_binaries.NotPrivate."""
    cache = sim_record.read_hash_cache(hash_cache) if hash_cache else {}
    damaged, missing, read = [], [], {}
    for build in builds:
        directory, names = build['dir'], [str(n) for n in build.get('binaries') or []]
        if not os.path.exists(os.path.join(directory, '.complete')):
            continue  # not built yet, or being built: the role builds it
        problems, hashes = sim_binaries.check_build(directory, names, cache)
        read.update(hashes)
        if problems:
            damaged.extend('%s %s' % (os.path.join(directory, name), why) for name, why in sorted(problems.items()))
            missing.append(directory)
            if not check_mode:
                sim_binaries.make_missing(directory, sorted(problems))
        elif sim_binaries.read_manifest(directory) is None and not check_mode \
                and all(os.path.exists(os.path.join(directory, name)) for name in names):
            read.update(sim_binaries.write_manifest(directory, names, cache))
    if hash_cache and not check_mode:
        sim_record.write_hashes(hash_cache, cache, dict((p, e) for p, e in read.items()
                                                        if os.path.dirname(p) not in missing))
    return damaged, missing


def main():
    module = AnsibleModule(argument_spec=dict(
        builds=dict(type='list', elements='dict', required=True, options=dict(
            dir=dict(type='path', required=True), binaries=dict(type='list', elements='str', default=[]))),
        hash_cache=dict(type='path')), supports_check_mode=True)
    try:
        damaged, missing = check(module.params['builds'], module.params['hash_cache'], module.check_mode)
    except sim_binaries.NotPrivate as exc:
        module.fail_json(msg=str(exc))
    for line in damaged:
        module.warn('%s: its build is made again.' % line)
    module.exit_json(changed=bool(missing), damaged=damaged, missing=missing)


if __name__ == '__main__':
    main()
