# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A thin, bounded client for the few kinds the lab touches.

Layer: the cluster client (the lowest): it imports nothing of the collection
but its own package (answer.py, errors.py, kinds.py, light.py).

Built on the kubernetes client's ApiClient (kubeconfig, TLS, auth) but
speaking plain JSON dicts, as kubectl -o json shows them, so the domain code
and its recorded fixtures see the same shapes. Every request has a timeout
and an unreachable API server becomes one clear error, never a traceback.

Importing the kubernetes client takes most of a second (it loads every model
class), more than a whole grade of the lab. So the client is imported only
when it is used, and Cluster(light=True) (the grade, which the learner's
kai-lab runs per step, and every module through common.connect) speaks to
the API server over the standard library when the kubeconfig holds only what
the lab's kubeconfigs hold (server, CA, client certificate and key or a
bearer token); any other kubeconfig (exec plugins, auth providers, proxies)
goes through the kubernetes client.

Over either transport every answer is read within bounds (client/answer.py):
one deadline for the whole request (request_timeout seconds, or the
caller's earlier .deadline), at most answer.MAX_BYTES, nested at most
answer.MAX_DEPTH levels, checked before it is parsed. A list is read in
pages of PAGE_SIZE objects (limit and continue), under one deadline: a page
whose answer is larger than answer.MAX_BYTES is read again with a limit
SHRINK times smaller, down to one object, so that many large objects are
read (issue 40); the whole list is at most MAX_LIST_BYTES of answers and
MAX_LIST_ITEMS objects, else ListTooLarge, which carries what was read (a
learner's flood is named by the grade, not taken for a broken cluster).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import threading

# Callers take the errors from here too (ClusterError, ApiException, InvalidName).
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import (
    AnswerTooLarge, ApiException, ClusterError, InvalidName, api_error, api_exception, short_reason)
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.kinds import KINDS, kind_path
from ansible_collections.gsb.kai_lab.plugins.module_utils.client import answer
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.light import LightApi

# Found, not imported: see the module's docstring.
try:
    HAS_KUBERNETES = importlib.util.find_spec('kubernetes') is not None
except (AttributeError, ImportError, ValueError):
    HAS_KUBERNETES = False
KUBERNETES_IMPORT_ERROR = None if HAS_KUBERNETES else 'ImportError: No module named kubernetes'

FIELD_MANAGER = 'gsb.kai_lab'
# kubectl's own page size; no list of the lab comes near the bound.
PAGE_SIZE = 500
MAX_LIST_ITEMS = 10000
# The answers of one list in all (each page's bytes as read): as much as one answer held when a list was one
# answer, so a grade's memory stays where it was. A solved lab's longest list, its Events, is about 40 KB.
MAX_LIST_BYTES = answer.MAX_BYTES
# A page larger than one answer may be is read again with a limit this many times smaller (down to one object),
# and a page this many times smaller than one answer may be lets the next one be this many times longer.
SHRINK = 4
# What a lean list drops of each object as its page arrives: fields the lab's code never reads (the API
# server's record of who wrote which field, and kubectl apply's copy of the object as applied).
LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration'


class Cluster(object):
    """Requests against one API server."""

    def __init__(self, kubeconfig=None, context=None, request_timeout=10, retries=1, light=False):
        if not HAS_KUBERNETES:
            raise ClusterError('the kubernetes Python library is not installed')
        self.timeout = request_timeout
        # The caller's own deadline (time.monotonic()), which every request ends by too (the grade's time limit).
        self.deadline = None
        self.api = LightApi.from_kubeconfig(kubeconfig, context) if light else None
        if self.api is not None:
            self.host = self.api.host
            return
        from kubernetes import client as k8s_client
        from kubernetes import config as k8s_config
        configuration = k8s_client.Configuration()
        try:
            k8s_config.load_kube_config(config_file=kubeconfig, context=context,
                                        client_configuration=configuration)
        except Exception as exc:  # the loader raises many kinds for a bad file
            raise ClusterError('cannot load kubeconfig %s: %s. Provision the lab first '
                               '(ansible-playbook playbooks/provision.yml) or set kai_lab_kubeconfig.'
                               % (kubeconfig or '~/.kube/config', exc))
        # Fail fast: one retry at most, not urllib3's default three with backoff.
        configuration.retries = retries
        self.host = configuration.host
        self.api = k8s_client.ApiClient(configuration)

    # ------------------------------------------------------------ transport
    def new_deadline(self, what):
        """The one deadline of a request (or of a whole paged list): request_timeout from now, or the caller's."""
        return answer.Deadline(self.timeout, what, at=getattr(self, 'deadline', None))

    def request(self, method, path, query=None, body=None, content_type=None, what=None, kind=None, deadline=None,
                accept='application/json', sized=False):
        """The answer's JSON, read within bounds (client/answer.py); what: the action, as errors name it.
        sized: (the JSON, the answer's length in bytes)."""
        what = what or '%s %s' % (method, path)
        deadline = deadline or self.new_deadline(what)
        headers = {'Accept': accept}
        if content_type:
            headers['Content-Type'] = content_type
        elif body is not None:
            headers['Content-Type'] = 'application/json'
        light = isinstance(self.api, LightApi)

        def call():
            return self.api.call_api(
                path, method, query_params=list((query or {}).items()), header_params=headers,
                body=body, auth_settings=['BearerToken'], _preload_content=False, _return_http_data_only=True,
                _request_timeout=deadline.left(), **({'_deadline': deadline} if light else {}))

        try:
            # LightApi keeps the deadline itself; urllib3's timeouts are per read until the headers are in.
            response = call() if light else _within(deadline, call)
            response = response[0] if isinstance(response, tuple) else response
            data = response.data if light else _read_response(response, deadline)
        except ClusterError:
            raise
        except Exception as exc:
            error = api_exception(exc)
            if error is not None:
                raise error
            if short_reason(exc) == 'timed out':
                raise deadline.error()
            raise ClusterError('cannot reach the Kubernetes API server at %s (%s). Is the lab running? '
                               'Provision it with ansible-playbook playbooks/provision.yml.'
                               % (self.host, short_reason(exc)))
        decoded = answer.decode(data, what, kind)
        return (decoded, len(data)) if sized else decoded

    # ------------------------------------------------------------ reads
    def get(self, api_version, kind, name, namespace=None):
        """The object, or None when it does not exist (or its name is one no object can have)."""
        try:
            path = kind_path(api_version, kind, namespace, name)
        except InvalidName:
            return None
        try:
            return self.request('GET', path, what='read %s %s' % (kind, '/'.join(p for p in (namespace, name) if p)),
                                kind=kind)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise ClusterError(api_error('read %s %s' % (kind, name), exc))

    def list(self, api_version, kind, namespace=None, label_selector=None, field_selector=None, lean=False):
        """The objects of a kind (in namespace; else in every namespace), read in pages under one deadline.

        A page whose answer is larger than answer.MAX_BYTES is read again with a limit SHRINK times smaller,
        down to one object (then AnswerTooLarge names it); the list in all is at most MAX_LIST_BYTES of answers
        and MAX_LIST_ITEMS objects, else ListTooLarge with what was read. lean: each object without what
        lean_object drops, as its page arrives (the grade's lists: it reads none of it).
        """
        path = kind_path(api_version, kind, namespace)
        what = 'list %s%s' % (kind, (' in %s' % namespace if namespace else ' in every namespace')
                              if KINDS[(api_version, kind)][2] else '')
        limit = PAGE_SIZE
        query = {'limit': limit}
        if label_selector:
            query['labelSelector'] = label_selector
        if field_selector:
            query['fieldSelector'] = field_selector
        deadline = self.new_deadline(what)
        items, size = [], 0
        while True:
            query['limit'] = limit
            try:
                page, length = self.request('GET', path, query, what=what, kind=kind, deadline=deadline, sized=True)
            except AnswerTooLarge:
                if limit == 1:
                    raise
                limit = max(1, limit // SHRINK)
                continue
            except ApiException as exc:
                if exc.status == 404 and kind in ('Queue', 'PodGroup'):
                    raise ClusterError('the API server does not serve %s (%s): KAI-Scheduler\'s CRDs are not '
                                       'installed. Provision the lab first.' % (kind, api_version))
                raise ClusterError(api_error('list %s' % kind, exc))
            page = page if isinstance(page, dict) else {}
            found = page.get('items') or []
            if lean:
                for item in found:
                    lean_object(item)
            items.extend(found)
            size += length
            meta = page.get('metadata') if isinstance(page.get('metadata'), dict) else {}
            token = meta.get('continue')
            if len(items) > MAX_LIST_ITEMS or size > MAX_LIST_BYTES:
                raise answer.too_long(what, kind, namespace, items, size, meta.get('remainingItemCount') if token else 0,
                                      MAX_LIST_ITEMS, MAX_LIST_BYTES)
            if not token:
                return items
            query['continue'] = token
            if length * SHRINK < answer.MAX_BYTES:
                limit = min(PAGE_SIZE, limit * SHRINK)

    # ------------------------------------------------------------ writes
    def apply(self, obj, dry_run=False, force=True, field_manager=FIELD_MANAGER, create_absent=False):
        """Server-side apply; returns (changed, resulting object).

        Fields this field manager applied before and leaves out now are
        removed (server-side apply semantics); other managers' fields stay.
        create_absent: an object that does not exist yet is created (POST), as
        kubectl create and a client-side kubectl apply do, which needs the
        create right only (an apply needs patch as well): the solver run with
        a learner's own account does what that learner may do.
        """
        api_version, kind = obj['apiVersion'], obj['kind']
        name = obj['metadata']['name']
        namespace = obj['metadata'].get('namespace')
        before = self.get(api_version, kind, name, namespace)
        query = {'fieldManager': field_manager, 'force': 'true' if force else 'false'}
        if dry_run:
            query['dryRun'] = 'All'
        if before is None and create_absent:
            query.pop('force')
            try:
                return True, self.request('POST', kind_path(api_version, kind, namespace), query, body=obj)
            except ApiException as exc:
                raise ClusterError(api_error('create %s %s' % (kind, name), exc))
        try:
            after = self.request('PATCH', kind_path(api_version, kind, namespace, name), query,
                                 body=obj, content_type='application/apply-patch+yaml')
        except ApiException as exc:
            raise ClusterError(api_error('apply %s %s' % (kind, name), exc))
        return (before is None or comparable(before) != comparable(after)), after

    def create(self, obj):
        """POST obj; the object the server answers (a review: its status)."""
        meta = obj.get('metadata') or {}
        try:
            return self.request('POST', kind_path(obj['apiVersion'], obj['kind'], meta.get('namespace')), body=obj)
        except ApiException as exc:
            raise ClusterError(api_error('create %s %s' % (obj['kind'], meta.get('name') or ''), exc))

    def patch(self, api_version, kind, name, patch, namespace=None, dry_run=False):
        query = {'fieldManager': FIELD_MANAGER}
        if dry_run:
            query['dryRun'] = 'All'
        try:
            return self.request('PATCH', kind_path(api_version, kind, namespace, name), query,
                                body=patch, content_type='application/merge-patch+json')
        except ApiException as exc:
            raise ClusterError(api_error('patch %s %s' % (kind, name), exc))

    def delete(self, api_version, kind, name, namespace=None, dry_run=False, propagation='Background'):
        """Delete; returns False when it was already gone."""
        query = {'propagationPolicy': propagation}
        if dry_run:
            query['dryRun'] = 'All'
        try:
            self.request('DELETE', kind_path(api_version, kind, namespace, name), query)
            return True
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise ClusterError(api_error('delete %s %s' % (kind, name), exc))


def _within(deadline, call):
    """call() (the kubernetes client's request, up to its answer's headers), given up on at the deadline: a server
    trickling its headers keeps urllib3 reading, a timeout per read, so it waits in a thread of its own (left to
    end with its own timeouts, or with the process)."""
    outcome = {}

    def run():
        try:
            outcome['value'] = call()
        except BaseException as exc:  # handed to the caller
            outcome['error'] = exc

    thread = threading.Thread(target=run, name='kai-lab-request', daemon=True)
    thread.start()
    thread.join(deadline.left())
    if thread.is_alive():
        raise deadline.error()
    if 'error' in outcome:
        raise outcome['error']
    return outcome['value']


def _read_response(response, deadline):
    """The body of the kubernetes client's answer (a urllib3 response not preloaded), bounded like LightApi's:
    each read waits at most what is left of the deadline."""
    if not hasattr(response, 'read'):  # already read (a test's stand-in)
        data = response.data or b''
        if len(data) > answer.MAX_BYTES:
            raise answer.too_large(deadline.what, answer.MAX_BYTES)
        return data
    sock = getattr(getattr(response, 'connection', None), 'sock', None)
    read = getattr(response, 'read1', None) or response.read

    def read_some(size):
        if sock is not None:
            sock.settimeout(deadline.left())
        return read(size)

    try:
        data = answer.read_body(read_some, deadline, length=(getattr(response, 'headers', None) or {}).get(
            'Content-Length'))
    except BaseException:
        response.close()  # not read to its end: its connection goes, not back to the pool
        raise
    response.release_conn()
    return data


def lean_object(obj):
    """obj without the fields the lab never reads (managedFields, kubectl's last-applied-configuration), in place."""
    meta = obj.get('metadata') if isinstance(obj, dict) else None
    if isinstance(meta, dict):
        meta.pop('managedFields', None)
        if isinstance(meta.get('annotations'), dict):
            meta['annotations'].pop(LAST_APPLIED, None)
    return obj


def comparable(obj):
    """An object without the fields the server changes on every write."""
    obj = json.loads(json.dumps(obj))
    metadata = obj.get('metadata') or {}
    for key in ('managedFields', 'resourceVersion', 'generation', 'creationTimestamp', 'uid'):
        metadata.pop(key, None)
    obj.pop('status', None)
    return obj
