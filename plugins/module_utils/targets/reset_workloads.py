# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What reset removes outside the lab namespace that runs on the lab's queues, and what makes it.

A learner who applies without -n kai-lab leaves, in another namespace,
workloads that carry one of the lab's queues (the queue label): Jobs, Pods
and PodGroups (WORKLOADS). They hold GPUs of the lab's nodes. A pod a
controller made (a Deployment's ReplicaSet, a StatefulSet, a DaemonSet, a
CronJob's Job) is made again at once when it alone is removed, and once
the learner makes the lab's queues again it takes the lab's GPUs. So reset
follows each workload's controller (its ownerReference with controller:
true) up to its top owner (Pod -> ReplicaSet -> Deployment; Pod -> Job ->
CronJob; Pod -> StatefulSet or DaemonSet), each read by its name in the
workload's namespace, and removes the top owner first, then what is below
it, then the workloads: nothing is left to make them again.

KAI's pod-grouper reads the queue from a pod or from its top owner, so a
controller whose own labels carry a lab queue puts its pods on it though
they carry no label: no pod points to it. Those controllers (LABELLED) are
found by the same label selector, and followed up likewise; this also finds
one that has no pod now (a CronJob between two runs, a Deployment scaled to
zero).

A top owner that stays by reset's rules (targets/reset.py, kept_by: the
lab's own, made by provision, installed by Helm, owned by another object)
keeps what is below it, and is named. An owner that cannot be read, or of
a kind reset does not remove, is named and not guessed; the workload below
it goes as before.

Layer: the targets; may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.client import readable
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import ClusterError, UnreadableAnswer
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.reset import kept_by

# Workloads outside the lab namespace that carry one of the lab's queues: a Job first (its pods go with it).
WORKLOADS = (('batch/v1', 'Job'), ('v1', 'Pod'), (kai.PODGROUP_API, 'PodGroup'))
# Controllers whose own labels may carry one of the lab's queues (KAI reads a pod's top owner's label).
LABELLED = (('apps/v1', 'Deployment'), ('apps/v1', 'StatefulSet'), ('apps/v1', 'DaemonSet'),
            ('apps/v1', 'ReplicaSet'), ('batch/v1', 'CronJob'))
# The controllers reset follows up from a workload, by kind.
OWNERS = dict((kind, api_version) for api_version, kind in LABELLED + (('batch/v1', 'Job'),))
# Pod -> ReplicaSet -> Deployment is the longest chain of OWNERS; a longer one is a loop.
MAX_OWNERS = 3


def shown(kind, namespace, name):
    return '%s %s/%s' % (kind, namespace, name)


def controller_of(obj):
    """The ownerReference of obj with controller: true, or None."""
    for ref in (obj.get('metadata') or {}).get('ownerReferences') or []:
        if isinstance(ref, dict) and ref.get('controller') is True:
            return ref
    return None


def owners_of(cluster, kind, obj, namespace):
    """(chain, note): the controllers above obj, its top owner first, as [(api_version, kind, object)]; note
    names what reset cannot follow (an owner that cannot be read, or of a kind it does not remove), else None.
    An owner gone (or another object of its name) ends the chain: the garbage collector removes what it made."""
    chain = []
    below_kind, below = kind, obj
    for dummy in range(MAX_OWNERS):
        ref = controller_of(below)
        if ref is None:
            break
        owner_kind, name = ref.get('kind'), ref.get('name')
        api_version = OWNERS.get(owner_kind)
        head = '%s (%s)' % (shown(below_kind, namespace, kai.name_of(below)), kai.QUEUE_LABEL)
        if api_version is None or ref.get('apiVersion') != api_version:
            return chain[::-1], '%s: its controller %s %s is of no kind reset removes; it is left, and may make ' \
                'it again' % (head, owner_kind, name)
        try:
            owner = cluster.get(api_version, owner_kind, name, namespace)
        except UnreadableAnswer as exc:
            where = shown(owner_kind, namespace, name)
            return chain[::-1], '%s: its controller %s is left, as it cannot be read (%s)' % (
                head, where, readable.reason(exc, 'read ' + where))
        if owner is None or (ref.get('uid') and (owner.get('metadata') or {}).get('uid') != ref['uid']):
            break
        chain.append((api_version, owner_kind, owner))
        below_kind, below = owner_kind, owner
    return chain[::-1], None


def controller_plan(cluster, plan, found, namespace, own, own_labels, provisioned):
    """Add to plan, outside namespace, the controllers above the workloads found and the LABELLED ones found,
    top owners first (found: read_workloads'). Returns {(kind, namespace, name)} of the workloads left, as
    their top owner stays (kept_by); what stays or cannot be followed is named in plan.named."""
    levels, kept = [], set()
    for api_version, kind in LABELLED + WORKLOADS:
        for where, name, obj in sorted(found.get(kind) or [], key=lambda entry: entry[:2]):
            if where == namespace:
                continue
            if obj is None:
                plan.named.append('%s (%s): its controller, if any, is not known, as it cannot be read' % (
                    shown(kind, where, name), kai.QUEUE_LABEL))
                continue
            chain, note = owners_of(cluster, kind, obj, where)
            if note:
                plan.named.append(note)
                continue
            labelled = (api_version, kind) in LABELLED
            if not chain and not labelled:
                continue  # a workload no controller makes: workload_plan's
            top_kind, top = (chain[0][1], chain[0][2]) if chain else (kind, obj)
            why = kept_by(top_kind, top, own, own_labels, provisioned)
            if why:
                kept.add((kind, where, name))
                plan.named.append('%s (%s): kept with its top owner %s, %s' % (
                    shown(kind, where, name), kai.QUEUE_LABEL, shown(top_kind, where, kai.name_of(top)), why))
                continue
            levels.extend((height, owner_api, owner_kind, kai.name_of(owner), where)
                          for height, (owner_api, owner_kind, owner) in enumerate(chain))
            if labelled:
                levels.append((len(chain), api_version, kind, name, where))
    for dummy, api_version, kind, name, where in sorted(levels):
        plan.remove(api_version, kind, name, where)
    return kept


def workload_plan(plan, found, namespace, kept=()):
    """Add to plan the WORKLOADS found outside the lab namespace but those kept (controller_plan's)."""
    for api_version, kind in WORKLOADS:
        for where, name, dummy in sorted(found.get(kind) or [], key=lambda entry: entry[:2]):
            if where != namespace and (kind, where, name) not in kept:
                plan.remove(api_version, kind, name, where)
    return plan


def read_workloads(cluster, lab_queues):
    """{kind: [(namespace, name, object or None when it cannot be read)]} of WORKLOADS and LABELLED controllers
    carrying one of lab_queues (the queue label), in every namespace (the API server selected them by the label)."""
    selector = '%s in (%s)' % (kai.QUEUE_LABEL, ','.join(sorted(lab_queues)))
    found = {}
    for api_version, kind in WORKLOADS + LABELLED:
        try:
            items, unreadable = readable.list_everywhere(cluster, api_version, kind, label_selector=selector)
        except ClusterError as exc:
            if kind == 'PodGroup' and 'does not serve' in str(exc):  # KAI's CRDs are not there: no PodGroups
                found[kind] = []
                continue
            raise
        found[kind] = [((o.get('metadata') or {}).get('namespace'), kai.name_of(o), o) for o in items]
        found[kind].extend((entry[0], entry[1], None) for entry in unreadable)
    return found
