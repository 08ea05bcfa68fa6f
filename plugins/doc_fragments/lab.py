# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The options of module_utils/client/args.py LAB_ARGS.
    DOCUMENTATION = r'''
options:
  namespace:
    description: The learner's namespace.
    type: str
    default: kai-lab
  workdir:
    description: The learner's directory for the lab's files.
    type: path
    default: /root/gsb-kai
'''
