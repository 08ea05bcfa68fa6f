# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that give the roles the KAI version profiles of module_utils/kai/profiles.py
and what module_utils/kai/render.py renders from them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# Each filter's documentation is in the YAML file of its name beside this one
# (kai_profile.yml, kai_sim_components.yml, ...), as ansible-doc reads it.

from ansible.errors import AnsibleFilterError

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import render
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import running as kai_running


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
            'kai_chart_images': _wrap(kai_profiles.chart_images),
            'kai_sim_components': _wrap(render.component_args),
            'kai_scheduler_config': _wrap(render.scheduler_config),
            'kai_chart_values': _wrap(render.chart_values),
            'kai_config_patch': _wrap(render.config_patch),
            'kai_select_config': _wrap(render.select_config),
            'kai_chart_objects': _wrap(render.chart_objects),
            'kai_webhooks': _wrap(render.webhook_configurations),
            'kai_go_mod': _wrap(render.go_mod),
            'kai_tools_go': _wrap(render.tools_go),
            'kai_sim_ports': _wrap(kai_profiles.sim_ports),
            'kai_sim_record': _wrap(kai_running.sim_record),
        }
