# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The KAI that runs, told in the lab's terms: its version and the steps whose form differs on it.

Layer: the lab's steps. Joins the KAI domain's version profiles (kai/profiles.py)
and what runs (kai/running.py) with the steps' numbers; the grade, kai-lab and
the readiness gate report it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry


def differences(version):
    """The steps whose form differs from the lab text on version: [{'step', 'number', 'since'}]."""
    numbers = dict((step.id, step.number) for step in registry.STEPS)
    return [{'step': entry['step'], 'number': numbers.get(entry['step']), 'since': entry['since']}
            for entry in kai_profiles.form_differences(version)]


def describe(running):
    """What the grade and the gate say of the KAI: version, where read, the lab's version, the steps that differ."""
    return {'version': running.version, 'source': running.source, 'lab_version': kai_profiles.LAB_VERSION,
            'differences': differences(running.version)}
