# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that give the roles the KAI version profiles of module_utils/kai_profiles.py
and what module_utils/kai_profile_render.py renders from them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: kai_profile
short_description: The KAI-Scheduler version profile of a version
version_added: 1.0.0
description:
  - Returns the profile of the KAI line I(_input) belongs to (module path, packages, go.mod replace lines,
    component flags, scheduler configuration, chart values, webhooks, lab behaviour switches C(job_gang) and
    C(clears_conditions)).
  - Fails, naming the known lines, for a version that is not a version or that no profile covers.
  - Companion filters of the same file render a profile for the sim's settings
    C(kai_sim_components), C(kai_scheduler_config), C(kai_chart_values), C(kai_config_patch),
    C(kai_select_config), C(kai_webhooks), C(kai_go_mod), C(kai_tools_go), C(kai_sim_ports).
  - C(kai_sim_record(buildinfo, binaries, own)) gives the sim's record of the KAI it runs (module_utils/kai_running.py)
    from C(go version -m) output of the binaries (name to path); it fails, naming both, when a binary names another
    KAI version than I(_input).
  - C(kai_chart_values(settings, helm_template)) gives the chart values; I(helm_template=false) leaves out those
    only C(helm template) needs (the sim), for a Helm install (k3s).
options:
  _input:
    description: A KAI version such as C(v0.12.0).
    type: string
    required: true
'''

EXAMPLES = r'''
- name: Show whether a batch Job is one gang on the sim's KAI
  ansible.builtin.debug:
    msg: "{{ (kai_lab_sim_kai_version | gsb.kai_lab.kai_profile).job_gang }}"
'''

RETURN = r'''
_value:
  description: The profile, with C(version) set to the normalised version.
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.gsb.kai_lab.plugins.module_utils import kai_profile_render as render, kai_profiles, kai_running


def _wrap(function):
    def call(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except kai_profiles.KaiProfileError as error:
            raise AnsibleFilterError(str(error))
    return call


class FilterModule(object):
    def filters(self):
        return {
            'kai_profile': _wrap(kai_profiles.profile_for),
            'kai_sim_components': _wrap(render.component_args),
            'kai_scheduler_config': _wrap(render.scheduler_config),
            'kai_chart_values': _wrap(render.chart_values),
            'kai_config_patch': _wrap(render.config_patch),
            'kai_select_config': _wrap(render.select_config),
            'kai_webhooks': _wrap(render.webhook_configurations),
            'kai_go_mod': _wrap(render.go_mod),
            'kai_tools_go': _wrap(render.tools_go),
            'kai_sim_ports': _wrap(kai_profiles.sim_ports),
            'kai_sim_record': _wrap(kai_running.sim_record),
        }
