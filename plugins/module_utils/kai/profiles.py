# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What differs between KAI-Scheduler versions, as data, in one place.

A profile describes one KAI line (v0.12, v0.17, ...): the Go module and its
packages, the go.mod that builds it, each component's flags as that
version's operator renders them, the scheduler configuration, how its chart
yields the Config, the webhooks, and the lab behaviour switches. The sim's
roles read it through the gsb.kai_lab.kai_profile filters; the solver and
grader through profile_for(version). What the sim's
roles render from a profile (flags, scheduler config, chart values, webhooks,
go.mod) is kai/render.py. This file imports nothing of the
collection: molecule's checks load it on its own for sim_ports().

Layer: the KAI domain; may use the cluster client.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re


class KaiProfileError(ValueError):
    """A KAI version that is not a version, or that no profile covers."""


_VERSION = re.compile(r'^v?(\d+)\.(\d+)\.(\d+)(?:[-+][0-9A-Za-z.-]+)?$')

# The scheduler plugins KAI's operator renders for placement binpack/binpack,
# in its order (pkg/operator/operands/scheduler of each version).
_PLUGINS_V0_12 = [
    'predicates', 'proportion', 'priority', 'nodeavailability', 'resourcetype', 'podaffinity',
    'elastic', 'kubeflow', 'ray', 'subgrouporder', 'taskorder', 'nominatednode',
    'dynamicresources', 'minruntime', 'topology', 'snapshot', 'gpupack', 'nodeplacement',
    'gpusharingorder',
]
# v0.17 adds two scenario generators (priorities 360 and 350, after snapshot):
# without them preempt finds no strategy and the lab's step 6 never preempts.
_PLUGINS_V0_17 = _PLUGINS_V0_12[:16] + ['sg-nodelocalgreedy', 'sg-multinodegang'] + _PLUGINS_V0_12[16:]
PLUGIN_ARGUMENTS = {'nodeplacement': {'cpu': 'binpack', 'gpu': 'binpack'}}
# The plugin that serves the whole cluster (pods with their env, ConfigMaps of
# every namespace, queues) as a zip at SNAPSHOT_PATH of the scheduler's plugin
# server, without authentication (pkg/scheduler/plugins/snapshot): the lab
# leaves it out on both targets (roles/kai_scheduler kai_scheduler_disabled_plugins).
SNAPSHOT_PLUGIN = 'snapshot'
SNAPSHOT_PATH = '/get-snapshot'
_ACTIONS = ['allocate', 'consolidation', 'reclaim', 'preempt', 'stalegangeviction']

_COMPONENTS = ['scheduler', 'binder', 'podgrouper', 'admission', 'queuecontroller', 'podgroupcontroller']
# The images of a released chart that a cluster pulls with the lab's values
# (each profile's chart.images): the operator, the components it makes, and
# crd-upgrader, the image of the chart's install hooks.
_CHART_IMAGES = ['operator'] + _COMPONENTS + ['crd-upgrader']


# Settings some components take only from the environment.
_ENV = {
    # Upstream the plugin server listens on ":<--plugin-server-port>", every
    # interface, with no host flag; the sim's build listens on this host
    # (sim_binaries templates/scheduler.go.j2).
    'scheduler': {'KAI_LAB_SIM_LISTEN_HOST': '{host}'},
    'admission': {
        # controller-runtime reads the serving certificate from
        # $TMPDIR/k8s-webhook-server/serving-certs; admission has no flag for it.
        'TMPDIR': '{sim_dir}/admission',
        # --webhook-addr is only a port, the webhook listens on every interface;
        # the sim's build listens on this host (templates/admission.go.j2).
        'KAI_LAB_SIM_LISTEN_HOST': '{host}',
    },
}


