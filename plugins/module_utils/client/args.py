# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Argument specs shared by the modules, each paired with a doc fragment.

CONNECTION_ARGS is documented by doc_fragments/connection.py (every module
that talks to the cluster); LAB_ARGS by doc_fragments/lab.py (the modules
that solve or grade the lab), as kubernetes.core pairs its client/args.py
with its doc fragments. The workdir's default is the lab's
(learner/workdir_fd.py DEFAULT_WORKDIR), which a module gives
lab_argument_spec: this layer imports no other.

Layer: the cluster client; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

CONNECTION_ARGS = dict(
    kubeconfig=dict(type='path'),
    context=dict(type='str'),
    request_timeout=dict(type='int', default=10),
)

LAB_ARGS = dict(
    namespace=dict(type='str', default='kai-lab'),
    workdir=dict(type='path'),
)


def lab_argument_spec(workdir_default, **options):
    """The spec of a lab module: the lab's and the connection's options plus its own; workdir defaults to workdir_default."""
    spec = dict(LAB_ARGS)
    spec['workdir'] = dict(LAB_ARGS['workdir'], default=workdir_default)
    spec.update(CONNECTION_ARGS)
    spec.update(options)
    return spec
