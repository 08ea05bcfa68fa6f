# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What protects KAI's word in this grade: could the learner have written the evidence the grader reads?

The grader trusts objects in the cluster (Events, pod and PodGroup status,
bindings, pod labels) as KAI's word. That trust holds only when the
learner's Kubernetes identity cannot write them. At each grade the API
server is asked, one SubjectAccessReview per write that could forge a kind
of evidence (client/access.py), whether the learner's identity may make it,
and the admission policies and
Pod Security label that cover what RBAC cannot say (a pod created with
spec.nodeName, labels changed after creation, privileged pods) are read.

``protection(cluster, settings, kai_version, deadline)`` gives grade.json's
``protection`` block: ``protected``, ``identity``, ``holds`` (what the
learner may write, each an id and words in en/ko), ``reviews``, ``policies``,
``pod_security``, ``line`` (the sentence in the grade's language) and
``error`` when the API server could not be asked. A learner without an
identity of its own (``learner_identity`` unset: root with the lab's own
kubeconfig, the default sim and the lab text's VM) is asked about with the
grader's own credentials (SelfSubjectAccessReview): unprotected, and the
grade says which writes it holds.

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.client import access
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import ClusterError
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.kinds import PODGROUP_API
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import say

KAI_GROUP = PODGROUP_API.split('/', 1)[0]
POD_SECURITY_LABEL = 'pod-security.kubernetes.io/enforce'
POD_SECURITY_LEVELS = ('baseline', 'restricted')
# Leave this much of the grade's time for writing its reports.
RESERVE = 0.5

# The kinds of evidence the grader reads as KAI's word, each with the writes
# that would forge it (one SubjectAccessReview each, in the lab namespace).
# A change is asked as both RBAC verbs that make it, patch and update: each
# is granted on its own, and one is enough to rewrite what KAI wrote (KAI's
# scheduler patches PodGroups' status and pods' labels, its binder writes
# pods' status; events.k8s.io's Events are the core ones by another API).
# podgroups.create is a hole only where KAI makes the gang's PodGroup itself
# (its profile's job_gang): before that, step 5's explicit form has the
# learner create it.
CHANGES = ('patch', 'update')


def _writes(verbs, resource, group=None, subresource=None):
    return tuple(dict([('verb', verb), ('resource', resource)] + ([('group', group)] if group else [])
                      + ([('subresource', subresource)] if subresource else [])) for verb in verbs)


EVIDENCE = (
    {'id': 'events.create',
     'reviews': _writes(('create',) + CHANGES, 'events') + _writes(('create',) + CHANGES, 'events', 'events.k8s.io'),
     'words': {'en': 'create or change Events (KAI\'s reasons, steps 3, 5, 6)',
               'ko': '이벤트 생성·변경 (KAI 의 이유, 3·5·6단계)'}},
    {'id': 'pods.status', 'reviews': _writes(CHANGES, 'pods', subresource='status'),
     'words': {'en': 'write pods/status', 'ko': 'pods/status 쓰기'}},
    {'id': 'podgroups.status', 'reviews': _writes(CHANGES, 'podgroups', KAI_GROUP, 'status'),
     'words': {'en': 'write podgroups/status (KAI\'s gang conditions)', 'ko': 'podgroups/status 쓰기 (KAI 의 갱 조건)'}},
    {'id': 'pods.binding', 'reviews': _writes(('create',), 'pods', subresource='binding'),
     'words': {'en': 'bind pods to a node (pods/binding, KAI\'s binder\'s job)',
               'ko': '파드를 노드에 바인딩 (pods/binding, KAI binder 의 일)'}},
    {'id': 'pods.update', 'reviews': _writes(CHANGES, 'pods'),
     'words': {'en': 'change pods after creation (labels, annotations)',
               'ko': '생성 후 파드 변경 (레이블, 어노테이션)'}},
    {'id': 'podgroups.create', 'when': 'job_gang',
     'reviews': ({'verb': 'create', 'group': KAI_GROUP, 'resource': 'podgroups'},),
     'words': {'en': 'create PodGroups (KAI makes them on this version)',
               'ko': 'PodGroup 생성 (이 버전에서는 KAI 가 만듦)'}},
)

WORDS = {
    'protected': {
        'en': 'KAI\'s word is protected: the learner ({identity}) cannot {kinds}; admission policies {policies} and '
              'Pod Security {level} on namespace {namespace} are in place',
        'ko': 'KAI 의 증거는 보호됩니다. 학습자({identity})가 할 수 없는 것: {kinds}. 적용된 것: 어드미션 정책 '
              '{policies}, 네임스페이스 {namespace} 의 Pod Security {level}'},
    'unprotected': {
        'en': 'KAI\'s word is NOT protected: the learner ({identity}) may {holds}. The grade is given, but these '
              'objects could be the learner\'s own writes',
        'ko': 'KAI 의 증거는 보호되지 않습니다. 학습자({identity})가 할 수 있는 것: {holds}. 채점은 하지만 '
              '이 객체들은 학습자가 직접 쓴 것일 수 있습니다'},
    'own_kubeconfig': {'en': 'the lab\'s own kubeconfig', 'ko': '실습의 관리자 kubeconfig'},
    'policy_missing': {'en': 'pass what admission policy {name} refuses ({problem})',
                       'ko': '어드미션 정책 {name:이} 막는 요청 ({problem})'},
    'pod_security_missing': {'en': 'run privileged or hostPath pods (no Pod Security {levels} on namespace {namespace})',
                             'ko': '특권 또는 hostPath 파드 실행 (네임스페이스 {namespace} 에 Pod Security {levels} 없음)'},
    'not_asked': {'en': 'anything the API server was not asked about ({error})',
                  'ko': 'API 서버에 묻지 못한 모든 쓰기 ({error})'},
    'unknown': {'en': 'KAI\'s word is NOT known to be protected: the API server could not be asked what the learner '
                      '({identity}) may write ({error}). The grade is given, unmarked by any protection',
                'ko': 'KAI 의 증거가 보호되는지 알 수 없습니다: 학습자({identity})가 무엇을 쓸 수 있는지 API 서버에 '
                      '묻지 못했습니다 ({error}). 채점은 하지만 보호되지 않은 것으로 봅니다'},
    'no_time': {'en': 'no time was left in the grade to ask', 'ko': '채점 시간이 남지 않아 묻지 못했습니다'},
    'own_kubeconfig_hold': {'en': 'use the lab\'s own kubeconfig (no Kubernetes identity of its own: kai_lab_learner_user)',
                            'ko': '실습의 관리자 kubeconfig 사용 (자신의 Kubernetes 계정 없음: kai_lab_learner_user)'},
    'no_policies': {'en': 'pass what no admission policy checks (none named: learner_policies)',
                    'ko': '어떤 어드미션 정책도 검사하지 않는 요청 (정책 이름 없음: learner_policies)'},
    'and': {'en': ', ', 'ko': ', '},
}
PROBLEMS = {
    'missing': {'en': 'not in place', 'ko': '없음'},
    'unbound': {'en': 'no binding with validationActions Deny', 'ko': 'validationActions Deny 바인딩 없음'},
    'other_user': {'en': 'it does not name the learner', 'ko': '학습자를 가리키지 않음'},
    'ignore': {'en': 'failurePolicy Ignore', 'ko': 'failurePolicy Ignore'},
}


class _OutOfTime(Exception):
    pass


def evidence_kinds(kai_version):
    """The EVIDENCE entries that apply on kai_version (all when it has no profile)."""
    try:
        profile = kai_profiles.profile_for(kai_version)
    except kai_profiles.KaiProfileError:
        profile = {}
    return [entry for entry in EVIDENCE if not entry.get('when') or profile.get(entry['when'], True)]


def _reviews(cluster, identity, namespace, kinds, check_time):
    results = []
    for entry in kinds:
        allowed, reasons = False, []
        for attributes in entry['reviews']:
            check_time()
            answer = access.review(cluster, dict(attributes, namespace=namespace), identity or None)
            if answer['allowed']:
                allowed = True
                reasons.append('%s %s%s%s' % (attributes['verb'], attributes.get('group') and attributes['group'] + '/' or '',
                                              attributes['resource'],
                                              '/' + attributes['subresource'] if attributes.get('subresource') else ''))
        results.append({'id': entry['id'], 'allowed': allowed, 'writes': reasons, 'words': entry['words']})
    return results


def _policy_problem(name, found, identity):
    policy = found['policies'].get(name)
    if policy is None:
        return 'missing'
    spec = policy.get('spec') or {}
    if spec.get('failurePolicy') == 'Ignore':
        return 'ignore'
    expressions = ' '.join(str(c.get('expression') or '') for c in spec.get('matchConditions') or [])
    if identity and "'%s'" % identity not in expressions and '"%s"' % identity not in expressions:
        return 'other_user'
    bound = [b for b in found['bindings'].values()
             if (b.get('spec') or {}).get('policyName') == name and 'Deny' in ((b.get('spec') or {}).get('validationActions') or [])]
    return None if bound else 'unbound'


def _pod_security(cluster, namespace, check_time):
    check_time()
    labels = ((cluster.get('v1', 'Namespace', namespace) or {}).get('metadata') or {}).get('labels') or {}
    level = labels.get(POD_SECURITY_LABEL)
    return {'namespace': namespace, 'enforce': level, 'in_place': level in POD_SECURITY_LEVELS}


def protection(cluster, settings, kai_version, deadline=None, lang='en', error=None):
    """grade.json's protection block (see the module's docstring); never raises for what the cluster answers.

    error: why the cluster could not be read at all (the grade's snapshot): then nothing is asked."""
    identity = settings.get('learner_identity') or ''
    namespace = settings['namespace']
    policies = list(settings.get('learner_policies') or [])
    result = {'protected': False, 'identity': identity or None, 'holds': [], 'reviews': [], 'policies': [],
              'pod_security': None}

    def check_time():
        if deadline is not None and time.monotonic() > deadline - RESERVE:
            raise _OutOfTime()

    try:
        if error:
            raise ClusterError(error)
        if not hasattr(cluster, 'request'):
            raise ClusterError('this cluster client cannot ask')
        result['reviews'] = _reviews(cluster, identity, namespace, evidence_kinds(kai_version), check_time)
        if identity:
            check_time()
            found = access.read_policies(cluster)
            for name in policies:
                problem = _policy_problem(name, found, identity)
                result['policies'].append({'name': name, 'in_place': problem is None, 'problem': problem})
            result['pod_security'] = _pod_security(cluster, namespace, check_time)
    except _OutOfTime:
        result['error'] = say(WORDS['no_time'], 'en')
    except ClusterError as exc:
        result['error'] = str(exc)
    result['holds'] = holds(result)
    result['protected'] = not result['holds']
    result['line'] = line(result, lang)
    return result


def holds(result):
    """What the learner may write, each {'id', 'en', 'ko'}: the reviews allowed, policies and Pod Security missing."""
    def both(key, **values):
        return dict((lang, say(WORDS[key], lang, **values)) for lang in ('en', 'ko'))

    found = []
    if not result.get('identity'):
        found.append(dict(id='own_kubeconfig', **both('own_kubeconfig_hold')))
    elif not result.get('policies') and not result.get('error'):
        found.append(dict(id='no_policies', **both('no_policies')))
    if result.get('error'):
        found.append(dict(id='not_asked', **both('not_asked', error=result['error'])))
    for review in result.get('reviews') or []:
        if review['allowed']:
            found.append({'id': review['id'], 'en': review['words']['en'], 'ko': review['words']['ko']})
    for policy in result.get('policies') or []:
        if not policy['in_place']:
            found.append(dict(id='policy.' + policy['name'], **dict(
                (lang, say(WORDS['policy_missing'], lang, name=policy['name'],
                           problem=say(PROBLEMS[policy['problem']], lang))) for lang in ('en', 'ko'))))
    pod_security = result.get('pod_security')
    if pod_security and not pod_security['in_place']:
        found.append(dict(id='pod_security', **dict(
            (lang, say(WORDS['pod_security_missing'], lang, levels='/'.join(POD_SECURITY_LEVELS),
                       namespace=pod_security['namespace'])) for lang in ('en', 'ko'))))
    return found


def line(result, lang='en'):
    """The sentence saying what protects KAI's word, or which writes the learner holds, in lang."""
    identity = result.get('identity') or say(WORDS['own_kubeconfig'], lang)
    if result.get('error'):
        return say(WORDS['unknown'], lang, identity=identity, error=result['error'])
    if result.get('protected'):
        return say(WORDS['protected'], lang, identity=identity,
                   kinds=say(WORDS['and'], lang).join(r['words'][lang] for r in result['reviews']),
                   policies=', '.join(p['name'] for p in result['policies']),
                   level=(result.get('pod_security') or {}).get('enforce'),
                   namespace=(result.get('pod_security') or {}).get('namespace'))
    return say(WORDS['unprotected'], lang, identity=identity,
               holds=say(WORDS['and'], lang).join(h[lang] for h in result['holds']))
