# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where an object provision owns is: the API server's resources of each group version (issue 42).

Layer: the targets (both); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import ApiException, ClusterError, api_error
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.kinds import path_segment
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.owned.compare import shown


class NotServed(ClusterError):
    """A kind the API server does not serve (its CRD missing or not Established yet)."""


class Resources(object):
    """The API server's resources of each group version (discovery: one request per group version), so
    that an object's path (plural, namespaced or not) is the server's, not a guess."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.served = {}

    def locate(self, obj):
        """(the object's path, its collection's path, its namespace or None); ClusterError naming a kind the
        API server does not serve."""
        api_version, kind = obj.get('apiVersion'), obj.get('kind')
        meta = obj.get('metadata') or {}
        if not isinstance(api_version, str) or not isinstance(kind, str) or not meta.get('name'):
            raise ClusterError('an object without apiVersion, kind and metadata.name cannot be put back: %s'
                               % shown(obj))
        plural, namespaced = self._resource(api_version, kind)
        namespace = meta.get('namespace') if namespaced else None
        if namespaced and not namespace:
            raise ClusterError('%s %s has no metadata.namespace, and %s is kept in a namespace'
                               % (kind, meta['name'], kind))
        prefix = '/api/v1' if api_version == 'v1' else '/apis/' + api_version
        if namespace:
            prefix += '/namespaces/' + path_segment(namespace, 'namespace')
        collection = '%s/%s' % (prefix, plural)
        return '%s/%s' % (collection, path_segment(meta['name'], '%s name' % kind)), collection, namespace

    def resource_name(self, obj):
        """The object's resource as kubectl names it unambiguously: <plural>[.<group>]."""
        api_version = obj['apiVersion']
        plural = self._resource(api_version, obj['kind'])[0]
        return plural if '/' not in api_version else '%s.%s' % (plural, api_version.split('/')[0])

    def _resource(self, api_version, kind):
        if api_version not in self.served:
            path = '/api/v1' if api_version == 'v1' else '/apis/' + api_version
            try:
                listed = self.cluster.request('GET', path, what='discover %s' % api_version)
            except ApiException as exc:
                if exc.status == 404:
                    listed = {}
                else:
                    raise ClusterError(api_error('discover the resources of %s' % api_version, exc))
            self.served[api_version] = dict(
                (item.get('kind'), (item.get('name'), bool(item.get('namespaced'))))
                for item in (listed or {}).get('resources') or []
                if isinstance(item, dict) and '/' not in (item.get('name') or '/'))
        if kind not in self.served[api_version]:
            raise NotServed('the API server does not serve %s %s (its CRD is not installed or not Established '
                            'yet)' % (api_version, kind))
        return self.served[api_version][kind]