def _components(extra=None, drop=None):
    """Each component's flags; extra/drop adjust them per version (name -> flags)."""
    extra = extra or {}
    drop = drop or {}
    base = [
        ('scheduler', [
            '--scheduler-name={scheduler_name}',
            '--namespace={namespace}',
            '--scheduler-conf={sim_dir}/scheduler-config.yaml',
            '--nodepool-label-key=kai.scheduler/node-pool',
            '--partition-label-value=',
            '--resource-reservation-app-label={reservation_namespace}',
            '--listen-address={host}:{ports[scheduler_metrics]}',
            '--plugin-server-port={ports[scheduler_plugins]}',
            # The pprof server (gin, every interface, --profiler-port) stays
            # off, said explicitly: cmd/scheduler/app/options/options.go of
            # v0.12.0 and of the kai-scheduler/KAI-scheduler module
            # (`fs.BoolVar(&s.EnableProfiler, "enable-profiler", false, ...)`).
            # No flag removes the /debug/pprof/ that net/http/pprof registers
            # on the metrics listener (imported through gin-contrib/pprof).
            '--enable-profiler=false',
        ], 'http://{host}:{ports[scheduler_metrics]}/metrics'),
        ('binder', [
            '--scheduler-name={scheduler_name}',
            '--resource-reservation-namespace={reservation_namespace}',
            '--resource-reservation-service-account={reservation_namespace}',
            '--resource-reservation-app-label={reservation_namespace}',
            '--resource-reservation-pod-image=ubuntu',
            '--scale-adjust-namespace=kai-scale-adjust',
            '--cdi-enabled=false',
            # The operator adds it because the node has run.ai/fake.gpu=true.
            '--fake-gpu-nodes',
            '--metrics-bind-address={host}:{ports[binder_metrics]}',
            '--health-probe-bind-address={host}:{ports[binder_probe]}',
        ], 'http://{host}:{ports[binder_metrics]}/metrics'),
        ('podgrouper', [
            '--scheduler-name={scheduler_name}',
            '--queue-label-key={queue_label}',
            '--nodepool-label-key=kai.scheduler/node-pool',
            '--metrics-bind-address={host}:{ports[podgrouper_metrics]}',
            '--health-probe-bind-address={host}:{ports[podgrouper_probe]}',
        ], 'http://{host}:{ports[podgrouper_probe]}/readyz'),
        ('admission', [
            '--scheduler-name={scheduler_name}',
            '--webhook-addr={ports[admission_webhook]}',
            '--gpu-sharing-enabled={gpu_sharing}',
            '--gpu-pod-runtime-class-name={runtime_class}',
            '--metrics-bind-address={host}:{ports[admission_metrics]}',
            '--health-probe-bind-address={host}:{ports[admission_probe]}',
        ], 'http://{host}:{ports[admission_probe]}/readyz'),
        ('queuecontroller', [
            '--queue-label-key={queue_label}',
            # The queue validation webhook only rejects a Queue without spec.resources.
            '--enable-webhook=false',
            '--metrics-listen-address={host}:{ports[queuecontroller_metrics]}',
        ], 'http://{host}:{ports[queuecontroller_metrics]}/metrics'),
        ('podgroupcontroller', [
            '--scheduler-name={scheduler_name}',
            '--enable-podgroup-webhook=false',
            # KAI parses this flag but never passes it on (its metrics bind
            # :8080); the sim's build passes it on, see sim_binaries.
            '--metrics-bind-address={host}:{ports[podgroupcontroller_metrics]}',
            '--health-probe-bind-address={host}:{ports[podgroupcontroller_probe]}',
        ], 'http://{host}:{ports[podgroupcontroller_probe]}/readyz'),
    ]
    result = []
    for name, args, ready_url in base:
        dropped = list(drop.get(name, ()))
        kept = [arg for arg in args if arg.split('=', 1)[0] not in dropped]
        component = {'name': name, 'args': kept + list(extra.get(name, ())), 'ready_url': ready_url}
        component['env'] = dict(_ENV.get(name, {}))
        result.append(component)
    return result


def _packages(module):
    return dict((name, '%s/cmd/%s' % (module, name)) for name in _COMPONENTS)


_WEBHOOKS = {
    'mutating_configuration': 'mutating-kai-admission',
    'validating_configuration': 'validating-kai-admission',
    'webhook_name': 'admission.{namespace}.svc',
    'match_conditions': [],
}

