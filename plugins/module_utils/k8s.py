# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A thin, bounded client for the few kinds the lab touches.

Built on the kubernetes client's ApiClient (kubeconfig, TLS, auth) but
speaking plain JSON dicts, as kubectl -o json shows them, so the domain code
and its recorded fixtures see the same shapes. Every request has a timeout
and an unreachable API server becomes one clear error, never a traceback.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
import traceback

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import PODGROUP_API, QUEUE_API

try:
    from urllib.parse import quote
except ImportError:  # Python 2 has no urllib.parse; sanity still imports the file there
    from urllib import quote

try:
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config
    from kubernetes.client.rest import ApiException
    HAS_KUBERNETES = True
    KUBERNETES_IMPORT_ERROR = None
except ImportError:
    HAS_KUBERNETES = False
    KUBERNETES_IMPORT_ERROR = traceback.format_exc()

    class ApiException(Exception):
        status = None

# apiVersion, kind -> (path prefix, plural, namespaced)
KINDS = {
    ('v1', 'Pod'): ('api/v1', 'pods', True),
    ('v1', 'ConfigMap'): ('api/v1', 'configmaps', True),
    ('v1', 'Event'): ('api/v1', 'events', True),
    ('v1', 'Namespace'): ('api/v1', 'namespaces', False),
    ('v1', 'Node'): ('api/v1', 'nodes', False),
    ('batch/v1', 'Job'): ('apis/batch/v1', 'jobs', True),
    ('apps/v1', 'Deployment'): ('apis/apps/v1', 'deployments', True),
    ('scheduling.k8s.io/v1', 'PriorityClass'): ('apis/scheduling.k8s.io/v1', 'priorityclasses', False),
    (QUEUE_API, 'Queue'): ('apis/' + QUEUE_API, 'queues', False),
    (PODGROUP_API, 'PodGroup'): ('apis/' + PODGROUP_API, 'podgroups', True),
    ('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration'):
        ('apis/admissionregistration.k8s.io/v1', 'mutatingwebhookconfigurations', False),
}

FIELD_MANAGER = 'gsb.kai_lab'


class ClusterError(Exception):
    """A failure talking to the cluster, with a message naming what to fix."""


class NotSupportedKind(ClusterError):
    pass


class InvalidName(ClusterError):
    """A name or namespace no object of the lab's kinds can have."""


# Names of every kind above are RFC 1123 subdomains (namespaces: labels). A
# value from a learner's manifest or an annotation ('runai/shared-gpu-configmap'
# is a crafted one) must never steer a request to another path: the API
# server decodes %2F back to '/' before routing, so quoting alone is not
# enough and such values are refused; what passes is quoted all the same.
_NAME = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')
_NAME_MAX = 253


def path_segment(value, what='name'):
    """value quoted for one segment of an API path, or InvalidName."""
    if not isinstance(value, str) or len(value) > _NAME_MAX or not _NAME.match(value):
        shown = repr(value)
        raise InvalidName('%s %s is not a valid Kubernetes name (lowercase letters, digits, "-" and "."; '
                          'no "/"), so no object has it' % (what, shown if len(shown) <= 80 else shown[:79] + '...'))
    return quote(value, safe='')


def kind_path(api_version, kind, namespace=None, name=None):
    try:
        prefix, plural, namespaced = KINDS[(api_version, kind)]
    except KeyError:
        raise NotSupportedKind('%s %s is not a kind this collection handles' % (api_version, kind))
    path = '/' + prefix
    if namespaced and namespace:
        path += '/namespaces/' + path_segment(namespace, 'namespace')
    path += '/' + plural
    if name:
        path += '/' + path_segment(name, '%s name' % kind)
    return path


