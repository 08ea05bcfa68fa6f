# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for roles/k3s/tasks/images.yml: which images the VM holds as pinned."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# Each filter's documentation is in the YAML file of its name beside this one
# (k3s_image_exact_tags.yml, k3s_image_aliases_held.yml), as ansible-doc reads it.

from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s import images as k3s_images


class FilterModule(object):
    def filters(self):
        return {'k3s_image_exact_tags': k3s_images.exact_tags, 'k3s_image_aliases_held': k3s_images.aliases_held}
