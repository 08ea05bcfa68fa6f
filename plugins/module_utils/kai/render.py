# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the sim's roles render from a KAI version's profile (kai/profiles.py).

Each function takes the version (and the sim's settings) and returns what a
role writes or applies: the components' flags, the scheduler config, KAI's
chart values and Config, its admission webhooks, and the go.mod/tools.go
that build it. The gsb.kai_lab.kai_profile filters expose them to the roles.

Flags are written with {placeholders} filled from the sim's settings by
component_args(): scheduler_name, namespace, reservation_namespace,
queue_label, gpu_sharing, runtime_class, sim_dir, host and ports[...].

Layer: the KAI domain; may use the cluster client.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import json

try:
    import yaml
except ImportError:  # only chart_objects needs it, on the controller (Ansible's own dependency)
    yaml = None

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai.profiles import (
    PLUGIN_ARGUMENTS, KaiProfileError, profile_for)


def _fill(text, settings):
    try:
        return text.format(**settings)
    except (KeyError, IndexError) as error:
        raise KaiProfileError('KAI profile setting %s is missing (in %r)' % (error, text))


def component_args(version, settings):
    """The sim's components: name, args, env and ready_url with settings filled in."""
    settings = dict(settings)
    settings['gpu_sharing'] = 'true' if settings.get('gpu_sharing') in (True, 'true', 'True') else 'false'
    result = []
    for component in profile_for(version)['components']:
        result.append({
            'name': component['name'],
            'args': [_fill(arg, settings) for arg in component['args']],
            'env': dict((key, _fill(value, settings)) for key, value in component.get('env', {}).items()),
            'ready_url': _fill(component['ready_url'], settings),
        })
    return result


def scheduler_config(version, disabled=()):
    """The scheduler's config.yaml content, as the operator renders it (one tier), without the disabled plugins."""
    config = profile_for(version)['scheduler_config']
    plugins = []
    for name in config['plugins']:
        if name in disabled:
            continue
        plugin = {'name': name}
        if name in PLUGIN_ARGUMENTS:
            plugin['arguments'] = dict(PLUGIN_ARGUMENTS[name])
        plugins.append(plugin)
    return {'actions': ', '.join(config['actions']), 'tiers': [{'plugins': plugins}]}


def _set_path(target, dotted, value):
    keys = dotted.split('.')
    for key in keys[:-1]:
        target = target.setdefault(key, {})
    target[keys[-1]] = value


def chart_values(version, settings, helm_template=True):
    """Helm values of KAI's chart for the lab's settings on this version (helm_template: for `helm template`).

    settings['disabled_plugins']: scheduler plugins to turn off, where the version's chart can (its profile's
    chart.plugins_values_key); the sim's scheduler config leaves the same ones out (scheduler_config)."""
    chart = profile_for(version)['chart']
    values = copy.deepcopy(chart['values'])
    if helm_template:
        values.update(copy.deepcopy(chart['template_values']))
    _set_path(values, 'global.gpuSharing', settings.get('gpu_sharing') in (True, 'true', 'True'))
    _set_path(values, 'global.resourceReservation.namespace', settings['reservation_namespace'])
    _set_path(values, chart['runtime_class_values_key'], settings.get('runtime_class', ''))
    disabled = settings.get('disabled_plugins') or []
    if not isinstance(disabled, (list, tuple)) or not all(isinstance(name, str) and name for name in disabled):
        raise KaiProfileError('disabled_plugins must be a list of scheduler plugin names, not %r' % (disabled,))
    if chart['plugins_values_key'] and disabled:
        _set_path(values, chart['plugins_values_key'], dict((name, {'enabled': False}) for name in disabled))
    return values


def chart_objects(rendered, kinds):
    """The objects of a `helm template` render whose kind is in kinds, and its
    CRDs with their hash (sha256 of their sorted JSON), parsed in one pass:
    KAI's chart is 0.8 MB of YAML (the Config's CRD alone is 650 kB), which
    Jinja filters took 1.4 s to parse, select and hash."""
    if yaml is None:
        raise KaiProfileError('reading the chart render needs PyYAML (pip install pyyaml)')
    loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
    try:
        documents = list(yaml.load_all(rendered, Loader=loader))
    except yaml.YAMLError as error:
        raise KaiProfileError('the chart render is not YAML: %s' % error)
    objects = [doc for doc in documents if isinstance(doc, dict) and doc.get('kind') in kinds]
    crds = [obj for obj in objects if obj['kind'] == 'CustomResourceDefinition']
    digest = hashlib.sha256(json.dumps(crds, sort_keys=True).encode('utf-8')).hexdigest()
    return {'objects': objects, 'crds': crds, 'crds_hash': digest}


def select_config(version, objects):
    """The one Config of a chart render, corrected for the lab; else KaiProfileError naming the values."""
    profile = profile_for(version)
    configs = [obj for obj in objects if isinstance(obj, dict) and obj.get('kind') == 'Config']
    if len(configs) != 1:
        raise KaiProfileError(
            "KAI %s's chart rendered %d Config objects, not exactly one: %s. "
            "Without it KAI's components run unconfigured." % (profile['version'], len(configs), profile['chart']['config_hint']))
    return configs[0]


def config_patch(version, settings):
    """What to merge into the rendered Config (empty when the chart sets it all)."""
    path = profile_for(version)['chart']['runtime_class_config_patch']
    patch = {}
    if path:
        _set_path(patch, path, settings.get('runtime_class', ''))
    return patch


def webhook_configurations(version, settings, ca_bundle):
    """KAI's pod admission webhooks, pointed at the local admission process by URL."""
    webhooks = profile_for(version)['webhooks']
    name = _fill(webhooks['webhook_name'], settings)
    conditions = [dict(item, expression=_fill(item['expression'], settings)) for item in webhooks['match_conditions']]
    url = 'https://%s:%s' % (settings['host'], settings['ports']['admission_webhook'])
    selector = {'matchExpressions': [{'key': 'kubernetes.io/metadata.name', 'operator': 'NotIn',
                                      'values': ['kube-system', settings['namespace']]}]}
    common = {'admissionReviewVersions': ['v1'], 'failurePolicy': 'Fail', 'sideEffects': 'None',
              'timeoutSeconds': 10, 'namespaceSelector': selector, 'name': name}
    if conditions:
        common['matchConditions'] = conditions
    mutating = dict(common, clientConfig={'url': url + '/mutate--v1-pod', 'caBundle': ca_bundle},
                    rules=[{'apiGroups': [''], 'apiVersions': ['v1'], 'operations': ['CREATE'],
                            'resources': ['pods'], 'scope': 'Namespaced'}],
                    reinvocationPolicy='IfNeeded')
    validating = dict(common, clientConfig={'url': url + '/validate--v1-pod', 'caBundle': ca_bundle},
                      rules=[{'apiGroups': [''], 'apiVersions': ['v1'], 'operations': ['CREATE', 'UPDATE'],
                              'resources': ['pods'], 'scope': 'Namespaced'}])
    return [
        {'apiVersion': 'admissionregistration.k8s.io/v1', 'kind': 'MutatingWebhookConfiguration',
         'metadata': {'name': webhooks['mutating_configuration']}, 'webhooks': [mutating]},
        {'apiVersion': 'admissionregistration.k8s.io/v1', 'kind': 'ValidatingWebhookConfiguration',
         'metadata': {'name': webhooks['validating_configuration']}, 'webhooks': [validating]},
    ]


def go_mod(version, requires=None):
    """The head of the go.mod that builds this KAI version, its control plane
    and the tools built with it (requires: module path to version, e.g. Helm's,
    which then compiles against KAI's Kubernetes libraries instead of its own).

    For a locked version the committed go.mod is this head resolved by
    `go mod tidy`; otherwise the build resolves it through the Go proxy.
    """
    profile = profile_for(version)
    required = {profile['module']: profile['version'], 'k8s.io/kubernetes': profile['kubernetes_version']}
    required.update(requires or {})
    lines = [
        'module gsb.kai_lab/sim/kai', '',
        'go %s' % profile['go_directive'], '',
        'require (',
    ] + ['\t%s %s' % (module, required[module]) for module in sorted(required)] + [')']
    for replace in profile['go_mod_replace']:
        lines += ['', 'replace %s' % replace]
    return '\n'.join(lines) + '\n'


def tools_go(version, packages=()):
    """A tools.go that makes every package to build a dependency of the module
    (packages: those of the tools go_mod's requires add)."""
    profile = profile_for(version)
    imports = sorted(profile['packages'].values()) + [
        'k8s.io/kubernetes/cmd/kube-apiserver', 'k8s.io/kubernetes/cmd/kube-controller-manager',
        'k8s.io/kubernetes/cmd/kube-scheduler', 'k8s.io/kubernetes/cmd/kubectl'] + sorted(packages)
    return '//go:build tools\n\npackage kai\n\nimport (\n%s)\n' % ''.join('\t_ "%s"\n' % p for p in imports)
