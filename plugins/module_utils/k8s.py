# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A thin, bounded client for the few kinds the lab touches.

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
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import importlib.util
import json
import os
import re
import shutil
import ssl
import sys
import tempfile

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import PODGROUP_API, QUEUE_API

try:
    from urllib.parse import quote, urlencode, urlsplit
except ImportError:  # Python 2 has no urllib.parse; sanity still imports the file there
    from urllib import quote, urlencode
    from urlparse import urlsplit

try:
    import http.client as http_client
except ImportError:  # Python 2, for sanity's import test only
    http_client = None

# Found, not imported: see the module's docstring.
try:
    HAS_KUBERNETES = importlib.util.find_spec('kubernetes') is not None
except (AttributeError, ImportError, ValueError):
    HAS_KUBERNETES = False
KUBERNETES_IMPORT_ERROR = None if HAS_KUBERNETES else 'ImportError: No module named kubernetes'


class ApiException(Exception):
    """An API server's error answer (status, reason, body), from either transport."""

    def __init__(self, status=None, reason=None, body=None):
        super(ApiException, self).__init__('%s %s' % (status, reason))
        self.status = status
        self.reason = reason
        self.body = body


def _api_exception(exc):
    """exc as an ApiException when it is an API server's answer (the kubernetes client's own kind too), else None."""
    if isinstance(exc, ApiException):
        return exc
    rest = sys.modules.get('kubernetes.client.exceptions') or sys.modules.get('kubernetes.client.rest')
    if rest is not None and isinstance(exc, getattr(rest, 'ApiException', ())):
        return ApiException(exc.status, exc.reason, exc.body)
    return None


# apiVersion, kind -> (path prefix, plural, namespaced)
KINDS = {
    ('v1', 'Pod'): ('api/v1', 'pods', True),
    ('v1', 'ConfigMap'): ('api/v1', 'configmaps', True),
    ('v1', 'Event'): ('api/v1', 'events', True),
    ('v1', 'Namespace'): ('api/v1', 'namespaces', False),
    # Helm's release records (kai_running reads the deployed chart's version on k3s).
    ('v1', 'Secret'): ('api/v1', 'secrets', True),
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

    def __init__(self, kubeconfig=None, context=None, request_timeout=10, retries=1, light=False):
        if not HAS_KUBERNETES:
            raise ClusterError('the kubernetes Python library is not installed')
        self.timeout = request_timeout
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
        except Exception as exc:
            answer = _api_exception(exc)
            if answer is not None:
                raise answer
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


# What a kubeconfig may hold for the standard library's transport; anything
# else (exec, auth-provider, proxy-url, tls-server-name, impersonation, ...)
# needs the kubernetes client.
_LIGHT_CLUSTER_KEYS = frozenset(('server', 'certificate-authority', 'certificate-authority-data',
                                 'insecure-skip-tls-verify', 'extensions'))
_LIGHT_USER_KEYS = frozenset(('client-certificate', 'client-certificate-data', 'client-key', 'client-key-data',
                              'token', 'extensions'))


class _Answer(object):
    def __init__(self, data):
        self.data = data


class LightApi(object):
    """ApiClient.call_api's part the lab uses, over http.client with one kept-alive connection."""

    def __init__(self, server, context, token=None):
        parts = urlsplit(server)
        self.host = server.rstrip('/')
        self.scheme, self.netloc, self.prefix = parts.scheme, parts.netloc, parts.path.rstrip('/')
        self.context = context
        self.token = token
        self.connection = None

    @classmethod
    def from_kubeconfig(cls, path, context_name=None):
        """A LightApi for the kubeconfig's context, or None when it needs the kubernetes client (or is broken:
        the kubernetes client then says what is wrong with it)."""
        if http_client is None:
            return None
        if path is None:
            paths = [p for p in os.environ.get('KUBECONFIG', '').split(os.pathsep) if p]
            if len(paths) > 1:
                return None  # merged kubeconfigs: the kubernetes client's rules
            path = paths[0] if paths else '~/.kube/config'
        path = os.path.expanduser(path)
        try:
            import yaml
            with open(path) as handle:
                config = yaml.safe_load(handle)
            name = context_name or config['current-context']
            context = _named(config.get('contexts'), name)['context']
            cluster = _named(config.get('clusters'), context['cluster'])['cluster']
            user = _named(config.get('users'), context['user'])['user'] if context.get('user') else {}
            if set(cluster) - _LIGHT_CLUSTER_KEYS or set(user or {}) - _LIGHT_USER_KEYS or \
                    set(context) - set(('cluster', 'user', 'namespace', 'extensions')):
                return None
            server = cluster['server']
            if urlsplit(server).scheme == 'http':
                return cls(server, None, user.get('token'))
            if urlsplit(server).scheme != 'https':
                return None
            return cls(server, _tls_context(os.path.dirname(path), cluster, user or {}), user.get('token'))
        except Exception:  # anything unexpected: the kubernetes client reads it and names the problem
            return None

    def _connect(self, timeout):
        if self.scheme == 'https':
            return http_client.HTTPSConnection(self.netloc, timeout=timeout, context=self.context)
        return http_client.HTTPConnection(self.netloc, timeout=timeout)

    def call_api(self, path, method, query_params=None, header_params=None, body=None, _request_timeout=None,
                 **kwargs):
        url = self.prefix + path + ('?' + urlencode(query_params) if query_params else '')
        headers = dict(header_params or {})
        if self.token:
            headers['Authorization'] = 'Bearer ' + self.token
        payload = None if body is None else json.dumps(body).encode('utf-8')
        for attempt in (1, 2):
            reused = self.connection is not None
            if reused:
                self.connection.timeout = _request_timeout
                if self.connection.sock is not None:
                    self.connection.sock.settimeout(_request_timeout)
            else:
                self.connection = self._connect(_request_timeout)
            try:
                self.connection.request(method, url, body=payload, headers=headers)
                response = self.connection.getresponse()
                data = response.read()
            except (http_client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                if reused and attempt == 1:
                    continue  # a kept-alive connection the server closed meanwhile: once more on a new one
                raise
            except Exception:
                self.close()
                raise
            if response.status >= 400:
                raise ApiException(response.status, response.reason, data.decode('utf-8', 'replace'))
            return _Answer(data)

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def _named(entries, name):
    for entry in entries or []:
        if entry.get('name') == name:
            return entry
    raise KeyError(name)


def _tls_context(base, cluster, user):
    """The TLS context of a kubeconfig's cluster and user (paths relative to the kubeconfig's directory)."""
    def path_of(value):
        return os.path.join(base, os.path.expanduser(value))

    if cluster.get('insecure-skip-tls-verify'):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif cluster.get('certificate-authority-data'):
        context = ssl.create_default_context(cadata=base64.b64decode(cluster['certificate-authority-data']).decode())
    elif cluster.get('certificate-authority'):
        context = ssl.create_default_context(cafile=path_of(cluster['certificate-authority']))
    else:
        context = ssl.create_default_context()
    if user.get('client-certificate-data') or user.get('client-certificate'):
        scratch = tempfile.mkdtemp()  # mode 0700: the key is there only while it is loaded
        try:
            files = []
            for key in ('client-certificate', 'client-key'):
                if user.get(key + '-data'):
                    name = os.path.join(scratch, key)
                    with open(name, 'wb') as handle:
                        handle.write(base64.b64decode(user[key + '-data']))
                    files.append(name)
                else:
                    files.append(path_of(user[key]))
            context.load_cert_chain(files[0], files[1])
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return context


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
