# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A learner's flood named: a list longer than the grade reads of one kind (issue 40).

The grade reads each kind in pages up to the client's bound for a whole list
(client/api.py: MAX_LIST_BYTES of answers, MAX_LIST_ITEMS objects). More
than that in the lab namespace (44 pods with 200 KB annotations) is what the
learner made, not a broken lab machine: each check that reads that kind
fails, saying where, what, how many, who made them and what to delete
(kubectl -n <namespace> delete <kind> <names> of those the lab does not ask
for), and kai-lab exits 1 as for any failed check, never 2 ("could not
grade"), which the lab platforms' scripts take for a broken machine.

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import re

from ansible_collections.gsb.kai_lab.plugins.module_utils.client import answer
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import ListTooLarge
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, Result, Stop, bilingual, say

# The names a flood's message shows of what to delete; the rest are counted.
SHOWN = 5
# The ConfigMap the API server's controller-manager publishes in every namespace (its root CA).
ROOT_CA = 'kube-root-ca.crt'

WORDS = {
    'message': {
        'en': '{where} holds {count} {kinds}, more than the grade reads of one kind ({bound}; the {read} read '
              'take {size}): {made}',
        'ko': '{where}의 {kinds}: {count}, 채점이 한 종류에서 읽는 양({bound})보다 많습니다(읽은 {read}개가 '
              '{size}). {made}',
    },
    'namespace': {'en': 'Namespace {namespace}', 'ko': '네임스페이스 {namespace}'},
    'cluster': {'en': 'The cluster', 'ko': '클러스터'},
    'count': {'en': '{count}', 'ko': '{count}개'},
    'more_than': {'en': 'more than {read}', 'ko': '{read}개 넘게'},
    'at_least': {'en': 'at least {read}', 'ko': '적어도 {read}개'},
    'objects': {'en': '{count} objects', 'ko': '{count}개'},
    'gang': {'en': '{names} and the {count} of {gang}', 'ko': '{names}, 그리고 {gang}의 {count}개'},
    'more': {'en': '{shown} and {more} more', 'ko': '{shown} 외 {more}개'},
    'made': {
        'Pod': {'en': 'you created them (or Jobs of yours did); the lab asks for {lab_count}: {lab_names}',
                'ko': '여러분이(또는 여러분의 Job이) 만든 것입니다. 실습이 요구하는 파드는 {lab_count}개입니다: {lab_names}'},
        'Job': {'en': 'you created them; the lab asks for {lab_count}: {lab_names}',
                'ko': '여러분이 만든 것입니다. 실습이 요구하는 Job은 {lab_count}개입니다: {lab_names}'},
        'Queue': {'en': 'you created them; the lab asks for {lab_count}: {lab_names}',
                  'ko': '여러분이 만든 것입니다. 실습이 요구하는 큐는 {lab_count}개입니다: {lab_names}'},
        'PodGroup': {'en': 'KAI-Scheduler makes one for each pod or Job you create',
                     'ko': 'KAI-Scheduler 가 여러분이 만든 파드나 Job마다 하나씩 만듭니다'},
        'ConfigMap': {'en': 'KAI-Scheduler\'s binder makes them for each fraction pod you create',
                      'ko': 'KAI-Scheduler 의 binder 가 여러분이 만든 fraction 파드마다 만듭니다'},
        'Event': {'en': 'Kubernetes and KAI-Scheduler wrote them about the objects you created',
                  'ko': 'Kubernetes 와 KAI-Scheduler 가 여러분이 만든 오브젝트에 대해 남긴 것입니다'},
        None: {'en': 'the lab does not make them', 'ko': '실습이 만드는 것이 아닙니다'},
    },
    'delete': {
        None: {'en': 'Delete the ones the lab does not ask for ({commands}), then check again.',
               'ko': '실습이 요구하지 않는 것을 지운 뒤({commands}) 다시 확인하세요.'},
        'owned': {'en': 'Delete the pods and Jobs the lab does not ask for, and these go with them ({commands}), '
                        'then check again.',
                  'ko': '실습이 요구하지 않는 파드와 Job을 지우면 이것들도 함께 지워집니다({commands}). 그 뒤 다시 확인하세요.'},
        'Event': {'en': 'Your account cannot delete Events; they go with time or with a reset of the lab. Delete '
                        'the objects the lab does not ask for ({commands}), then reset the lab (ansible-playbook '
                        'playbooks/reset.yml keeps your files in a backup directory) or ask your instructor to.',
                  'ko': '이벤트는 여러분의 계정으로 지울 수 없고 시간이 지나거나 실습을 리셋하면 사라집니다. 실습이 요구하지 않는 '
                        '오브젝트를 지운 뒤({commands}) 실습을 리셋하거나(ansible-playbook playbooks/reset.yml, 파일은 백업 '
                        '디렉터리에 남습니다) 강사에게 요청하세요.'},
    },
}
# How a message names each kind (plural), in each language.
KINDS = {
    'Pod': {'en': 'pods', 'ko': '파드'}, 'Job': {'en': 'Jobs', 'ko': 'Job'},
    'PodGroup': {'en': 'PodGroups', 'ko': 'PodGroup'}, 'ConfigMap': {'en': 'ConfigMaps', 'ko': 'ConfigMap'},
    'Event': {'en': 'Events', 'ko': '이벤트'}, 'Queue': {'en': 'Queues', 'ko': '큐'},
}
# What deletes each kind's flood: the kinds KAI or Kubernetes make for the learner's objects go with them.
DELETES = {'PodGroup': 'owned', 'ConfigMap': 'owned', 'Event': 'Event'}


def _owner(obj):
    """(kind, name) of obj's first owner, or None."""
    refs = kai.meta(obj).get('ownerReferences')
    ref = refs[0] if isinstance(refs, list) and refs and isinstance(refs[0], dict) else None
    return (ref.get('kind'), ref.get('name')) if ref else None


def _lab_own(kind, name, lab):
    """Whether an object of kind named name is the lab's (lab: steps.lab_objects' names): a step's, or a pod
    step 5's Job made (<job>-<five letters or digits>, the Job controller's names)."""
    own = {'Pod': lab['pods'], 'Job': lab['jobs'], 'PodGroup': lab['podgroups'], 'Queue': steps.QUEUE_NAMES}
    return name in own.get(kind, ()) or (kind == 'Pod' and any(
        re.match(r'^%s-[a-z0-9]{5}$' % re.escape(job), name) for job in lab['jobs']))


def _target(kind, obj, lab):
    """(kind, name) of what deletes obj, or None when obj is the lab's own or goes with another's."""
    if kind == 'Event':
        involved = obj.get('involvedObject') if isinstance(obj.get('involvedObject'), dict) else {}
        target = (involved.get('kind'), involved.get('name'))
        if target[0] not in ('Pod', 'Job'):  # a PodGroup's go with its pod's
            return None
    elif kind == 'ConfigMap' and kai.name_of(obj) == ROOT_CA:
        return None
    else:
        owner = _owner(obj)
        target = owner if owner and owner[0] in ('Pod', 'Job') else (kind, kai.name_of(obj))
    if not (isinstance(target[0], str) and isinstance(target[1], str)) or _lab_own(target[0], target[1], lab):
        return None
    return target


def _commands(kind, items, namespace, lab, lang):
    """kubectl commands deleting what the lab does not ask for among items (the first SHOWN names, the rest
    counted), or the one listing them when none is told apart."""
    targets = collections.OrderedDict()
    for obj in items:
        target = _target(kind, obj, lab) if isinstance(obj, dict) else None
        if target is not None:
            targets.setdefault(target[0], [])
            if target[1] not in targets[target[0]]:
                targets[target[0]].append(target[1])
    where = '-n %s ' % namespace if namespace else ''
    if not targets:
        return 'kubectl %sget %s' % (where, KINDS.get(kind, {}).get('en', str(kind)).lower())
    commands, left = [], SHOWN
    for target_kind, names in targets.items():
        shown = ' '.join(names[:max(left, 1)])
        if len(names) > max(left, 1):
            shown = say(WORDS['more'], lang, shown=shown, more=len(names) - max(left, 1))
        commands.append('kubectl %sdelete %s %s' % (where, target_kind.lower(), shown))
        left -= len(names)
    return '; '.join(commands)


def _busiest(items):
    """The namespace most of items are in (a list of every namespace is named by it), or None."""
    found = collections.Counter(kai.meta(i).get('namespace') for i in items if isinstance(i, dict))
    found.pop(None, None)
    return found.most_common(1)[0][0] if found else None


def named(exc):
    """The failed Result of each check that reads the list exc (client/errors.py's ListTooLarge) is about."""
    kind, namespace, items = exc.kind, exc.namespace, exc.items
    if namespace is None and _busiest(items):
        # A list of every namespace: named by the namespace most of what was read is in.
        namespace = _busiest(items)
        items = [i for i in items if isinstance(i, dict) and kai.meta(i).get('namespace') == namespace]
    lab = steps.lab_objects()
    own = {'Pod': lab['pods'], 'Job': lab['jobs'], 'Queue': list(steps.QUEUE_NAMES)}.get(kind, [])
    named_own = [n for n in own if kind != 'Pod' or n not in lab['gang_pods']]
    words = {}
    for lang in ('en', 'ko'):
        if len(exc.items) > (exc.limit or 0):
            bound = say(WORDS['objects'], lang, count=exc.limit)
        else:
            bound = answer.size_text(exc.limit or 0)
        if exc.namespace is None and namespace is not None:
            count = say(WORDS['at_least'], lang, read=len(items))
        elif exc.remaining is None:
            count = say(WORDS['more_than'], lang, read=len(items))
        else:
            count = say(WORDS['count'], lang, count=exc.count)
        where = say(WORDS['namespace'], lang, namespace=namespace) if namespace else say(WORDS['cluster'], lang)
        names = ', '.join(named_own)
        if kind == 'Pod':  # step 5's, named by its Job from KAI v0.14.7
            names = say(WORDS['gang'], lang, names=names, gang=lab['jobs'][0], count=len(lab['gang_pods']))
        made = say(WORDS['made'].get(kind) or WORDS['made'][None], lang, lab_count=len(own), lab_names=names)
        words[lang] = (
            say(WORDS['message'], lang, where=where, count=count, kinds=KINDS.get(kind, {}).get(lang, kind),
                bound=bound, read=len(exc.items), size=answer.size_text(exc.size), made=made),
            say(WORDS['delete'][DELETES.get(kind)], lang, commands=_commands(kind, items, namespace, lab, lang)))
    evidence = {'flood': {'kind': kind, 'namespace': namespace, 'read': len(exc.items), 'bytes': exc.size,
                          'remaining': exc.remaining}}
    return Result(FAILED, evidence=evidence, message=bilingual(words['en'][0], words['ko'][0]),
                  hint=bilingual(words['en'][1], words['ko'][1]))


# ---------------------------------------------------------------- the grade's lists

# What a grade reads first (grading/grader.py's Snapshot): (its name, apiVersion, kind, in the lab namespace).
LISTS = (('queues', kai.QUEUE_API, 'Queue', False), ('pods', 'v1', 'Pod', True),
         ('podgroups', kai.PODGROUP_API, 'PodGroup', True), ('events', 'v1', 'Event', True))


def _list_property(key):
    def get(self):
        if key in self.floods:
            raise Stop(self.floods[key])
        return self.listed(key)

    def put(self, value):
        self.floods.pop(key, None)
        self._lists[key] = value
    return property(get, put, doc='The %s the grade read; a flood of them: Stop, the check failed naming it.' % key)


class Lists(object):
    """The lists a grade reads first (LISTS), each read lean (client/api.py: without managedFields and
    kubectl's last-applied-configuration, which no check reads) in pages within the client's bound of a whole
    list; one longer than that is the learner's flood: each check that reads it stops, failed, naming it
    (floods: name -> that Result), while the others are graded and the cluster counts as read."""

    pods = _list_property('pods')
    podgroups = _list_property('podgroups')
    events = _list_property('events')
    queues = _list_property('queues')

    def __init__(self):
        self._lists = dict((key, []) for key, _api, _kind, _namespaced in LISTS)
        self.floods = {}

    def listed(self, key):
        """The objects of a list as read (none when flooded), for what is not a check."""
        return self._lists[key]

    def read_lists(self, cluster, namespace, in_time):
        """Read LISTS (in namespace, the lab's), each through in_time (the grade's deadline)."""
        for key, api_version, kind, namespaced in LISTS:
            try:
                self._lists[key] = in_time(cluster.list(api_version, kind, namespace if namespaced else None,
                                                        lean=True))
            except ListTooLarge as exc:
                self.floods[key] = named(exc)
