# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ask the API server who may do what: SubjectAccessReview, one POST per question (many sent back to back).

Layer: the cluster client; imports nothing of the collection but its own package.

``review(cluster, attributes, user)`` asks whether ``user`` (a Kubernetes
user name, with the groups its token would carry) may do what
``attributes`` (a SubjectAccessReview's resourceAttributes) names; with no
user, whether the cluster client's own credentials may (a
SelfSubjectAccessReview: the learner who holds the lab's own kubeconfig).
The answer is the API server's authorizer's (RBAC, Node, webhooks), so no
rule is matched here. Admission (ValidatingAdmissionPolicy, Pod Security)
is not part of it: ``read_policies`` reads those objects.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.client.answer import decode
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import (
    ApiException, ClusterError, api_error, api_exception, short_reason)
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.light import LightApi

AUTHORIZATION = '/apis/authorization.k8s.io/v1/'
POLICY_API = 'admissionregistration.k8s.io/v1'
POLICIES = '/apis/' + POLICY_API + '/validatingadmissionpolicies'
BINDINGS = '/apis/' + POLICY_API + '/validatingadmissionpolicybindings'
SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:'


def service_account_user(namespace, name):
    """The user name a ServiceAccount's token authenticates as."""
    return '%s%s:%s' % (SERVICE_ACCOUNT_PREFIX, namespace, name)


def namespace_of(user):
    """The namespace of a ServiceAccount's user name, or None for any other user."""
    if user and user.startswith(SERVICE_ACCOUNT_PREFIX) and user.count(':') == 3:
        return user.split(':')[2]
    return None


def groups_of(user):
    """The groups the API server gives user's credentials: a ServiceAccount's token carries its two groups."""
    groups = ['system:authenticated']
    if user.startswith(SERVICE_ACCOUNT_PREFIX) and user.count(':') == 3:
        groups[:0] = ['system:serviceaccounts', 'system:serviceaccounts:' + user.split(':')[2]]
    return groups


def review_body(attributes, user=None):
    """The (Self)SubjectAccessReview to POST: (path, body)."""
    spec = {'resourceAttributes': dict((key, value) for key, value in attributes.items() if value not in (None, ''))}
    if user:
        spec.update(user=user, groups=groups_of(user))
        return AUTHORIZATION + 'subjectaccessreviews', {
            'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SubjectAccessReview', 'spec': spec}
    return AUTHORIZATION + 'selfsubjectaccessreviews', {
        'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SelfSubjectAccessReview', 'spec': spec}


def review(cluster, attributes, user=None):
    """{'allowed': bool, 'reason': str} from the API server; ClusterError when it cannot say."""
    path, body = review_body(attributes, user)
    try:
        answer = cluster.request('POST', path, body=body)
    except ApiException as exc:
        raise ClusterError(api_error('ask the API server (%s)' % body['kind'], exc))
    except ClusterError:
        raise
    except Exception as exc:  # another transport's own error kind
        found = api_exception(exc)
        if found is None:
            raise ClusterError('cannot ask the API server (%s): %s' % (body['kind'], exc))
        raise ClusterError(api_error('ask the API server (%s)' % body['kind'], found))
    return _answer(answer, body['kind'])


def reviews(cluster, questions):
    """review()'s answers to questions ([(attributes, user)]), in order, within one deadline; ClusterError at the
    first the API server cannot say. On the standard library's transport they go out back to back on its
    kept-alive connection (LightApi.call_many); on another, one by one."""
    api = getattr(cluster, 'api', None)
    if not isinstance(api, LightApi):
        return [review(cluster, attributes, user) for attributes, user in questions]
    bodies = [review_body(attributes, user) for attributes, user in questions]
    what = 'ask the API server (access reviews)'
    try:
        found = api.call_many([(path, 'POST', body) for path, body in bodies], _deadline=cluster.new_deadline(what))
    except ClusterError:
        raise
    except Exception as exc:  # the connection's own error kinds
        raise ClusterError('cannot %s at %s: %s' % (what, cluster.host, short_reason(exc)))
    answers = []
    for (_path, body), one in zip(bodies, found):
        if isinstance(one, ApiException):
            raise ClusterError(api_error('ask the API server (%s)' % body['kind'], one))
        answers.append(_answer(decode(one.data, what), body['kind']))
    return answers


def _answer(answer, kind):
    status = answer.get('status') if isinstance(answer, dict) else None
    if not isinstance(status, dict):
        raise ClusterError('the API server gave no answer to the %s' % kind)
    return {'allowed': status.get('allowed') is True and not status.get('denied'),
            'reason': str(status.get('reason') or status.get('evaluationError') or '')}


def read_policies(cluster, selector=None):
    """{'policies': {name: object}, 'bindings': {name: object}}: the ValidatingAdmissionPolicies and their
    bindings (label selector optional), two lists; ClusterError when they cannot be read."""
    found = {}
    for key, path in (('policies', POLICIES), ('bindings', BINDINGS)):
        try:
            items = cluster.request('GET', path, {'labelSelector': selector} if selector else None).get('items') or []
        except ApiException as exc:
            if exc.status == 404:  # an API server without ValidatingAdmissionPolicy (before Kubernetes 1.30)
                items = []
            else:
                raise ClusterError(api_error('list %s' % path.rsplit('/', 1)[1], exc))
        found[key] = dict(((item.get('metadata') or {}).get('name'), item) for item in items if isinstance(item, dict))
    return found
