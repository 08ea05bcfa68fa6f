# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options and setup shared by the collection's modules.

Layer: the cluster client; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import traceback

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import (
    HAS_KUBERNETES, KUBERNETES_IMPORT_ERROR, Cluster, ClusterError)

# The solver and the grader read the learner's YAML.
try:
    import yaml  # noqa: F401 pylint: disable=unused-import
    YAML_IMPORT_ERROR = None
except ImportError:
    YAML_IMPORT_ERROR = traceback.format_exc()


def require_libraries(module):
    """fail_json naming the third-party library that is missing, if any."""
    if not HAS_KUBERNETES:
        module.fail_json(msg=missing_required_lib('kubernetes'), exception=KUBERNETES_IMPORT_ERROR)
    if YAML_IMPORT_ERROR:
        module.fail_json(msg=missing_required_lib('PyYAML'), exception=YAML_IMPORT_ERROR)


def connect(module):
    """A Cluster for the module's connection options, or fail_json with why not."""
    require_libraries(module)
    try:
        # Over the standard library when the kubeconfig allows (the kubernetes client's import alone
        # takes half a second, a third of a readiness gate).
        return Cluster(module.params['kubeconfig'], module.params['context'], module.params['request_timeout'],
                       light=True)
    except ClusterError as exc:
        module.fail_json(msg=str(exc))
