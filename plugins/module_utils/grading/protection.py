# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What protects KAI's word in this grade: could the learner have written the evidence the grader reads?

The grader trusts objects in the cluster (Events, pod and PodGroup status,
bindings, pod labels, KAI's bind requests, the binder's ConfigMaps, the
reservation pods) as KAI's word. That trust holds only when no identity the
learner can use may write them. At each grade the API server is asked, one
SubjectAccessReview per write that could forge a kind of evidence or act as
someone who can (grading/protection_writes.py, client/access.py), whether
each such identity may make it:

- the learner's own (``learner_identity``);
- every ServiceAccount of the lab namespace, when the learner may create
  pods there (or anything that makes pods): a pod runs under any
  ServiceAccount of its namespace and holds its token, so the learner holds
  what each may do. These are asked the same writes, and whether they may
  create pods or Jobs in the lab namespace themselves (``pods.unchecked``:
  the admission policies check the learner's user name, not theirs); one
  that may is the hold ``pods.other_serviceaccount``, its holder named.

The admission policies and Pod Security label that cover what RBAC cannot
say (a pod created with spec.nodeName, labels changed after creation,
privileged pods) are read and compared with what provision applies
(grading/admission.py): a policy narrowed or a binding that no longer denies
is named with what the learner can now pass.

``protection(cluster, settings, kai_version, deadline)`` gives grade.json's
``protection`` block: ``protected``, ``identity``, ``holds`` (what the
learner may write, each an id, the ``holder`` identity and words in en/ko),
``reviews`` (the learner's own), ``pod_route`` (the write that lets the
learner run pods, or None) and ``pod_identities`` (the lab namespace's
ServiceAccounts with their reviews), ``policies``, ``pod_security``,
``line`` (the sentence in the grade's language) and ``error`` when the API
server could not be asked. A learner without an identity of its own
(``learner_identity`` unset: root with the lab's own kubeconfig, the default
sim and the lab text's VM) is asked about with the grader's own credentials
(SelfSubjectAccessReview): unprotected, and the grade says which writes it
holds.

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.client import access
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import ClusterError
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import admission
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.protection_writes import (
    OTHER_SERVICE_ACCOUNT, POD_MAKERS, UNCHECKED_PODS, evidence_kinds)
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import say

POD_SECURITY_LABEL = 'pod-security.kubernetes.io/enforce'
POD_SECURITY_LEVELS = ('baseline', 'restricted')
# Leave this much of the grade's time for writing its reports.
RESERVE = 0.5
# The ServiceAccount every namespace has (the controller-manager makes it): asked about even before it exists.
DEFAULT_SERVICE_ACCOUNT = 'default'

WORDS = {
    'protected': {
        'en': 'KAI\'s word is protected: the learner ({identity}){also} cannot {kinds}; admission policies {policies} '
              'and Pod Security {level} on namespace {namespace} are in place',
        'ko': 'KAI 의 증거는 보호됩니다. 학습자({identity})가 할 수 없는 것: {kinds}.{also} 적용된 것: 어드미션 정책 '
              '{policies}, 네임스페이스 {namespace} 의 Pod Security {level}'},
    'also': {'en': ' and the ServiceAccounts its pods may run under ({names})',
             'ko': ' 학습자의 파드가 실행될 수 있는 ServiceAccount({names})도 마찬가지입니다.'},
    'unprotected': {
        'en': 'KAI\'s word is NOT protected: the learner ({identity}) may {holds}. The grade is given, but these '
              'objects could be the learner\'s own writes',
        'ko': 'KAI 의 증거는 보호되지 않습니다. 학습자({identity})가 할 수 있는 것: {holds}. 채점은 하지만 '
              '이 객체들은 학습자가 직접 쓴 것일 수 있습니다'},
    'own_kubeconfig': {'en': 'the lab\'s own kubeconfig', 'ko': '실습의 관리자 kubeconfig'},
    'through_pod': {'en': 'run a pod under ServiceAccount {name} of namespace {namespace}, which may {writes}',
                    'ko': '네임스페이스 {namespace} 의 ServiceAccount {name} 권한으로 파드 실행 '
                          '(그 계정이 할 수 있는 것: {writes})'},
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
# Why a policy does not refuse what provision's refuses (grading/admission.py's ids), {detail} its own words.
PROBLEMS = {
    'missing': {'en': 'not in place', 'ko': '없음'},
    'unbound': {'en': 'no binding with validationActions Deny', 'ko': 'validationActions Deny 바인딩 없음'},
    'not_deny': {'en': 'its bindings only warn or audit (validationActions {detail}, no Deny)',
                 'ko': '바인딩이 경고나 감사만 함 (validationActions {detail}, Deny 없음)'},
    'binding_narrowed': {'en': 'its binding leaves requests out: {detail}',
                         'ko': '바인딩이 요청 일부를 빼놓음: {detail}'},
    'other_user': {'en': 'it does not name the learner', 'ko': '학습자를 가리키지 않음'},
    'ignore': {'en': 'failurePolicy {detail}', 'ko': 'failurePolicy {detail}'},
    'rules': {'en': 'its match rules leave out {detail}', 'ko': '매치 규칙에서 빠진 요청: {detail}'},
    'excluded': {'en': 'narrowed by {detail}', 'ko': '다음 설정 때문에 범위가 좁아짐: {detail}'},
    'conditions': {'en': 'its matchConditions are not provision\'s ({detail})',
                   'ko': 'matchConditions 가 프로비저닝의 것과 다름 ({detail})'},
    'validations': {'en': 'a check provision wrote is gone or changed: {detail}',
                    'ko': '프로비저닝이 쓴 검사 중 빠지거나 바뀐 것: {detail}'},
    'params': {'en': 'parameters it did not have ({detail}: a missing one may allow)',
               'ko': '원래 없던 매개변수 ({detail}: 매개변수가 없으면 허용될 수 있음)'},
}


class _OutOfTime(Exception):
    pass


def _shown(attributes):
    return '%s %s%s%s%s' % (attributes['verb'], attributes.get('group') and attributes['group'] + '/' or '',
                            attributes['resource'],
                            '/' + attributes['subresource'] if attributes.get('subresource') else '',
                            ' -n ' + attributes['namespace'] if attributes.get('namespace') else '')


def _resolved(attributes, namespaces):
    """attributes with its 'where' made a namespace (none: cluster-wide), or None when that namespace is not known
    (the learner's own, for a learner without an identity)."""
    where = attributes.get('where', 'lab')
    if where != 'cluster' and not namespaces.get(where):
        return None
    asked = dict((key, value) for key, value in attributes.items() if key != 'where')
    if where != 'cluster':
        asked['namespace'] = namespaces[where]
    return asked


def _ask(cluster, sets, namespaces, check_time):
    """The answers to sets ([(identity, [entry])], each entry with its 'reviews'): every write of every set in one
    batch (access.reviews: back to back on the grade's connection); for each set, per entry, the writes allowed."""
    questions = [(identity, index, _resolved(attributes, namespaces))
                 for identity, entries in sets for index, entry in enumerate(entries) for attributes in entry['reviews']]
    questions = [question for question in questions if question[2] is not None]
    check_time()
    answers = access.reviews(cluster, [(attributes, identity or None) for identity, _index, attributes in questions])
    allowed = dict((identity, [[] for _entry in entries]) for identity, entries in sets)
    for (identity, index, attributes), answer in zip(questions, answers):
        if answer['allowed']:
            allowed[identity][index].append(_shown(attributes))
    return allowed


def _reviews(entries, writes):
    return [{'id': entry['id'], 'allowed': bool(allowed), 'writes': allowed, 'words': entry['words']}
            for entry, allowed in zip(entries, writes)]


def _service_accounts(cluster, namespace):
    """The user names of the namespace's ServiceAccounts (its default one always), one list."""
    names = [(item.get('metadata') or {}).get('name') for item in cluster.list('v1', 'ServiceAccount', namespace)]
    names = sorted(set(name for name in names if isinstance(name, str) and name) | set([DEFAULT_SERVICE_ACCOUNT]))
    return [access.service_account_user(namespace, name) for name in names]


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
    namespaces = {'lab': namespace, 'learner': access.namespace_of(identity),
                  'kai': settings.get('kai_namespace') or 'kai-scheduler', 'reservation': kai_gpu.RESERVATION_NAMESPACE}
    policies = list(settings.get('learner_policies') or [])
    expected = admission.expected_policies(settings.get('learner_policy_objects'))
    result = {'protected': False, 'identity': identity or None, 'holds': [], 'reviews': [], 'pod_route': None,
              'pod_identities': [], 'policies': [], 'pod_security': None}

    def check_time():
        if deadline is not None and time.monotonic() > deadline - RESERVE:
            raise _OutOfTime()

    try:
        if error:
            raise ClusterError(error)
        if not hasattr(cluster, 'request'):
            raise ClusterError('this cluster client cannot ask')
        kinds = evidence_kinds(kai_version)
        # The learner's own writes, and what lets it run a pod of the lab namespace: one batch.
        makers = [{'id': 'pod_route', 'reviews': POD_MAKERS}] if identity else []
        asked = _ask(cluster, [(identity, kinds + makers)], namespaces, check_time)[identity]
        result['reviews'] = _reviews(kinds, asked)
        if identity:
            result['pod_route'] = (asked[len(kinds)] or [None])[0]
            if result['pod_route']:
                # The identities its pods may run as: each asked the same, and what the policies do not check.
                check_time()
                accounts = _service_accounts(cluster, namespace)
                entries = kinds + [UNCHECKED_PODS]
                theirs = _ask(cluster, [(account, entries) for account in accounts], namespaces, check_time)
                result['pod_identities'] = [{'identity': account, 'reviews': _reviews(entries, theirs[account])}
                                            for account in accounts]
            check_time()
            found = access.read_policies(cluster)
            for name in policies:
                problems = admission.problems(name, found, identity, expected.get(name))
                result['policies'].append({'name': name, 'in_place': not problems,
                                           'problem': problems[0][0] if problems else None,
                                           'problems': [{'id': key, 'detail': detail} for key, detail in problems]})
            result['pod_security'] = _pod_security(cluster, namespace, check_time)
    except _OutOfTime:
        result['error'] = say(WORDS['no_time'], 'en')
    except ClusterError as exc:
        result['error'] = str(exc)
    result['holds'] = holds(result)
    result['protected'] = not result['holds']
    result['line'] = line(result, lang)
    return result


def _both(key, **values):
    return dict((lang, say(WORDS[key], lang, **values)) for lang in ('en', 'ko'))


def _account(user):
    """(namespace, name) of a ServiceAccount's user name."""
    parts = user.split(':')
    return parts[2], parts[3]


def holds(result):
    """What the learner may write, each {'id', 'holder', 'en', 'ko'}: the reviews allowed (the learner's own; a
    ServiceAccount of the lab namespace its pods may run under that may write is pods.other_serviceaccount, with
    its 'writes'), policies and Pod Security missing."""
    found = []
    identity = result.get('identity')
    if not identity:
        found.append(dict(id='own_kubeconfig', holder=None, **_both('own_kubeconfig_hold')))
    elif not result.get('policies') and not result.get('error'):
        found.append(dict(id='no_policies', holder=identity, **_both('no_policies')))
    if result.get('error'):
        found.append(dict(id='not_asked', holder=identity, **_both('not_asked', error=result['error'])))
    for review in result.get('reviews') or []:
        if review['allowed']:
            found.append({'id': review['id'], 'holder': identity, 'en': review['words']['en'],
                          'ko': review['words']['ko']})
    for pod_identity in result.get('pod_identities') or []:
        account_namespace, name = _account(pod_identity['identity'])
        allowed = [review for review in pod_identity['reviews'] if review['allowed']]
        if allowed:
            found.append(dict(id=OTHER_SERVICE_ACCOUNT, holder=pod_identity['identity'],
                              writes=[review['id'] for review in allowed], **dict(
                                  (lang, say(WORDS['through_pod'], lang, name=name, namespace=account_namespace,
                                             writes=say(WORDS['and'], lang).join(r['words'][lang] for r in allowed)))
                                  for lang in ('en', 'ko'))))
    for policy in result.get('policies') or []:
        if not policy['in_place']:
            problems = policy.get('problems') or [{'id': policy['problem'], 'detail': ''}]
            found.append(dict(id='policy.' + policy['name'], holder=identity, **dict(
                (lang, say(WORDS['policy_missing'], lang, name=policy['name'], problem='; '.join(
                    say(PROBLEMS[p['id']], lang, detail=p['detail']) for p in problems))) for lang in ('en', 'ko'))))
    pod_security = result.get('pod_security')
    if pod_security and not pod_security['in_place']:
        found.append(dict(id='pod_security', holder=identity, **dict(
            (lang, say(WORDS['pod_security_missing'], lang, levels='/'.join(POD_SECURITY_LEVELS),
                       namespace=pod_security['namespace'])) for lang in ('en', 'ko'))))
    return found


def line(result, lang='en'):
    """The sentence saying what protects KAI's word, or which writes the learner holds, in lang."""
    identity = result.get('identity') or say(WORDS['own_kubeconfig'], lang)
    if result.get('error'):
        return say(WORDS['unknown'], lang, identity=identity, error=result['error'])
    if result.get('protected'):
        accounts = ['/'.join(_account(p['identity'])) for p in result.get('pod_identities') or []]
        return say(WORDS['protected'], lang, identity=identity,
                   also=say(WORDS['also'], lang, names=', '.join(accounts)) if accounts else '',
                   kinds=say(WORDS['and'], lang).join(r['words'][lang] for r in result['reviews']),
                   policies=', '.join(p['name'] for p in result['policies']),
                   level=(result.get('pod_security') or {}).get('enforce'),
                   namespace=(result.get('pod_security') or {}).get('namespace'))
    return say(WORDS['unprotected'], lang, identity=identity,
               holds=say(WORDS['and'], lang).join(h[lang] for h in result['holds']))
