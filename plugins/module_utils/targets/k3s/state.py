# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a k3s VM is still as the last full provision left it (module
gsb.kai_lab.kai_lab_k3s_state): what that provision recorded against what the
VM shows now, read in one module call without hashing or waiting.

The record holds the settings' digest and the airgap files' sizes and times
(taken on the control host; their sha256 was checked when they were copied),
and on the VM: the size and time of every file provision wrote, the archives
k3s imports, k3s's run (its unit's invocation), the node (Ready, the lab's
labels, its GPUs), every Deployment's and DaemonSet's generation with the one
its controller observed and its readiness, the pods of KAI's and
fake-gpu-operator's namespaces (uid and restarts, as the readiness gate's
fingerprint), the Helm releases' revisions, the learner's objects'
resourceVersions and a hash of each object provision owns and puts back
(module gsb.kai_lab.kai_lab_owned_objects: KAI's CRDs, Config and RBAC,
fake-gpu-operator's topology, the lab namespace and its quota), without what
the cluster writes (status, resourceVersion), so that one changed by hand
makes the next provision a full one, which puts it back (issue 42).

Layer: the targets (k3s); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os

from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.owned.compare import without_cluster_writes

# 2: the owned objects' hashes, the learner's objects without the token Secret (a record of 1 is a full provision).
SCHEMA = 2
# k3s imports these from its images directory (k3s's own list of suffixes).
ARCHIVE_SUFFIXES = ('.tar', '.tar.lz4', '.tar.bz2', '.tbz', '.tar.gz', '.tgz', '.tar.zst', '.tzst')
# The learner's objects (roles/kai_lab/templates/learner_access.yaml.j2), by their label and resourceVersion;
# not its token Secret, whose resourceVersion changes when the API server records the token's use (the
# learner's kubectl): that Secret is an owned object, compared by content (owned_hash).
LEARNER_KINDS = ('namespaces,serviceaccounts,roles,rolebindings,clusterroles,clusterrolebindings,'
                 'validatingadmissionpolicies,validatingadmissionpolicybindings')

ARGUMENT_SPEC = dict(
    mode=dict(type='str', choices=['check', 'record'], default='check'),
    record=dict(type='path', required=True),
    inputs_digest=dict(type='str', required=True),
    sources=dict(type='dict', default={}),
    spec=dict(type='dict', default={}),
    k3s=dict(type='path', default='/usr/local/bin/k3s'),
    kubeconfig=dict(type='path', default='/root/.kube/config'),
)


def file_state(path):
    """[size, mtime in ns] of a file, or None when it is not there; a link's own (never what it leads to: the
    learner's ~/.kube/config is in the list, and a link the learner plants there is a change, not a way to
    make root read another file)."""
    try:
        stat = os.lstat(path)
    except OSError:
        return None
    return [stat.st_size, stat.st_mtime_ns]


def archives(directory):
    """{name: [size, mtime]} of the archives k3s imports from directory."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return None
    return dict((name, file_state(os.path.join(directory, name))) for name in names
                if not name.startswith('.') and name.endswith(ARCHIVE_SUFFIXES))


def node_state(nodes, name, labels):
    """The node's Ready status, the lab's labels on it and its GPUs, from `kubectl get nodes -o json`."""
    for node in nodes:
        if node['metadata']['name'] != name:
            continue
        ready = [c.get('status') for c in (node.get('status') or {}).get('conditions') or [] if c.get('type') == 'Ready']
        have = node['metadata'].get('labels') or {}
        return {'ready': ready == ['True'], 'labels': dict((key, have.get(key)) for key in sorted(labels)),
                'gpus': ((node.get('status') or {}).get('allocatable') or {}).get('nvidia.com/gpu')}
    return None


def namespace_state(items):
    """Each workload's [generation, observed generation, ready] and each live pod's [uid, restarts]."""
    workloads, pods = {}, {}
    for item in items:
        kind, meta, status = item.get('kind'), item['metadata'], item.get('status') or {}
        if kind == 'Deployment':
            want = (item.get('spec') or {}).get('replicas', 1)
            workloads['Deployment/' + meta['name']] = [meta.get('generation'), status.get('observedGeneration'),
                                                       status.get('availableReplicas', 0) >= want]
        elif kind == 'DaemonSet':
            want = status.get('desiredNumberScheduled', 0)
            workloads['DaemonSet/' + meta['name']] = [meta.get('generation'), status.get('observedGeneration'),
                                                      status.get('numberAvailable', 0) >= want]
        elif kind == 'Pod' and status.get('phase') not in ('Succeeded', 'Failed'):
            restarts = sum(c.get('restartCount', 0) for c in status.get('containerStatuses') or [])
            pods[meta['name']] = [meta.get('uid'), restarts]
    return {'workloads': workloads, 'pods': pods}


def owned_key(ref):
    """<group>/<Kind>/<namespace>/<name> of an object provision owns (its reference from
    kai_lab_owned_objects, or the object as kubectl lists it)."""
    if 'metadata' in ref:
        api_version = str(ref.get('apiVersion') or '')
        meta = ref.get('metadata') or {}
        ref = {'group': api_version.rpartition('/')[0], 'kind': ref.get('kind'),
               'namespace': meta.get('namespace') or '', 'name': meta.get('name')}
    return '%s/%s/%s/%s' % (ref.get('group') or '', ref.get('kind'), ref.get('namespace') or '', ref.get('name'))


def owned_hash(obj):
    """sha256 of an object without what the cluster writes on its own (owned/compare.without_cluster_writes): a
    learner's or an operator's change of what provision wrote changes it, KAI's status or the API server's
    record of a token's use does not."""
    return hashlib.sha256(json.dumps(without_cluster_writes(obj), sort_keys=True).encode()).hexdigest()


def owned_state(refs, kubectl):
    """{owned_key: hash, or None when missing} of the objects provision owns, listed in one kubectl call."""
    wanted = dict((owned_key(ref), None) for ref in refs)
    resources = sorted(set(ref['resource'] for ref in refs))
    if resources:
        for obj in json.loads(kubectl('get', ','.join(resources), '--all-namespaces', '-o', 'json')).get('items') or []:
            key = owned_key(obj)
            if key in wanted:
                wanted[key] = owned_hash(obj)
    return wanted


def rows(text):
    """custom-columns output (no headers) as lists of words."""
    return [line.split() for line in (text or '').splitlines() if line.strip()]


def snapshot(spec, run):
    """The VM now, as the record keeps it. run(argv) -> stdout (raises on failure)."""
    k3s, kubeconfig = spec['k3s'], spec['kubeconfig']

    def kubectl(*args):
        return run([k3s, 'kubectl', '--kubeconfig=' + kubeconfig] + list(args))
    unit = run(['systemctl', 'show', '--property=ActiveState,InvocationID', 'k3s']).split()
    now = {
        'files': dict((path, file_state(path)) for path in sorted(spec.get('files') or [])),
        'archives': dict((path, archives(path)) for path in sorted(spec.get('archive_dirs') or [])),
        'k3s': sorted(unit),
        'node': node_state(json.loads(kubectl('get', 'nodes', '-o', 'json')).get('items') or [],
                           spec.get('node'), spec.get('node_labels') or []),
        'namespaces': dict((namespace, namespace_state(json.loads(kubectl(
            '-n', namespace, 'get', 'deployments,daemonsets,pods', '-o', 'json')).get('items') or []))
            for namespace in sorted(spec.get('namespaces') or [])),
        'releases': dict(('%s/%s' % (row[0], row[1]), row[2]) for row in rows(kubectl(
            'get', 'secrets', '--all-namespaces', '--selector=owner=helm,status=deployed', '--no-headers',
            '-o', 'custom-columns=NS:.metadata.namespace,NAME:.metadata.labels.name,REVISION:.metadata.labels.version'))
            if len(row) == 3),
    }
    if spec.get('owned'):
        now['owned'] = owned_state(spec['owned'], kubectl)
    if spec.get('learner_labels'):
        selector = ','.join('%s=%s' % item for item in sorted(spec['learner_labels'].items()))
        listed = rows(kubectl('get', LEARNER_KINDS, '--all-namespaces', '--selector=' + selector, '--no-headers',
                              '-o', 'custom-columns=KIND:.kind,NS:.metadata.namespace,NAME:.metadata.name,'
                              'RV:.metadata.resourceVersion'))
        # custom-columns says <none> for a cluster-wide object's namespace.
        now['learner'] = dict(('%s/%s/%s' % (row[0], '' if row[1] == '<none>' else row[1], row[2]), row[3])
                              for row in listed if len(row) == 4)
    return now


def _walk(before, after, where=''):
    """Each path whose value differs, as 'where: before -> after'."""
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key in sorted(set(before) | set(after)):
            found += _walk(before.get(key), after.get(key), '%s%s%s' % (where, ' ' if where else '', key))
        return found
    return [] if before == after else ['%s: %s -> %s' % (where, json.dumps(before), json.dumps(after))]


def differences(record, inputs_digest, sources, now):
    """What differs from the record, each as a line a person reads; [] when the VM is as recorded."""
    if not record:
        return ['no record of a full provision on the VM']
    if record.get('schema') != SCHEMA:
        return ['the record is of another version of the collection']
    found = []
    if record.get('inputs_digest') != inputs_digest:
        found.append('the settings or the collection differ from the last full provision')
    found += ['airgap file ' + line for line in _walk(record.get('sources') or {}, sources or {})]
    snap = record.get('snapshot') or {}
    found += _walk(snap, now)
    node = now.get('node') or {}
    if not node.get('ready'):
        found.append('node %s is not Ready' % (record.get('spec') or {}).get('node'))
    for namespace, state in sorted((now.get('namespaces') or {}).items()):
        for name, (generation, observed, ready) in sorted(state['workloads'].items()):
            if generation != observed or not ready:
                found.append('%s %s is not ready (generation %s, observed %s)' % (namespace, name, generation, observed))
    return found
