# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for roles/k3s/tasks/images.yml: which images the VM holds as pinned."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: k3s_image_exact_tags
short_description: The tags of a k3s image whose pinned digest is its content
version_added: 1.0.0
description:
  - Given one image of C(k3s crictl images -o json) and the pinned digests by tag, returns the tags of that image
    whose pinned digest is in its C(repoDigests).
  - Its companion filter C(k3s_image_aliases_held(tags, aliases)) returns the names of I(aliases) (name to fixed tag)
    that are in I(tags) together with their fixed tag, that is names already given to the fixed tag's image.
options:
  _input:
    description: One image, with C(repoTags) and C(repoDigests).
    type: dict
    required: true
  digests:
    description: Pinned digests (C(sha256:...)) by image tag (C(docker.io/library/ubuntu:24.04)).
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Show the tags held at their pinned digest
  ansible.builtin.debug:
    msg: "{{ (listing.stdout | from_json).images | map('gsb.kai_lab.k3s_image_exact_tags', k3s_image_digests) | flatten }}"
'''

RETURN = r'''
_value:
  description: The tags, a list of strings.
  type: list
  elements: string
'''

from ansible_collections.gsb.kai_lab.plugins.module_utils import k3s_images


class FilterModule(object):
    def filters(self):
        return {'k3s_image_exact_tags': k3s_images.exact_tags, 'k3s_image_aliases_held': k3s_images.aliases_held}
