# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The options of module_utils/client/args.py LAB_ARGS; workdir's default is module_utils/learner/workdir_fd.py
    # DEFAULT_WORKDIR (tests/unit/test_one_source.py holds this copy to it, ansible-test's validate-modules the modules).
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
