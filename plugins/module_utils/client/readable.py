# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lists read past an object the lab cannot read.

Layer: the cluster client; imports nothing of the collection but its own package (errors.py, kinds.py).

A list is one answer: one object in it nested deeper than the client reads,
or the whole list larger than one answer (client/answer.py), and the list
is refused. Where the lab must go on past objects it does not own (the
sim's record and state check, reset, the readiness gate's count of free
GPUs), the objects are then read one by one: those it names, or every name
of the API server's Table of the list (what kubectl get asks for, here
without the objects: names only, no field of any object); a namespaced
kind in every namespace is then listed one namespace after the other
(list_everywhere). Each object that cannot be read is named with why; any
other error is the list's own.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import (
    ApiException, ClusterError, InvalidName, UnreadableAnswer, api_error)
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.kinds import kind_path, path_segment

# The API server's Table of a list (meta.k8s.io/v1), as kubectl asks for it.
TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io'
# Read one by one at most this many objects of an unreadable list (each a request of its own): more
# is no lab's list, and the list's own error (naming the object out of bounds) is raised instead.
MAX_ONE_BY_ONE = 500


def name_of(obj):
    return (obj.get('metadata') or {}).get('name') if isinstance(obj, dict) else None


def reason(exc, what):
    """exc's message without its leading "cannot <what>: ", for a line that names the object itself."""
    text = str(exc)
    head = 'cannot %s: ' % what
    return text[len(head):] if text.startswith(head) else text


def table_names(cluster, path, what, query=None):
    """The names of the objects at a list path (query: its labelSelector), from the API server's Table of it
    without the objects."""
    table = cluster.request('GET', path, dict(query or {}, includeObject='None'), what='%s (names only)' % what,
                            accept=TABLE)
    if not isinstance(table, dict) or table.get('kind') != 'Table':
        raise UnreadableAnswer('cannot %s: the API server gave no Table of the names' % what)
    columns = table.get('columnDefinitions') or []
    index = next((i for i, column in enumerate(columns)
                  if isinstance(column, dict) and column.get('format') == 'name'), 0)
    names = []
    for row in table.get('rows') or []:
        cells = row.get('cells') if isinstance(row, dict) else None
        if isinstance(cells, list) and len(cells) > index and isinstance(cells[index], str):
            names.append(cells[index])
    return names


def read_each(cluster, path, kind, names, shown=None):
    """(objects, {name: why it cannot be read}) of names, each read by itself from the list path
    (an object gone meanwhile, or a name no object can have, is left out). shown: the namespace, as named."""
    items, unreadable = [], {}
    for name in names:
        try:
            segment = path_segment(name, '%s name' % kind)
        except InvalidName:
            continue
        what = 'read %s %s' % (kind, '%s/%s' % (shown, name) if shown else name)
        try:
            obj = cluster.request('GET', path + '/' + segment, what=what, kind=kind)
        except UnreadableAnswer as exc:
            unreadable[name] = reason(exc, what)
            continue
        except ApiException as exc:
            if exc.status == 404:
                continue
            raise ClusterError(api_error(what, exc))
        if isinstance(obj, dict):
            items.append(obj)
    return items, unreadable


def list_readable(cluster, path, kind, names=None, shown=None, query=None):
    """(objects, {name: why it cannot be read}) of the list at path (one namespace's, or a cluster-wide
    kind's; query: its labelSelector): in one request, or when that answer is out of bounds, one by one
    (names: only these are wanted). shown: the namespace, as messages name it."""
    what = 'list %s%s' % (kind, ' in %s' % shown if shown else '')
    try:
        listed = cluster.request('GET', path, query, what=what, kind=kind)
    except UnreadableAnswer as exc:
        refused = exc
    else:
        items = [item for item in (listed.get('items') or []) if isinstance(item, dict)]
        if names is not None:
            wanted = set(names)
            items = [item for item in items if name_of(item) in wanted]
        return items, {}
    if names is None:
        names = table_names(cluster, path, what, query)
        if len(names) > MAX_ONE_BY_ONE:
            raise refused
    return read_each(cluster, path, kind, names, shown)


def list_everywhere(cluster, api_version, kind, label_selector=None):
    """(the objects of a namespaced kind in every namespace, [(namespace, name, why)] of those that cannot be
    read): one paged list (cluster.list), or when one object puts it out of bounds, one list per namespace, and
    in a namespace whose list is out of bounds, each object by its name (those label_selector selects)."""
    try:
        return cluster.list(api_version, kind, label_selector=label_selector), []
    except UnreadableAnswer:
        pass
    items, unreadable = [], []
    for namespace in [name_of(n) for n in cluster.list('v1', 'Namespace')]:
        try:
            items.extend(cluster.list(api_version, kind, namespace, label_selector=label_selector))
        except UnreadableAnswer:
            found, bad = list_readable(cluster, kind_path(api_version, kind, namespace), kind, shown=namespace,
                                       query={'labelSelector': label_selector} if label_selector else None)
            items.extend(found)
            unreadable.extend((namespace, name, why) for name, why in sorted(bad.items()))
    return items, unreadable
