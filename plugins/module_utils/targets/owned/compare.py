# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What differs between an object as the API server keeps it and as provision writes it, and what a replace
keeps of the cluster's own (issue 42; targets/owned/owner.py puts objects back).

differences() compares two objects as the API server answers them (without
what it writes on every write), one line per field, so a field added, a field
removed and a value changed are each named by their path. kept_fields() is
the replace provision sends: what it writes, with the live object's
resourceVersion and the fields the cluster writes itself.

Layer: the targets (both); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import json
import re

from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import comparable

# Labels and annotations the cluster writes on an object provision owns, kept by a replace: Helm's record of
# its release on a VM (helm upgrade refuses an object without it), and the token controller's mark on the
# learner's token Secret.
HELM_LABELS = {'app.kubernetes.io/managed-by': 'Helm'}
HELM_ANNOTATIONS = ('meta.helm.sh/release-name', 'meta.helm.sh/release-namespace')
TOKEN_TYPE = 'kubernetes.io/service-account-token'
TOKEN_ANNOTATION = 'kubernetes.io/service-account.uid'
# The labels the API server's legacy token tracking writes on a token Secret whose token was used (the
# learner's kubectl), and its cleaner's mark: the cluster's own, kept by a replace.
TOKEN_TRACKING = ('kubernetes.io/legacy-token-last-used', 'kubernetes.io/legacy-token-invalid-since')
# How many differences of one object are named, how long a value shown is.
SHOWN_DIFFERENCES = 6
SHOWN_VALUE = 60
# What the API server writes into an object of a kind when provision leaves it out, where a dry-run create
# cannot tell (a CRD's name must be its kind's): apiextensions.k8s.io/v1's SetDefaults_CustomResourceDefinitionSpec.
SERVER_DEFAULTS = {'CustomResourceDefinition': {'spec': {'conversion': {'strategy': 'None'}}}}


# ---------------------------------------------------------------- what differs

def differences(live, wanted):
    """What differs from the live object to wanted (both as the API server answers them, compared without
    what the server writes on every write: client.api.comparable), one line per field, in path order:
    "<path>: added (<value>)" (in the cluster, not written by provision), "<path>: removed (provision writes
    <value>)", "<path>: <value>, provision writes <value>"."""
    found = []
    _walk(comparable(live), comparable(wanted), '', found)
    return found


def _walk(was, now, path, found):
    if isinstance(was, dict) and isinstance(now, dict):
        for key in sorted(set(was) | set(now)):
            inner = _key_path(path, key)
            if key not in now:
                found.append('%s: added (%s)' % (inner, shown(was[key])))
            elif key not in was:
                found.append('%s: removed (provision writes %s)' % (inner, shown(now[key])))
            else:
                _walk(was[key], now[key], inner, found)
    elif isinstance(was, list) and isinstance(now, list) and was != now:
        named_was, named_now = _by_name(was), _by_name(now)
        if named_was is not None and named_now is not None:
            before = len(found)
            _walk(named_was, named_now, path, found)
            if len(found) == before:  # the same items in another order
                found.append('%s: in another order, provision writes %s'
                             % (path, ', '.join(item['name'] for item in now)))
            return
        _walk_list(was, now, path, found)
    elif was != now:
        found.append('%s: %s, provision writes %s' % (path or '(the object)', shown(was), shown(now)))


def _walk_list(was, now, path, found):
    """Items added and removed where the lists differ in length (matched as difflib matches lines), item by item
    where they pair up."""
    keys = [[json.dumps(item, sort_keys=True) for item in items] for items in (was, now)]
    for tag, was_start, was_end, now_start, now_end in difflib.SequenceMatcher(None, *keys, autojunk=False).get_opcodes():
        if tag == 'equal':
            continue
        if tag == 'replace' and was_end - was_start == now_end - now_start:
            for offset in range(was_end - was_start):
                _walk(was[was_start + offset], now[now_start + offset], '%s[%d]' % (path, now_start + offset), found)
            continue
        for index in range(was_start, was_end):
            found.append('%s[%d]: added (%s)' % (path, index, shown(was[index])))
        for index in range(now_start, now_end):
            found.append('%s[%d]: removed (provision writes %s)' % (path, index, shown(now[index])))


