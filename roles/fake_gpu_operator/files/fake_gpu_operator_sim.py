#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fake-gpu-operator's KWOK duties, for the sim target.

The Go module proxy serves no version of github.com/run-ai/fake-gpu-operator,
so its three KWOK components cannot be built here. This process does, for
nodes that opt in with the pool label, what they do (fake-gpu-operator v0.2.0):

- status-updater: writes the per-node topology ConfigMap ``topology-<node>``
  (GPU ids ``GPU-<uuid5(NIL, "<node>-<index>")>``), records which pod holds
  which GPU, and annotates KAI's reservation pods in the reservation namespace
  with ``run.ai/reserve_for_gpu_index: GPU-<uuid>`` (the binder waits for it);
- kwok-gpu-device-plugin: patches node capacity/allocatable ``nvidia.com/gpu``;
- status-exporter-kwok: sets the GPU node labels, ``run.ai/fake.gpu`` included.

Configuration comes from the same environment variables as upstream:
TOPOLOGY_CM_NAME, TOPOLOGY_CM_NAMESPACE, RESOURCE_RESERVATION_NAMESPACE and
KUBECONFIG. It runs until killed; every event is handled idempotently, so a
restart simply catches up.
"""

import logging
import os
import re
import sys
import time
import uuid

import yaml

GPU_RESOURCE = 'nvidia.com/gpu'
RESERVATION_ANNOTATION = 'run.ai/reserve_for_gpu_index'
KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node'
FIELD_MANAGER = 'fake-gpu-operator'

log = logging.getLogger('fake-gpu-operator-sim')


def gpu_id(node_name, index):
    """The deterministic fake GPU id fake-gpu-operator gives GPU index of a node."""
    return 'GPU-%s' % uuid.uuid5(uuid.UUID(int=0), '%s-%d' % (node_name, index))


def pool_of(topology, pool_name):
    """GPU count, product, memory of a node pool from the cluster topology (old or new format)."""
    pools = topology.get('nodePools') or {}
    if pool_name not in pools:
        raise KeyError('nodepool %s not found in cluster topology' % pool_name)
    pool = pools[pool_name] or {}
    if 'gpu' in pool:  # new ClusterConfig format
        overrides = (pool['gpu'] or {}).get('overrides') or {}
        defaults = overrides.get('device_defaults') or {}
        memory = (defaults.get('memory') or {}).get('total_bytes', 0) // (1024 * 1024)
        return len(overrides.get('devices') or []), defaults.get('name', ''), memory
    return int(pool.get('gpuCount', 2)), pool.get('gpuProduct', 'Tesla-K80'), int(pool.get('gpuMemory', 11441))


def pool_label_key(topology, namespace, name):
    """The label key of the nodes to serve (the topology's nodePoolLabelKey), or ValueError naming the ConfigMap."""
    key = topology.get('nodePoolLabelKey')
    if not key or not isinstance(key, str):
        raise ValueError('the cluster topology (ConfigMap %s/%s, topology.yml) names no nodePoolLabelKey: '
                         'provision again to write it' % (namespace, name))
    return key


def node_topology(node_name, count, product, memory, mig_strategy='mixed'):
    """The per-node topology document, GPUs unallocated."""
    return {
        'gpuMemory': memory,
        'gpuProduct': product,
        'gpus': [{'id': gpu_id(node_name, i),
                  'status': {'allocatedBy': {'namespace': '', 'pod': '', 'container': ''},
                             'podGpuUsageStatus': {}}}
                 for i in range(count)],
        'migStrategy': mig_strategy,
    }


def sanitize_label_value(value):
    value = re.sub(r'[^a-zA-Z0-9._-]', '-', value)[:63]
    return re.sub(r'^[^a-zA-Z0-9]+|[^a-zA-Z0-9]+$', '', value)


def gpu_labels(topology):
    return {
        'nvidia.com/gpu.memory': str(topology['gpuMemory']),
        'nvidia.com/gpu.product': sanitize_label_value(topology['gpuProduct']),
        'nvidia.com/mig.strategy': topology.get('migStrategy', 'mixed'),
        'nvidia.com/gpu.count': str(len(topology['gpus'])),
        'nvidia.com/gpu.present': 'true',
        'run.ai/fake.gpu': 'true',
        'nvidia.com/gpu.deploy.dcgm-exporter': 'true',
    }


def whole_gpu_limit(pod):
    containers = (pod.get('spec') or {}).get('containers') or [{}]
    limits = (containers[0].get('resources') or {}).get('limits') or {}
    try:
        return int(limits.get(GPU_RESOURCE, 0))
    except (TypeError, ValueError):
        return 0


def holds_gpus(pod):
    """Pods fake-gpu-operator tracks: on a node, not finished, with whole-GPU limits."""
    status_phase = (pod.get('status') or {}).get('phase')
    return bool((pod.get('spec') or {}).get('nodeName')) and status_phase not in ('Succeeded', 'Failed') \
        and not (pod.get('metadata') or {}).get('deletionTimestamp') and whole_gpu_limit(pod) > 0


def reconcile_allocations(topology, pods):
    """Assign GPUs to the pods that hold them, in index order; free the rest.

    pods are the live GPU-holding pods on the node. Returns True when the
    topology changed.
    """
    live = set((p['metadata']['namespace'], p['metadata']['name']) for p in pods)
    changed = False
    for gpu in topology['gpus']:
        owner = gpu['status']['allocatedBy']
        if owner['pod'] and (owner['namespace'], owner['pod']) not in live:
            gpu['status'] = {'allocatedBy': {'namespace': '', 'pod': '', 'container': ''}, 'podGpuUsageStatus': {}}
            changed = True
    held = {}
    for gpu in topology['gpus']:
        owner = gpu['status']['allocatedBy']
        if owner['pod']:
            held[(owner['namespace'], owner['pod'])] = held.get((owner['namespace'], owner['pod']), 0) + 1
    for pod in sorted(pods, key=lambda p: p['metadata'].get('creationTimestamp') or ''):
        key = (pod['metadata']['namespace'], pod['metadata']['name'])
        wanted = whole_gpu_limit(pod) - held.get(key, 0)
        for gpu in topology['gpus']:
            if wanted <= 0:
                break
            if not gpu['status']['allocatedBy']['pod']:
                gpu['status']['allocatedBy'] = {'namespace': key[0], 'pod': key[1],
                                                'container': pod['spec']['containers'][0]['name']}
                wanted -= 1
                changed = True
    return changed


def gpu_of(topology, namespace, name):
    for gpu in topology['gpus']:
        owner = gpu['status']['allocatedBy']
        if owner['namespace'] == namespace and owner['pod'] == name:
            return gpu['id']
    return None


class Operator(object):
    """The watch loop. Talks to the API server with the kubernetes client."""

    def __init__(self, core, env):
        self.core = core
        self.cm_name = env.get('TOPOLOGY_CM_NAME', 'topology')
        self.cm_namespace = env['TOPOLOGY_CM_NAMESPACE']
        self.reservation_namespace = env.get('RESOURCE_RESERVATION_NAMESPACE', 'runai-reservation')
        # The label key of the nodes served: the cluster topology's nodePoolLabelKey (the role writes the lab's,
        # module_utils/kai/gpu.py NODE_POOL_LABEL), read by cluster_topology() before any node is looked at.
        self.pool_label = None

    def cluster_topology(self):
        cm = self.core.read_namespaced_config_map(self.cm_name, self.cm_namespace)
        topology = yaml.safe_load((cm.data or {}).get('topology.yml') or '{}') or {}
        self.pool_label = pool_label_key(topology, self.cm_namespace, self.cm_name)
        return topology

    def node_cm_name(self, node_name):
        return '%s-%s' % (self.cm_name, node_name)

    def ensure_node(self, node):
        """Topology ConfigMap, capacity and labels of one opted-in node."""
        from kubernetes.client.rest import ApiException
        name = node.metadata.name
        pool = (node.metadata.labels or {}).get(self.pool_label)
        if pool is None:
            return None
        try:
            cm = self.core.read_namespaced_config_map(self.node_cm_name(name), self.cm_namespace)
            topology = yaml.safe_load(cm.data['topology.yml'])
        except ApiException as exc:
            if exc.status != 404:
                raise
            count, product, memory = pool_of(self.cluster_topology(), pool)
            topology = node_topology(name, count, product, memory)
            self.write_node_topology(node, topology, create=True)
            log.info('node %s: created topology with %d GPUs', name, count)
        count = str(len(topology['gpus']))
        capacity = (node.status.capacity or {}) if node.status else {}
        if capacity.get(GPU_RESOURCE) != count or (node.status.allocatable or {}).get(GPU_RESOURCE) != count:
            self.core.patch_node_status(name, {'status': {'capacity': {GPU_RESOURCE: count},
                                                          'allocatable': {GPU_RESOURCE: count}}})
            log.info('node %s: capacity %s=%s', name, GPU_RESOURCE, count)
        labels = gpu_labels(topology)
        if any((node.metadata.labels or {}).get(k) != v for k, v in labels.items()):
            self.core.patch_node(name, {'metadata': {'labels': labels}})
            log.info('node %s: GPU labels set', name)
        return topology

    def write_node_topology(self, node, topology, create=False):
        from kubernetes import client
        body = client.V1ConfigMap(
            metadata=client.V1ObjectMeta(
                name=self.node_cm_name(node.metadata.name), namespace=self.cm_namespace,
                labels={'node-topology': 'true', 'node-name': node.metadata.name},
                annotations=({KWOK_NODE_ANNOTATION: node.metadata.annotations[KWOK_NODE_ANNOTATION]}
                             if KWOK_NODE_ANNOTATION in (node.metadata.annotations or {}) else None)),
            data={'topology.yml': yaml.safe_dump(topology, sort_keys=False)})
        if create:
            self.core.create_namespaced_config_map(self.cm_namespace, body)
        else:
            self.core.replace_namespaced_config_map(body.metadata.name, self.cm_namespace, body)

    def sync_node_pods(self, node_name):
        """Re-derive GPU ownership on a node and annotate reservation pods."""
        from kubernetes import client
        node = self.core.read_node(node_name)
        topology = self.ensure_node(node)
        if topology is None:
            return
        pods = [client.ApiClient().sanitize_for_serialization(p) for p in self.core.list_pod_for_all_namespaces(
            field_selector='spec.nodeName=%s' % node_name).items]
        holders = [p for p in pods if holds_gpus(p)]
        if reconcile_allocations(topology, holders):
            self.write_node_topology(node, topology)
        for pod in holders:
            meta = pod['metadata']
            if meta['namespace'] != self.reservation_namespace or (meta.get('annotations') or {}).get(RESERVATION_ANNOTATION):
                continue
            gpu = gpu_of(topology, meta['namespace'], meta['name'])
            if gpu:
                self.core.patch_namespaced_pod(meta['name'], meta['namespace'],
                                               {'metadata': {'annotations': {RESERVATION_ANNOTATION: gpu}}})
                log.info('reservation pod %s/%s: %s=%s', meta['namespace'], meta['name'], RESERVATION_ANNOTATION, gpu)

    def sync_all(self):
        for node in self.core.list_node(label_selector=self.pool_label).items:
            self.sync_node_pods(node.metadata.name)

    def run(self):
        from kubernetes import watch
        self.cluster_topology()
        self.sync_all()
        while True:
            resource_version = self.core.list_pod_for_all_namespaces(limit=1).metadata.resource_version
            for event in watch.Watch().stream(self.core.list_pod_for_all_namespaces,
                                              resource_version=resource_version, timeout_seconds=60):
                node_name = event['object'].spec.node_name
                if node_name:
                    self.sync_node_pods(node_name)
            # Nodes are few and rarely change: re-check them once a minute.
            self.sync_all()


def main():
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format='%(asctime)s %(levelname)s %(message)s')
    from kubernetes import client, config
    config.load_kube_config(os.environ.get('KUBECONFIG'))
    operator = Operator(client.CoreV1Api(), os.environ)
    while True:
        try:
            operator.run()
        except Exception as exc:  # keep serving like a controller would, but say why
            log.error('watch loop failed, retrying in 2s: %s', exc)
            time.sleep(2)


if __name__ == '__main__':
    main()