_V0_12 = {
    'line': 'v0.12',
    'min_version': (0, 12, 0),
    'max_version': (0, 13, 0),
    'note': 'Built from the Go module proxy and tested end to end in CI.',
    'module': 'github.com/NVIDIA/KAI-scheduler',
    'packages': _packages('github.com/NVIDIA/KAI-scheduler'),
    # The control plane is built from the same Go module, at the Kubernetes
    # version KAI's own go.mod requires.
    'kubernetes_version': 'v1.34.1',
    'go_directive': '1.26',
    # KAI's own replace lines: a dependency's replaces do not apply to the
    # module that builds it, so the build's go.mod repeats them.
    'go_mod_replace': [],
    'components': _components(),
    'scheduler_config': {'actions': _ACTIONS, 'plugins': _PLUGINS_V0_12},
    'chart': {
        # Before v0.16 the chart renders `| default "nvidia"`, so "" cannot be
        # set through values: the rendered Config is patched at this path.
        'runtime_class_values_key': 'admission.gpuPodRuntimeClassName',
        'runtime_class_config_patch': 'spec.admission.gpuPodRuntimeClassName',
        # No plugin settings: the chart's SchedulingShard and the operator of v0.12
        # render every plugin, and the scheduler's plugin server listens on every
        # interface (cmd/scheduler/app/server.go: ":%d").
        'plugins_values_key': '',
        'values': {},
        'template_values': {},
        'config_hint': 'KAI v0.12 renders its Config from the chart by default.',
        # Where the released chart's images are (its release workflow writes
        # DOCKER_REGISTRY into values.yaml's global.registry; every image is
        # tagged with the chart's version) and which of them a cluster pulls
        # with the lab's values: the chart's operator and its install hooks'
        # crd-upgrader, and the services the operator makes from the chart's
        # Config. Not pulled: resourcereservation (a binder with
        # --fake-gpu-nodes gives reservation pods "ubuntu" instead), the node
        # scale adjuster and its scaling pod (global.clusterAutoscaling off).
        'registry': 'ghcr.io/nvidia/kai-scheduler',
        'images': _CHART_IMAGES,
    },
    'webhooks': _WEBHOOKS,
    # Lab behaviour: a batch Job becomes one gang PodGroup from 0.14.7 on;
    # from 0.17 KAI clears a PodGroup's conditions once it is scheduled.
    'job_gang': False,
    'clears_conditions': False,
}

_V0_17_MODULE = 'github.com/kai-scheduler/KAI-scheduler'
_V0_17 = {
    'line': 'v0.17',
    'min_version': (0, 17, 0),
    'max_version': (0, 18, 0),
    'note': 'From KAI v0.17.0 run on the sim (solve and grade 100); the Go proxy here serves none of it.',
    'module': _V0_17_MODULE,
    'packages': _packages(_V0_17_MODULE),
    'kubernetes_version': 'v1.35.4',
    'go_directive': '1.26.3',
    'go_mod_replace': [
        'k8s.io/api => k8s.io/api v0.35.4',
        'k8s.io/apimachinery => k8s.io/apimachinery v0.35.4',
    ],
    'components': _components(
        # CDI became a setting of --plugins (off by default); the queue label
        # moved to the scheduler; the RuntimeClass flag of fraction pods is
        # the one the operator renders from gpuFractionRuntimeClassName.
        drop={'binder': ['--cdi-enabled'], 'queuecontroller': ['--queue-label-key'],
              'admission': ['--gpu-pod-runtime-class-name']},
        extra={
            'scheduler': ['--queue-label-key={queue_label}'],
            'binder': ['--qps=20', '--burst=100'],
            'podgrouper': ['--qps=20', '--burst=100'],
            'admission': ['--gpu-fraction-runtime-class-name={runtime_class}'],
        }),
    'scheduler_config': {'actions': _ACTIONS, 'plugins': _PLUGINS_V0_17},
    'chart': {
        'runtime_class_values_key': 'admission.gpuFractionRuntimeClassName',
        'runtime_class_config_patch': '',
        # From v0.13.0 (#1025) the chart's scheduler.plugins becomes the default
        # SchedulingShard's spec.plugins, whose `enabled: false` the operator
        # leaves out of the scheduler's ConfigMap (pkg/apis/kai/v1/
        # schedulingshard_types.go setDefaultPlugins, operands/scheduler/
        # plugin_action_merge.go); v0.13.0 (#989) also binds the plugin server to
        # 127.0.0.1 of the scheduler's pod (cmd/scheduler/app/server.go).
        'plugins_values_key': 'scheduler.plugins',
        'values': {'defaultPriorityClasses': {'enabled': True}},
        # The chart ships its Config in a post-install hook, which `helm
        # template` (the sim) never runs; these render it inline. A Helm
        # install (k3s) keeps the hook, so an existing release stays owned alike.
        'template_values': {'kaiConfig': {'render': True}, 'kaiConfigDeployer': {'enabled': False}},
        'config_hint': 'set the chart values kaiConfig.render: true and kaiConfigDeployer.enabled: false',
        # The project moved to its own organisation at v0.13 (release workflow:
        # DOCKER_REGISTRY ghcr.io/kai-scheduler/kai-scheduler); the same images
        # (the numa placement exporter of its Config runs only with the numa
        # scheduler plugin, which the lab leaves off).
        'registry': 'ghcr.io/kai-scheduler/kai-scheduler',
        'images': _CHART_IMAGES,
    },
    'webhooks': dict(_WEBHOOKS, match_conditions=[
        {'name': 'scheduler-name-match', 'expression': "object.spec.schedulerName == '{scheduler_name}'"},
    ]),
    'job_gang': True,
    'clears_conditions': True,
}

