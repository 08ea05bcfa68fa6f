# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What reset removes outside the lab namespace: what the learner added to the cluster there.

Reset returns the lab to what provision made. The lab namespace is emptied
and made again (roles/kai_lab/tasks/reset.yml); outside it a learner who
works with the lab's admin kubeconfig (the default, root) may have added

- cluster-wide objects that change how KAI schedules, or what the API
  server admits, for the lab: Queues (the lab's own queues, and any other),
  PriorityClasses, ValidatingAdmissionPolicies and their bindings;
- workloads in other namespaces that carry one of the lab's queues (a Job
  applied without -n kai-lab): Jobs, Pods and PodGroups with the queue
  label, and the controllers that make such pods (a Deployment and its
  ReplicaSet, a StatefulSet, a DaemonSet, a CronJob), top owner first
  (targets/reset_workloads.py). They hold GPUs of the lab's nodes after
  its queues are gone, or once the learner makes them again.

Those are removed. What stays (kept_by): the lab's own objects (its
admission policies: the objects the role renders, or the lab's labels);
what provision made (Provisioned) - the objects the sim's record of the
last full provision names (targets/sim/provision_record.py), and anything
created no later than the readiness gate's probe namespace (provision
proves the lab ready after KAI and the lab's objects are in, before any
learner has it; on a VM this is how KAI's queues and priority classes are
told, with Helm's release annotation); objects a controller owns
(ownerReferences); Kubernetes' own PriorityClasses (system-*). With
neither a record nor the probe namespace, what provision made cannot be
told: only the lab's queues and workloads go, and the rest is named. An
object that cannot be read (nested too deep) is removed by its name when
the record shows provision did not make it, else named. Nothing on disk is
touched: reset's files part keeps every file.

Layer: the targets; may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.client import readable
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import (
    ApiException, ClusterError, api_error)
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.kinds import kind_path
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai

ADMISSION = 'admissionregistration.k8s.io/v1'
# The cluster-wide kinds reset keeps to what provision made, in the order they are removed: a binding before
# its policy, a queue after the workloads that use it.
CLUSTER_KINDS = ((ADMISSION, 'ValidatingAdmissionPolicyBinding'), (ADMISSION, 'ValidatingAdmissionPolicy'),
                 ('scheduling.k8s.io/v1', 'PriorityClass'), (kai.QUEUE_API, 'Queue'))
HELM_RELEASE = 'meta.helm.sh/release-name'
SYSTEM_PRIORITY = 'system-'


class Provisioned(object):
    """What tells the objects provision made: names {(kind, name)} from the sim's record, and the time the
    readiness gate's probe namespace was created (an RFC 3339 creationTimestamp); either may be None."""

    def __init__(self, names=None, until=None):
        self.names = names
        self.until = until

    @classmethod
    def from_record(cls, record, until=None):
        spec = record.get('spec') if isinstance(record, dict) else None
        names = None
        if isinstance(spec, dict):
            names = set((ref.get('kind'), ref.get('name')) for ref in spec.get('objects') or [] if isinstance(ref, dict))
        return cls(names, until)

    @property
    def known(self):
        return self.names is not None or bool(self.until)

    def made(self, kind, obj):
        """Why provision made obj (words), or None."""
        meta = obj.get('metadata') or {}
        if self.names is not None and (kind, meta.get('name')) in self.names:
            return 'made by provision (its record)'
        created = meta.get('creationTimestamp')
        if self.until and isinstance(created, str) and created <= self.until:
            return 'made by provision (created %s, the lab proved ready %s)' % (created, self.until)
        return None


