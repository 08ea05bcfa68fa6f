# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kinds the lab touches and the API paths of their objects.

Layer: the cluster client. The KAI domain names its kinds' API versions from
here (kai/objects.py re-exports them): the client must know their paths, and a
fact is set once.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import InvalidName, NotSupportedKind

# KAI-Scheduler's kinds (its CRDs' served versions).
QUEUE_API = 'scheduling.run.ai/v2'
PODGROUP_API = 'scheduling.run.ai/v2alpha2'
# KAI's operator's Config (kai-config), which holds its queue label key and reservation namespace.
CONFIG_API = 'kai.scheduler/v1'

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
    # Reset removes the controllers that make pods of the lab's queues outside the lab namespace
    # (targets/reset_workloads.py).
    ('apps/v1', 'ReplicaSet'): ('apis/apps/v1', 'replicasets', True),
    ('apps/v1', 'StatefulSet'): ('apis/apps/v1', 'statefulsets', True),
    ('apps/v1', 'DaemonSet'): ('apis/apps/v1', 'daemonsets', True),
    ('batch/v1', 'CronJob'): ('apis/batch/v1', 'cronjobs', True),
    ('scheduling.k8s.io/v1', 'PriorityClass'): ('apis/scheduling.k8s.io/v1', 'priorityclasses', False),
    (QUEUE_API, 'Queue'): ('apis/' + QUEUE_API, 'queues', False),
    (PODGROUP_API, 'PodGroup'): ('apis/' + PODGROUP_API, 'podgroups', True),
    ('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration'):
        ('apis/admissionregistration.k8s.io/v1', 'mutatingwebhookconfigurations', False),
    # Reset removes the learner's own admission policies (targets/reset.py).
    ('admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicy'):
        ('apis/admissionregistration.k8s.io/v1', 'validatingadmissionpolicies', False),
    ('admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicyBinding'):
        ('apis/admissionregistration.k8s.io/v1', 'validatingadmissionpolicybindings', False),
    # kai-lab doctor: the RuntimeClass GPU pods may name, KAI's Config, the reservation pods' ServiceAccount,
    # and who may patch reservation pods.
    ('v1', 'ServiceAccount'): ('api/v1', 'serviceaccounts', True),
    ('node.k8s.io/v1', 'RuntimeClass'): ('apis/node.k8s.io/v1', 'runtimeclasses', False),
    (CONFIG_API, 'Config'): ('apis/' + CONFIG_API, 'configs', False),
    ('authorization.k8s.io/v1', 'SubjectAccessReview'):
        ('apis/authorization.k8s.io/v1', 'subjectaccessreviews', False),
}


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
    # Imported here: the KAI domain names its API versions from this module, and
    # kai-lab's verbs that read no cluster need not load urllib.
    from urllib.parse import quote
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