def _by_name(items):
    """A list of objects with unique names as {"[name=<name>]": item}, keeping its order; else None."""
    if not items or not all(isinstance(item, dict) and isinstance(item.get('name'), str) for item in items):
        return None
    names = [item['name'] for item in items]
    if len(set(names)) != len(names):
        return None
    named = {}
    for item in items:
        named['[name=%s]' % item['name']] = item
    return named


_PLAIN_KEY = re.compile(r'^[A-Za-z_][A-Za-z0-9_-]*$')


def _key_path(path, key):
    if key.startswith('[name='):
        return path + key
    if _PLAIN_KEY.match(key):
        return '%s.%s' % (path, key) if path else key
    return '%s[%s]' % (path, json.dumps(key))


def shown(value):
    text = json.dumps(value, sort_keys=True, separators=(',', ':'))
    return text if len(text) <= SHOWN_VALUE else text[:SHOWN_VALUE - 3] + '...'


def limited(found):
    if len(found) <= SHOWN_DIFFERENCES:
        return found
    return found[:SHOWN_DIFFERENCES] + ['and %d more' % (len(found) - SHOWN_DIFFERENCES)]


# ---------------------------------------------------------------- what a replace keeps of the live object

def kept_fields(wanted, live):
    """wanted as a replace of live sends it: with live's resourceVersion and what the cluster writes itself
    on an object provision owns (its status, which a replace does not change; controllers' finalizers and
    owners; Helm's ownership labels and annotations; a token Secret's data, the token controller's mark and the
    API server's record of the token's last use;
    the rules the aggregation controller writes into a ClusterRole that aggregates)."""
    body = json.loads(json.dumps(wanted))
    meta = body.setdefault('metadata', {})
    live_meta = live.get('metadata') or {}
    meta['resourceVersion'] = live_meta.get('resourceVersion')
    for key in ('finalizers', 'ownerReferences'):
        if live_meta.get(key) and key not in meta:
            meta[key] = live_meta[key]
    live_labels, live_annotations = live_meta.get('labels') or {}, live_meta.get('annotations') or {}
    for key, value in HELM_LABELS.items():
        if live_labels.get(key) == value:
            meta.setdefault('labels', {})[key] = value
    kept = list(HELM_ANNOTATIONS)
    if body.get('kind') == 'Secret' and body.get('type') == TOKEN_TYPE:
        kept.append(TOKEN_ANNOTATION)
        if 'data' in live and 'data' not in body:
            body['data'] = live['data']
        for key in TOKEN_TRACKING:
            if key in live_labels:
                meta.setdefault('labels', {})[key] = live_labels[key]
    for key in kept:
        if key in live_annotations:
            meta.setdefault('annotations', {})[key] = live_annotations[key]
    if body.get('kind') == 'ClusterRole' and body.get('aggregationRule') and 'rules' in live:
        body['rules'] = live['rules']
    if 'status' in live:
        body['status'] = live['status']
    return body


def without_cluster_writes(obj):
    """obj without what the cluster writes on its own into an object provision owns: what client.api.comparable
    leaves out (status, the metadata every write changes) and the token tracking's labels. A hash of it changes
    when someone changes what provision wrote (the k3s record, targets/k3s/state.py)."""
    obj = comparable(obj)
    labels = (obj.get('metadata') or {}).get('labels') or {}
    for key in TOKEN_TRACKING:
        labels.pop(key, None)
    return obj


def merged(defaults, obj):
    """obj with defaults where it has no value of its own."""
    result = json.loads(json.dumps(obj))
    for key, value in defaults.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merged(value, result[key])
        elif key not in result:
            result[key] = value
    return result