# v0.18 (the lab's v0.18.6 on the VM) follows v0.17 until its own facts are
# known: none of its source is available here.
_V0_18 = dict(copy.deepcopy(_V0_17), line='v0.18', min_version=(0, 18, 0), max_version=(0, 19, 0),
              note='Follows v0.17: the facts of v0.18 are not known yet.', follows='v0.17')

PROFILES = (_V0_12, _V0_17, _V0_18)

# The KAI version the lab text is written for (the k3s VM's).
LAB_VERSION = 'v0.18.6'

# Steps whose form differs from the lab text on a KAI whose profile has the switch off ('since': the first
# version with the lab text's form). Step 6 removes the gang step 5 made: the Job, or the PodGroup and its pods.
FORM_DIFFERENCES = ({'step': 'gang', 'switch': 'job_gang', 'since': 'v0.14.7'},
                    {'step': 'preempt', 'switch': 'job_gang', 'since': 'v0.14.7'})


def form_differences(version):
    """The FORM_DIFFERENCES entries that apply on version (a copy each)."""
    profile = profile_for(version)
    return [dict(entry) for entry in FORM_DIFFERENCES if not profile[entry['switch']]]


LOCKED_VERSIONS = ('v0.12.0',)  # the only version with a committed go.sum (roles/sim_binaries/files/kai-locks)


def known_lines():
    return [profile['line'] for profile in PROFILES]


def parse_version(version):
    """'v0.17.0' -> (0, 17, 0); anything that is not a version raises KaiProfileError."""
    match = _VERSION.match(str(version if version is not None else '').strip())
    if not match:
        raise KaiProfileError(
            "KAI version %r is not a version (like v0.12.0). Known KAI lines: %s."
            % (version, ', '.join(known_lines())))
    return tuple(int(part) for part in match.groups())


def profile_for(version):
    """The profile of the KAI line that version belongs to (a copy, with 'version').

    Keys others rely on: 'job_gang', 'clears_conditions', 'line', 'module'.
    """
    numbers = parse_version(version)
    for profile in PROFILES:
        if profile['min_version'] <= numbers < profile['max_version']:
            result = copy.deepcopy(profile)
            result['version'] = 'v%d.%d.%d' % numbers
            return result
    raise KaiProfileError(
        "No KAI profile covers %s. Known KAI lines: %s (profiles in plugins/module_utils/kai/profiles.py)."
        % (version, ', '.join(known_lines())))


def chart_images(version):
    """The images KAI's released chart of version pulls with the lab's values, as containerd names them:
    <the chart's registry>/<image>:<version> (the chart tags them with its version, its release's tag)."""
    profile = profile_for(version)
    tag = str(version).strip()
    return ['%s/%s:%s' % (profile['chart']['registry'], name, tag) for name in profile['chart']['images']]


# Every port of one sim, as an offset from its port base (kai_lab_sim_port_base): the control plane's (kwokctl)
# and each KAI listener's, all on 127.0.0.1.
SIM_PORT_OFFSETS = {
    'etcd': 1, 'etcd_peer': 2, 'kwok_controller': 3, 'kube_controller_manager': 4, 'kube_scheduler': 5,
    'scheduler_metrics': 10, 'scheduler_plugins': 11, 'binder_metrics': 20, 'binder_probe': 21,
    'podgrouper_metrics': 30, 'podgrouper_probe': 31, 'admission_webhook': 40, 'admission_metrics': 41,
    'admission_probe': 42, 'queuecontroller_metrics': 50, 'podgroupcontroller_metrics': 60,
    'podgroupcontroller_probe': 61, 'kube_apiserver': 143,
}
SIM_PORT_SPAN = max(SIM_PORT_OFFSETS.values()) + 1


def sim_ports(base):
    """name -> port for a sim whose port base is base (1024 < base, base + span <= 65535)."""
    try:
        base = int(base)
    except (TypeError, ValueError):
        raise KaiProfileError('kai_lab_sim_port_base must be a number, not %r' % (base,))
    if base < 1024 or base + SIM_PORT_SPAN > 65535:
        raise KaiProfileError('kai_lab_sim_port_base %d is out of range: the sim uses ports %d..%d; '
                              'choose 1024..%d' % (base, base, base + SIM_PORT_SPAN - 1, 65535 - SIM_PORT_SPAN))
    return dict((name, base + offset) for name, offset in SIM_PORT_OFFSETS.items())
