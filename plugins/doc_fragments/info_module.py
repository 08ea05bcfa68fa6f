# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # What the *_info modules share: they only read.
    DOCUMENTATION = r'''
attributes:
  check_mode:
    support: full
    description: Reads only.
'''
