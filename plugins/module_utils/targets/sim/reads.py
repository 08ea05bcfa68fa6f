# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the sim's record and state check read of the API server: only what they name, and past what they cannot read.

The objects the record names are read with one list per kind and
namespace: a namespaced kind only in the namespaces of the objects named
(KAI's, fake-gpu-operator's) or of the kinds watched whole (the lab
namespace's quotas and limit ranges), never across every namespace, so no
object of a namespace the lab does not use is read at all. A cluster-wide
kind is listed whole; when an object the lab does not own makes that list
unreadable (nested too deep, or the list larger than one answer), the
objects named are read one by one, and of a kind watched whole every
object by its name (client/readable.py). An object that cannot be read is
kept as UNREADABLE and why: a record is still written, and a check names
it (targets/sim/differences.py) and takes the full path, never fails.

Layer: the targets (sim); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.client import readable
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import (
    ApiException, ClusterError, UnreadableAnswer, api_error)
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.kinds import KINDS, path_segment

# What the snapshot keeps for an object it could not read: this and why.
UNREADABLE = 'unreadable: '


def list_path(api_version, kind, namespace=None):
    """The list path of a kind, in namespace or cluster-wide (its plural is its lower-cased name + s/es/ies)."""
    plural = kind.lower() + ('es' if kind.lower().endswith('s') else 's')
    if plural.endswith('ys'):
        plural = plural[:-2] + 'ies'
    prefix = '/%s/%s' % ('api' if api_version == 'v1' else 'apis', api_version)
    if namespace:
        prefix += '/namespaces/' + path_segment(namespace, 'namespace')
    return '%s/%s' % (prefix, plural)


def unreadable_reason(value):
    """Why a snapshot's value is of an object that could not be read, or None."""
    if isinstance(value, str) and value.startswith(UNREADABLE):
        return value[len(UNREADABLE):]
    if isinstance(value, dict) and value.get('unreadable'):
        return value['unreadable']
    return None


class Reader(object):
    """The lists of one snapshot, each read once (tests answer cluster.request with recorded lists)."""

    def __init__(self, cluster):
        self.cluster = cluster
        # (api_version, kind, namespace) -> {name: object}, or None when the list could not be read whole.
        self.lists = {}
        # Kinds a chart names with a namespace that the API server keeps cluster-wide (KAI's Config): those the
        # client's table says so, and any other the API server answers 404 for under a namespace.
        self.cluster_wide = set(key for key, (_prefix, _plural, namespaced) in KINDS.items() if not namespaced)

    def named(self, api_version, kind, name, namespace=None):
        """(the namespace it is kept in, the object or None, why it cannot be read or None)."""
        if namespace and (api_version, kind) not in self.cluster_wide:
            try:
                return (namespace,) + self._find(api_version, kind, name, namespace)
            except ApiException as exc:
                if exc.status != 404:
                    raise ClusterError(api_error('list %s in %s' % (kind, namespace), exc))
                self.cluster_wide.add((api_version, kind))
        try:
            return (None,) + self._find(api_version, kind, name, None)
        except ApiException as exc:
            raise ClusterError(api_error('list %s' % kind, exc))

    def every(self, api_version, kind, namespace=None):
        """(the objects of kind in namespace, or cluster-wide; {name: why} of those that cannot be read)."""
        try:
            return readable.list_readable(self.cluster, list_path(api_version, kind, namespace), kind,
                                          shown=namespace)
        except ApiException as exc:
            raise ClusterError(api_error('list %s' % kind, exc))

    def _find(self, api_version, kind, name, namespace):
        key = (api_version, kind, namespace)
        path = list_path(api_version, kind, namespace)
        if key not in self.lists:
            try:
                listed = self.cluster.request('GET', path, what='list %s' % kind, kind=kind)
                self.lists[key] = dict((readable.name_of(o), o) for o in listed.get('items') or []
                                       if isinstance(o, dict))
            except UnreadableAnswer:
                self.lists[key] = None
        if self.lists[key] is not None:
            return self.lists[key].get(name), None
        items, unreadable = readable.read_each(self.cluster, path, kind, [name], namespace)
        return (items[0] if items else None), unreadable.get(name)
