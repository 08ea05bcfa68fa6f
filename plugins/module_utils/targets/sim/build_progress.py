# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The options of gsb.kai_lab.build_progress, shared by its action plugin
(which does the work on the controller) and its module file (which carries
the documentation).

Layer: the targets (sim); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

ARGUMENT_SPEC = dict(
    jid=dict(type='str', required=True),
    log_file=dict(type='path', required=True),
    label=dict(type='str', required=True),
    total=dict(type='int', required=True),
    timeout=dict(type='int', default=3600),
    interval=dict(type='int', default=10),
)
