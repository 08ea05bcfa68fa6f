# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The options of module_utils/kai/running.py RUNNING_ARGS.
    DOCUMENTATION = r'''
options:
  kai_record:
    description:
      - The sim's record of the KAI it provisioned, C(<sim state>/kai/kai-version.json), written by the
        C(gsb.kai_lab.kai_scheduler) role. The version of the KAI that runs is read from it.
      - When unset (k3s), the version is read through the API in O(kai_namespace) instead, from the image tag
        of the Deployment that runs KAI's C(scheduler) image, else from the chart version of the deployed Helm
        release C(kai-scheduler).
      - A version that cannot be read fails the task before any work, naming what was looked at.
      - Before v0.14.7 a batch Job is not grouped into one PodGroup, so step C(gang) uses an explicit
        PodGroup of three pods on such a KAI instead of the lab's Job.
    type: path
  kai_namespace:
    description: Namespace of KAI's Deployments and Helm release, read when O(kai_record) is unset.
    type: str
    default: kai-scheduler
  kai_version:
    description:
      - A check, not a setting. When set, the KAI version that runs (read as O(kai_record) says) must be
        this one, or the task fails before any work, naming both.
    type: str
'''
