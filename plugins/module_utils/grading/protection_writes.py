# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The writes the protection verdict asks the API server about (grading/protection.py), each kind with its words.

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.client.kinds import PODGROUP_API
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles

KAI_GROUP = PODGROUP_API.split('/', 1)[0]

# The kinds of evidence the grader reads as KAI's word, each with the writes
# that would forge it or let its holder act as someone who can (one
# SubjectAccessReview each). 'where' names the namespace: the lab's when
# unset, the learner's own (its ServiceAccount's), KAI's, KAI's reservation
# namespace, or 'cluster' (no namespace: cluster-wide, every namespace). A
# change is asked as both RBAC verbs that make it, patch and update: each is
# granted on its own, and one is enough to rewrite what KAI wrote (KAI's scheduler patches PodGroups'
# status and pods' labels, its binder writes pods' status; events.k8s.io's
# Events are the core ones by another API). podgroups.create is a hole only
# where KAI makes the gang's PodGroup itself (its profile's job_gang): before
# that, step 5's explicit form has the learner create it. An entry is held
# when the API server allows any of its writes (each is asked, and named).
CHANGES = ('patch', 'update')
WRITES = ('create',) + CHANGES


def _writes(verbs, resource, group=None, subresource=None, where='lab'):
    return tuple(dict([('verb', verb), ('resource', resource)] + ([('group', group)] if group else [])
                      + ([('subresource', subresource)] if subresource else [])
                      + ([('where', where)] if where != 'lab' else [])) for verb in verbs)


EVIDENCE = (
    {'id': 'events.create',
     'reviews': _writes(WRITES, 'events') + _writes(WRITES, 'events', 'events.k8s.io'),
     'words': {'en': 'create or change Events (KAI\'s reasons, steps 3, 5, 6)',
               'ko': '이벤트 생성·변경 (KAI 의 이유, 3·5·6단계)'}},
    {'id': 'pods.status', 'reviews': _writes(CHANGES, 'pods', subresource='status'),
     'words': {'en': 'write pods/status', 'ko': 'pods/status 쓰기'}},
    {'id': 'podgroups.status', 'reviews': _writes(CHANGES, 'podgroups', KAI_GROUP, 'status'),
     'words': {'en': 'write podgroups/status (KAI\'s gang conditions)', 'ko': 'podgroups/status 쓰기 (KAI 의 갱 조건)'}},
    {'id': 'pods.binding', 'reviews': _writes(('create',), 'pods', subresource='binding') + _writes(('create',), 'bindings'),
     'words': {'en': 'bind pods to a node (pods/binding, KAI\'s binder\'s job)',
               'ko': '파드를 노드에 바인딩 (pods/binding, KAI binder 의 일)'}},
    {'id': 'pods.update', 'reviews': _writes(CHANGES, 'pods'),
     'words': {'en': 'change pods after creation (labels, annotations)',
               'ko': '생성 후 파드 변경 (레이블, 어노테이션)'}},
    {'id': 'podgroups.create', 'when': 'job_gang',
     'reviews': _writes(('create',), 'podgroups', KAI_GROUP),
     'words': {'en': 'create PodGroups (KAI makes them on this version)',
               'ko': 'PodGroup 생성 (이 버전에서는 KAI 가 만듦)'}},
    # Acting as anyone: KAI's ServiceAccounts, a cluster admin.
    {'id': 'impersonate',
     'reviews': (_writes(('impersonate',), 'users', where='cluster') + _writes(('impersonate',), 'groups', where='cluster')
                 + _writes(('impersonate',), 'serviceaccounts', where='cluster')
                 + _writes(('impersonate',), 'serviceaccounts', where='kai')),
     'words': {'en': 'impersonate users, groups or ServiceAccounts (act as KAI or an admin)',
               'ko': '사용자·그룹·ServiceAccount 가장 (impersonate: KAI 나 관리자 권한으로 행동)'}},
    # A token of another ServiceAccount: of the lab namespace's, the learner's own namespace's, KAI's.
    {'id': 'serviceaccounts.token',
     'reviews': (_writes(('create',), 'serviceaccounts', subresource='token')
                 + _writes(('create',), 'serviceaccounts', subresource='token', where='learner')
                 + _writes(('create',), 'serviceaccounts', subresource='token', where='kai')),
     'words': {'en': 'create ServiceAccount tokens (serviceaccounts/token: act as another account, KAI\'s too)',
               'ko': 'ServiceAccount 토큰 생성 (serviceaccounts/token: KAI 의 것을 포함한 다른 계정 권한으로 행동)'}},
    # KAI's scheduler writes a BindRequest, its binder binds the pod as it says (in the pod's namespace).
    {'id': 'bindrequests.write', 'reviews': _writes(WRITES, 'bindrequests', KAI_GROUP),
     'words': {'en': 'create or change BindRequests (KAI\'s binder binds pods as they say)',
               'ko': 'BindRequest 생성·변경 (KAI binder 가 그 내용대로 파드를 바인딩)'}},
    # KAI's binder writes the fraction pods' shared-GPU ConfigMaps in the lab namespace (step 7).
    {'id': 'configmaps.write', 'reviews': _writes(WRITES, 'configmaps'),
     'words': {'en': 'create or change ConfigMaps in the lab namespace (KAI\'s binder writes the shared GPU\'s there, '
                     'step 7)',
               'ko': '실습 네임스페이스의 ConfigMap 생성·변경 (KAI binder 가 공유 GPU 의 것을 씀, 7단계)'}},
    # KAI's reservation pods hold the shared GPU of step 7.
    {'id': 'reservation.pods', 'reviews': _writes(WRITES + ('delete',), 'pods', where='reservation'),
     'words': {'en': 'write pods in KAI\'s reservation namespace (step 7\'s reservation pods)',
               'ko': 'KAI 예약 네임스페이스의 파드 쓰기 (7단계의 예약 파드)'}},
)
# Asked of the lab namespace's ServiceAccounts only: the learner's own pods and Jobs are the lab's steps, and the
# admission policies check them (they match the learner's user name); a ServiceAccount's are checked by none.
UNCHECKED_PODS = {
    'id': 'pods.unchecked',
    'reviews': _writes(('create',), 'pods') + _writes(('create',), 'jobs', 'batch'),
    'words': {'en': 'create pods or Jobs that no admission policy checks (spec.nodeName: pods placed by hand)',
              'ko': '어드미션 정책이 검사하지 않는 파드·Job 생성 (spec.nodeName: 직접 배치한 파드)'}}
# The hold of a ServiceAccount of the lab namespace that a pod of the learner may run under and that may make one of
# the writes above: creating a pod under it is the learner's write (the hold's holder is that ServiceAccount).
OTHER_SERVICE_ACCOUNT = 'pods.other_serviceaccount'
# What lets the learner run a pod of the lab namespace (under any of its ServiceAccounts): the first allowed is named.
POD_MAKERS = (_writes(('create',), 'pods') + _writes(('create',), 'jobs', 'batch')
              + _writes(('create',), 'cronjobs', 'batch') + _writes(('create',), 'deployments', 'apps')
              + _writes(('create',), 'replicasets', 'apps') + _writes(('create',), 'statefulsets', 'apps')
              + _writes(('create',), 'daemonsets', 'apps') + _writes(('create',), 'replicationcontrollers'))


def evidence_kinds(kai_version):
    """The EVIDENCE entries that apply on kai_version (all when it has no profile)."""
    try:
        profile = kai_profiles.profile_for(kai_version)
    except kai_profiles.KaiProfileError:
        profile = {}
    return [entry for entry in EVIDENCE if not entry.get('when') or profile.get(entry['when'], True)]