class Cluster(object):
    """Requests against one API server."""

    def __init__(self, kubeconfig=None, context=None, request_timeout=10, retries=1):
        if not HAS_KUBERNETES:
            raise ClusterError('the kubernetes Python library is not installed')
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
        self.timeout = request_timeout

    # ------------------------------------------------------------ transport
    def request(self, method, path, query=None, body=None, content_type=None):
        headers = {'Accept': 'application/json'}
        if content_type:
            headers['Content-Type'] = content_type
        elif body is not None:
            headers['Content-Type'] = 'application/json'
        try:
            response = self.api.call_api(
                path, method, query_params=list((query or {}).items()), header_params=headers,
                body=body, auth_settings=['BearerToken'], _preload_content=False,
                _request_timeout=self.timeout)
        except ApiException:
            raise
        except Exception as exc:
            raise ClusterError('cannot reach the Kubernetes API server at %s (%s). Is the lab running? '
                               'Provision it with ansible-playbook playbooks/provision.yml.'
                               % (self.host, _short(exc)))
        data = response[0].data if isinstance(response, tuple) else response.data
        return json.loads(data) if data else {}

    # ------------------------------------------------------------ reads
    def get(self, api_version, kind, name, namespace=None):
        """The object, or None when it does not exist (or its name is one no object can have)."""
        try:
            path = kind_path(api_version, kind, namespace, name)
        except InvalidName:
            return None
        try:
            return self.request('GET', path)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise ClusterError(_api_error('read %s %s' % (kind, name), exc))

    def list(self, api_version, kind, namespace=None, label_selector=None, field_selector=None):
        query = {}
        if label_selector:
            query['labelSelector'] = label_selector
        if field_selector:
            query['fieldSelector'] = field_selector
        try:
            return self.request('GET', kind_path(api_version, kind, namespace), query).get('items') or []
        except ApiException as exc:
            if exc.status == 404 and kind in ('Queue', 'PodGroup'):
                raise ClusterError('the API server does not serve %s (%s): KAI-Scheduler\'s CRDs are not '
                                   'installed. Provision the lab first.' % (kind, api_version))
            raise ClusterError(_api_error('list %s' % kind, exc))

    # ------------------------------------------------------------ writes
    def apply(self, obj, dry_run=False, force=True, field_manager=FIELD_MANAGER):
        """Server-side apply; returns (changed, resulting object).

        Fields this field manager applied before and leaves out now are
        removed (server-side apply semantics); other managers' fields stay.
        """
        api_version, kind = obj['apiVersion'], obj['kind']
        name = obj['metadata']['name']
        namespace = obj['metadata'].get('namespace')
        before = self.get(api_version, kind, name, namespace)
        query = {'fieldManager': field_manager, 'force': 'true' if force else 'false'}
        if dry_run:
            query['dryRun'] = 'All'
        try:
            after = self.request('PATCH', kind_path(api_version, kind, namespace, name), query,
                                 body=obj, content_type='application/apply-patch+yaml')
        except ApiException as exc:
            raise ClusterError(_api_error('apply %s %s' % (kind, name), exc))
        return (before is None or comparable(before) != comparable(after)), after

    def patch(self, api_version, kind, name, patch, namespace=None, dry_run=False):
        query = {'fieldManager': FIELD_MANAGER}
        if dry_run:
            query['dryRun'] = 'All'
        try:
            return self.request('PATCH', kind_path(api_version, kind, namespace, name), query,
                                body=patch, content_type='application/merge-patch+json')
        except ApiException as exc:
            raise ClusterError(_api_error('patch %s %s' % (kind, name), exc))

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
            raise ClusterError(_api_error('delete %s %s' % (kind, name), exc))


def comparable(obj):
    """An object without the fields the server changes on every write."""
    obj = json.loads(json.dumps(obj))
    metadata = obj.get('metadata') or {}
    for key in ('managedFields', 'resourceVersion', 'generation', 'creationTimestamp', 'uid'):
        metadata.pop(key, None)
    obj.pop('status', None)
    return obj


def admission_denial(error):
    """The admission webhook's message inside an API error, if any."""
    text = str(error)
    marker = 'denied the request:'
    return text.split(marker, 1)[1].strip().rstrip('"}').strip() if marker in text else None


def _api_error(action, exc):
    message = None
    try:
        message = json.loads(exc.body).get('message')
    except Exception:
        message = None
    return 'cannot %s: %s %s' % (action, exc.status, message or exc.reason)


def _short(exc):
    text = str(exc)
    for marker in ('Connection refused', 'timed out', 'Name or service not known', 'certificate verify failed'):
        if marker in text:
            return marker.lower()
    return text[:200]
