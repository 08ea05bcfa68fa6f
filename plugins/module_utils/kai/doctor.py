# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kai-lab doctor's diagnosis: the faults below the learner's work that break KAI and fake GPUs.

Each fault is {'id': FAULT, 'values': {...}}; grading/cli_doctor.py words
them (what is wrong and what to do, in Korean and English). The pure parts
take API objects; diagnose() reads them with few requests (nodes, one
RuntimeClass, one Namespace and its ServiceAccount, KAI's Config and its
scheduler's ConfigMap, the reservation pods, one SubjectAccessReview, KAI's
health) so a healthy lab answers at once.

What applies where: on k3s fake-gpu-operator is its Helm chart (a
RuntimeClass "nvidia" with handler runc, a status-updater ServiceAccount
that patches KAI's reservation pods through RBAC); on the sim it is a
process of this machine with the lab's kubeconfig and KAI injects no
RuntimeClass, so those two are not asked there (notes say so). On k3s the
scheduler's plugins are read from the ConfigMap KAI's operator writes its
configuration into: the snapshot plugin on is a fault (it hands the whole
cluster to whoever reaches the plugin server); on the sim that configuration
is a file provision writes (a note says so).

Layer: the KAI domain; may use the cluster client.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import time

try:
    import yaml  # the kubernetes client's own dependency
except ImportError:  # the scheduler's plugins are then not judged
    yaml = None

from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import ClusterError
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.health import deployments_ready, probe_urls
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.kinds import CONFIG_API
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles

FAULTS = ('cluster', 'node_pool_label', 'no_gpus', 'runtime_class_missing', 'runtime_class_handler',
          'reservation_namespace', 'reservation_namespace_kai', 'reservation_service_account',
          'status_updater_rights', 'kai_config_missing', 'queue_label_key', 'snapshot_plugin', 'reservation_pods',
          'kai_not_ready')
NOTES = ('runtime_class_sim', 'status_updater_sim', 'snapshot_plugin_sim')

RUNTIME_CLASS = 'nvidia'
# fake-gpu-operator's chart makes RuntimeClass nvidia with handler runc; k3s's own (handler nvidia) needs an
# NVIDIA container runtime a VM of fake GPUs does not have (roles/k3s/README.md).
RUNNABLE_HANDLERS = ('runc',)
# Where fake-gpu-operator runs when kai-lab's settings do not say (roles/fake_gpu_operator's default
# fake_gpu_operator_namespace; provision writes the lab's own into the settings), and its chart's
# status-updater ServiceAccount there (fake-gpu-operator 0.2.0,
# deploy/fake-gpu-operator/templates/status-updater/serviceaccount.yaml, bound to ClusterRole
# fake-status-updater-pod-patch in the release namespace).
FAKE_GPU_OPERATOR_NAMESPACE = 'gpu-operator'
STATUS_UPDATER_ACCOUNT = 'status-updater'
KAI_CONFIG = 'kai-config'
# The key KAI uses when its Config names none (KAI's own default).
KAI_DEFAULT_QUEUE_LABEL_KEY = 'kai.scheduler/queue'
# KAI's operator writes the scheduler's configuration (key config.yaml) into ConfigMap <scheduler name>-<shard>
# of KAI's namespace, from the SchedulingShard (pkg/operator/operands/scheduler/resources_for_shard.go,
# configMapName and configMapForShard, v0.12.0 to v0.17.0); the chart makes the shard "default".
SCHEDULER_SHARD = 'default'
SCHEDULER_CONFIG_KEY = 'config.yaml'
# A reservation pod may be Pending, or not yet annotated, this long while KAI and fake GPUs do their part.
SETTLE_SECONDS = 30
BROKEN_WAITS = ('CrashLoopBackOff', 'ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'CreateContainerError',
                'CreateContainerConfigError', 'RunContainerError')


def fault(fault_id, **values):
    return {'id': fault_id, 'values': values}


def node_faults(nodes):
    """Nodes without the pool label or the fake GPU label, and nodes (or a cluster) with no allocatable GPU."""
    faults = []
    unlabeled = sorted(kai.name_of(n) for n in nodes
                       if kai.labels(n).get(kai_gpu.NODE_POOL_LABEL) != kai_gpu.NODE_POOL
                       or kai.labels(n).get(kai_gpu.FAKE_GPU_LABEL) != 'true')
    if unlabeled:
        faults.append(fault('node_pool_label', nodes=', '.join(unlabeled), label=kai_gpu.NODE_POOL_LABEL,
                            pool=kai_gpu.NODE_POOL, fake=kai_gpu.FAKE_GPU_LABEL))
    without = sorted(kai.name_of(n) for n in nodes if kai_gpu.node_gpus(n) <= 0)
    if without or not nodes:
        faults.append(fault('no_gpus', nodes=', '.join(without) or '-', resource=kai_gpu.GPU_RESOURCE))
    return faults


def runtime_class_faults(runtime_class):
    """k3s: the RuntimeClass nvidia missing, or with a handler the node cannot run."""
    if runtime_class is None:
        return [fault('runtime_class_missing', name=RUNTIME_CLASS)]
    handler = runtime_class.get('handler')
    if handler not in RUNNABLE_HANDLERS:
        return [fault('runtime_class_handler', name=RUNTIME_CLASS, handler=handler,
                      runnable=', '.join(RUNNABLE_HANDLERS))]
    return []


def _reservation(config):
    return (((config or {}).get('spec') or {}).get('binder') or {}).get('resourceReservation') or {}


def reservation_account(config):
    """The ServiceAccount KAI's binder gives its reservation pods: its Config's, else KAI's default
    (constants.DefaultResourceReservationName, kai-resource-reservation, which is also the namespace's name:
    KAI v0.17.0's Config says serviceAccountName kai-resource-reservation; the sim's binder flag the same)."""
    return _reservation(config).get('serviceAccountName') or kai_gpu.RESERVATION_NAMESPACE


def namespace_faults(namespace, config, account):
    """The reservation namespace missing, or without the ServiceAccount of KAI's reservation pods (account: that
    object, None when missing), or KAI's Config naming another namespace than fake GPUs serve."""
    faults = []
    if namespace is None:
        faults.append(fault('reservation_namespace', namespace=kai_gpu.RESERVATION_NAMESPACE))
    elif account is None:
        faults.append(fault('reservation_service_account', namespace=kai_gpu.RESERVATION_NAMESPACE,
                            account=reservation_account(config)))
    kai_namespace = _reservation(config).get('namespace')
    if kai_namespace and kai_namespace != kai_gpu.RESERVATION_NAMESPACE:
        faults.append(fault('reservation_namespace_kai', kai=kai_namespace, namespace=kai_gpu.RESERVATION_NAMESPACE))
    return faults


def config_faults(config):
    """KAI's Config missing, or its queue label key not the lab's."""
    if config is None:
        return [fault('kai_config_missing', name=KAI_CONFIG)]
    key = (((config.get('spec') or {}).get('global') or {}).get('queueLabelKey')) or KAI_DEFAULT_QUEUE_LABEL_KEY
    if key != kai.QUEUE_LABEL:
        return [fault('queue_label_key', kai=key, lab=kai.QUEUE_LABEL)]
    return []


def scheduler_config_name(config):
    """The ConfigMap of the scheduler's configuration: <the Config's scheduler name, else KAI's>-default."""
    name = (((config or {}).get('spec') or {}).get('global') or {}).get('schedulerName') or kai.SCHEDULER_NAME
    return '%s-%s' % (name, SCHEDULER_SHARD)


def scheduler_plugins(configmap):
    """The plugin names of the scheduler configuration in KAI's ConfigMap, or None when there is none to read."""
    text = ((configmap or {}).get('data') or {}).get(SCHEDULER_CONFIG_KEY)
    if not isinstance(text, str) or yaml is None:
        return None
    try:
        parsed = yaml.load(text, Loader=getattr(yaml, 'CSafeLoader', yaml.SafeLoader))
    except yaml.YAMLError:  # not KAI's own writing: nothing to judge
        return None
    if not isinstance(parsed, dict) or not isinstance(parsed.get('tiers'), list):
        return None
    return [plugin.get('name') for tier in parsed['tiers'] if isinstance(tier, dict)
            for plugin in (tier.get('plugins') or []) if isinstance(plugin, dict)]


def plugin_faults(configmap, namespace, name):
    """k3s: KAI's scheduler configured with its snapshot plugin, which serves the whole cluster on its plugin server."""
    if kai_profiles.SNAPSHOT_PLUGIN in (scheduler_plugins(configmap) or []):
        return [fault('snapshot_plugin', plugin=kai_profiles.SNAPSHOT_PLUGIN, path=kai_profiles.SNAPSHOT_PATH,
                      configmap='%s/%s' % (namespace, name))]
    return []


def access_review(namespace=FAKE_GPU_OPERATOR_NAMESPACE):
    """May fake-gpu-operator's status-updater (of its release namespace) patch pods in the reservation namespace?"""
    return {'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SubjectAccessReview', 'metadata': {},
            'spec': {'user': 'system:serviceaccount:%s:%s' % (namespace, STATUS_UPDATER_ACCOUNT),
                     'groups': ['system:serviceaccounts', 'system:serviceaccounts:' + namespace,
                                'system:authenticated'],
                     'resourceAttributes': {'namespace': kai_gpu.RESERVATION_NAMESPACE, 'verb': 'patch',
                                            'resource': 'pods'}}}


def access_faults(review, namespace=FAKE_GPU_OPERATOR_NAMESPACE):
    status = (review or {}).get('status') or {}
    if status.get('allowed'):
        return []
    return [fault('status_updater_rights', account='%s/%s' % (namespace, STATUS_UPDATER_ACCOUNT),
                  namespace=kai_gpu.RESERVATION_NAMESPACE, reason=status.get('reason') or status.get('evaluationError')
                  or '-')]


def _age(pod, now):
    created = kai.meta(pod).get('creationTimestamp')
    try:
        return now - calendar.timegm(time.strptime(created, '%Y-%m-%dT%H:%M:%SZ'))
    except (TypeError, ValueError):
        return SETTLE_SECONDS  # no time on it: judged as settled


def reservation_pod_state(pod, now):
    """Why a reservation pod is broken, or None: failed, a container that cannot start, Pending or not annotated
    with its GPU (fake-gpu-operator's status-updater's work) after SETTLE_SECONDS."""
    if kai.meta(pod).get('deletionTimestamp'):
        return None
    phase = kai.pod_phase(pod) or 'Unknown'
    for status in ((pod.get('status') or {}).get('containerStatuses') or []):
        waiting = (status.get('state') or {}).get('waiting') or {}
        if waiting.get('reason') in BROKEN_WAITS:
            return '%s (%s)' % (waiting['reason'], (waiting.get('message') or '')[:120])
    if phase in ('Failed', 'Unknown'):
        return phase + ((' (%s)' % (pod.get('status') or {})['reason']) if (pod.get('status') or {}).get('reason')
                        else '')
    settled = _age(pod, now) >= SETTLE_SECONDS
    if phase == 'Pending' and settled:
        return 'Pending'
    if phase == 'Running' and settled and not kai_gpu.reserved_gpu(pod):
        return 'no %s annotation' % kai_gpu.RESERVATION_GPU_ANNOTATION
    return None


def reservation_pod_faults(pods, now=None):
    now = time.time() if now is None else now
    broken = []
    for pod in pods:
        why = reservation_pod_state(pod, now)
        if why:
            broken.append('%s: %s' % (kai.name_of(pod), why))
    if broken:
        return [fault('reservation_pods', namespace=kai_gpu.RESERVATION_NAMESPACE, pods='; '.join(sorted(broken)))]
    return []


def health_faults(health):
    down = sorted(name for name, ok in (health or {}).items() if not ok)
    return [fault('kai_not_ready', names=', '.join(down))] if down else []


def kai_health(cluster, kai_namespace, kai_deployments=(), health_urls=None):
    """name -> ready, by the grade's own probes (client/health.py): the sim's URLs, else k3s's Deployments."""
    if health_urls:
        return probe_urls(health_urls)
    return deployments_ready(cluster, kai_namespace, kai_deployments)


def diagnose(cluster, target, kai_namespace, kai_deployments=(), health_urls=None, now=None, fake_gpu_namespace=None):
    """{'faults': [...], 'notes': [...]} of the lab's cluster; a cluster that cannot be read is the 'cluster' fault.

    fake_gpu_namespace: where fake-gpu-operator runs (FAKE_GPU_OPERATOR_NAMESPACE when not given)."""
    notes = []
    fake_gpu_namespace = fake_gpu_namespace or FAKE_GPU_OPERATOR_NAMESPACE
    try:
        nodes = cluster.list('v1', 'Node')
    except ClusterError as exc:
        return {'faults': [fault('cluster', error=str(exc))], 'notes': notes}
    faults = node_faults(nodes)
    try:
        if target == 'sim':
            notes.extend(fault(note) for note in NOTES)
        else:
            faults.extend(runtime_class_faults(cluster.get('node.k8s.io/v1', 'RuntimeClass', RUNTIME_CLASS)))
        config = cluster.get(CONFIG_API, 'Config', KAI_CONFIG)
        namespace = cluster.get('v1', 'Namespace', kai_gpu.RESERVATION_NAMESPACE)
        account = None if namespace is None else cluster.get('v1', 'ServiceAccount', reservation_account(config),
                                                             kai_gpu.RESERVATION_NAMESPACE)
        faults.extend(namespace_faults(namespace, config, account))
        if target != 'sim':
            faults.extend(access_faults(cluster.create(access_review(fake_gpu_namespace)), fake_gpu_namespace))
        faults.extend(config_faults(config))
        if target != 'sim':
            name = scheduler_config_name(config)
            faults.extend(plugin_faults(cluster.get('v1', 'ConfigMap', name, kai_namespace), kai_namespace, name))
        faults.extend(reservation_pod_faults(cluster.list('v1', 'Pod', kai_gpu.RESERVATION_NAMESPACE), now))
    except ClusterError as exc:
        faults.append(fault('cluster', error=str(exc)))
    faults.extend(health_faults(kai_health(cluster, kai_namespace, kai_deployments, health_urls)))
    return {'faults': faults, 'notes': notes}
