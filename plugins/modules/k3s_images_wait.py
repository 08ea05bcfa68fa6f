#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: k3s_images_wait
short_description: Wait until k3s has imported every image the lab needs, showing the import's progress
version_added: "0.1.0"
description:
  - k3s imports the archives of its images directory one by one after it starts, and reports its import done when
    its work queue is empty, that is when the last archive was taken off the queue, not when it was imported; the
    node is Ready while the largest archive still imports. This waits on what k3s lists instead (C(k3s crictl images)),
    until every image in O(needed) is there.
  - Prints one progress line a person reads (how many of the images are there, the archive k3s imports now, what is
    still missing, the time), from one command on the VM per tick that also reads what the running k3s logged of its
    imports.
  - Fails naming the images missing and why, in English and Korean, when O(timeout) passes or k3s failed to import an
    archive (k3s does not try an archive again until it changes).
options:
  needed:
    description: The images, as containerd names them (C(docker.io/library/ubuntu:22.04)).
    type: list
    elements: str
    required: true
  images_dir:
    description: k3s's images directory on the VM, named in the failure message.
    type: path
    default: /var/lib/rancher/k3s/agent/images
  timeout:
    description: Seconds to wait at most.
    type: int
    default: 900
extends_documentation_fragment:
  - gsb.kai_lab.k3s_wait
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Wait for k3s to import the lab's images
  gsb.kai_lab.k3s_images_wait:
    needed:
      - docker.io/library/ubuntu:22.04
      - ghcr.io/kai-scheduler/kai-scheduler/scheduler:v0.17.0
    timeout: 900
'''

RETURN = r'''
images:
  description: The images k3s lists (C(k3s crictl images -o json)'s C(images)), once all needed are there.
  type: list
  elements: dict
  returned: success
imported:
  description: The archives the running k3s logged as imported.
  type: list
  elements: str
  returned: success
elapsed:
  description: Seconds waited.
  type: int
  returned: always
missing:
  description: The images still missing when the wait failed.
  type: list
  elements: str
  returned: failure
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s.images import WAIT_ARGUMENT_SPEC


def main():
    module = AnsibleModule(argument_spec=WAIT_ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg='k3s_images_wait runs as an action plugin on the controller; call it as a task.')


if __name__ == '__main__':
    main()