def kept_by(kind, obj, own, own_labels, provisioned):
    """Why an object of a cluster-wide kind stays (words), or None when it is the learner's.

    own: {(kind, name)} of the lab's objects; own_labels: the labels that mark one; provisioned: Provisioned."""
    meta = obj.get('metadata') or {}
    name = meta.get('name')
    labels = meta.get('labels') or {}
    if (kind, name) in own or (own_labels and all(labels.get(k) == v for k, v in own_labels.items())):
        return 'the lab\'s own'
    made = provisioned.made(kind, obj)
    if made:
        return made
    if (meta.get('annotations') or {}).get(HELM_RELEASE):
        return 'installed by Helm (release %s)' % meta['annotations'][HELM_RELEASE]
    if meta.get('ownerReferences'):
        return 'owned by %s' % (meta['ownerReferences'][0].get('kind') or 'another object')
    if kind == 'PriorityClass' and str(name).startswith(SYSTEM_PRIORITY):
        return 'Kubernetes\' own'
    return None


def children_first(queues):
    """Queue objects ordered so that a child comes before its parent (KAI refuses to remove a parent first)."""
    parents = dict((kai.name_of(q), (q.get('spec') or {}).get('parentQueue')) for q in queues)

    def depth(name, seen=()):
        parent = parents.get(name)
        return 0 if parent not in parents or parent in seen else 1 + depth(parent, seen + (name,))
    return sorted(queues, key=lambda q: (-depth(kai.name_of(q)), kai.name_of(q)))


class Plan(object):
    """What reset removes (removals: (api_version, kind, name, namespace), in order) and what it names."""

    def __init__(self):
        self.removals = []
        self.named = []  # lines: objects left, and why

    def remove(self, api_version, kind, name, namespace=None):
        if (api_version, kind, name, namespace) not in self.removals:
            self.removals.append((api_version, kind, name, namespace))


def cluster_plan(plan, listed, lab_queues, own, own_labels, provisioned):
    """Add to plan the objects of CLUSTER_KINDS to remove. listed: {kind: (objects, {name: why unreadable})};
    provisioned: Provisioned (when it knows nothing, only the lab's queues go)."""
    for api_version, kind in CLUSTER_KINDS:
        objects, unreadable = listed.get(kind, ([], {}))
        if kind == 'Queue':
            objects = children_first(objects)
        for obj in objects:
            name = kai.name_of(obj)
            if kind == 'Queue' and name in lab_queues:
                plan.remove(api_version, kind, name)
            elif kept_by(kind, obj, own, own_labels, provisioned) is None:
                if provisioned.known:
                    plan.remove(api_version, kind, name)
                else:
                    plan.named.append('%s %s: kept, as neither a record of the last provision nor the readiness '
                                      'gate\'s namespace tells whether provision made it (provision the lab, then '
                                      'reset)' % (kind, name))
        for name, why in sorted(unreadable.items()):
            system = kind == 'PriorityClass' and name.startswith(SYSTEM_PRIORITY)
            if (kind == 'Queue' and name in lab_queues) or (
                    provisioned.names is not None and (kind, name) not in provisioned.names | own and not system):
                plan.remove(api_version, kind, name)
            else:
                plan.named.append('%s %s: kept, as it cannot be read (%s)' % (kind, name, why))
    return plan


# ---------------------------------------------------------------- reading the cluster

def read_cluster_kinds(cluster):
    """{kind: (objects, {name: why unreadable})} of CLUSTER_KINDS; a kind the API server does not serve is empty."""
    listed = {}
    for api_version, kind in CLUSTER_KINDS:
        try:
            listed[kind] = readable.list_readable(cluster, kind_path(api_version, kind), kind)
        except ApiException as exc:
            if exc.status != 404:
                raise ClusterError(api_error('list %s' % kind, exc))
            listed[kind] = ([], {})
    return listed


def carry_out(cluster, plan, check_mode):
    """Remove what plan holds (nothing in check mode); the lines of what was (or would be) removed."""
    done = []
    for api_version, kind, name, namespace in plan.removals:
        if check_mode or cluster.delete(api_version, kind, name, namespace):
            done.append('%s %s' % (kind, '%s/%s' % (namespace, name) if namespace else name))
    return done
