# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the checks of several steps read alike: the learner's files and pods.

Each reader returns what it read or raises Stop with the failing Result
naming the mistake (a missing file, unreadable YAML, a pod in another
namespace or placed by the default scheduler).

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import provenance
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import parse as learner_parse
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import yaml_docs as learner_yaml
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import printable, with_particle
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    RESEARCH, Stop, bilingual, failed, joined, say_both)

WORDS = {
    'file_missing': {
        'en': '{file} does not exist in {workdir}.',
        'ko': '{workdir} 에 {file} 파일이 없습니다.',
    },
    'wrong_namespace': {
        'en': '{kind} {name} is in namespace {found}, but the lab works in {namespace}.',
        'ko': '{kind} {name:이} {found} 네임스페이스에 있습니다. 실습은 {namespace} 네임스페이스에서 합니다.',
    },
    'wrong_namespace_hint': {
        'en': 'Delete it there and create it again with metadata.namespace: {namespace} (or kubectl -n {namespace}).',
        'ko': '그곳의 객체를 지우고 metadata.namespace: {namespace:으로}(또는 kubectl -n {namespace}) 다시 만드세요.',
    },
    'default_scheduler': {
        'en': 'Pod {name} was placed by {found}, not KAI: spec.schedulerName is missing, so no queue, gang or fraction applies.',
        'ko': '{name} 파드를 KAI가 아닌 {found:이} 배치했습니다: spec.schedulerName 이 빠져 큐, 갱, 분할 GPU가 적용되지 않습니다.',
    },
    'default_scheduler_hint': {
        'en': 'Add "schedulerName: {scheduler}" under spec, delete the pod and create it again.',
        'ko': 'spec 아래에 "schedulerName: {scheduler}" 를 넣고 파드를 지운 뒤 다시 만드세요.',
    },
    'not_placed': {
        'en': '{name} runs on {node}, but KAI did not place it: it has no PodBound condition from KAI\'s binder '
              '(a pod created with spec.nodeName is started without any scheduler)',
        'ko': '{name:이} {node} 에서 실행 중이지만 KAI가 배치하지 않았습니다: KAI 바인더의 PodBound 조건이 없습니다 '
              '(spec.nodeName 을 넣어 만든 파드는 스케줄러 없이 시작됩니다)',
    },
    'not_placed_hint': {
        'en': 'Delete {name} and create it again without spec.nodeName: KAI chooses the node and its binder binds the pod.',
        'ko': '{name:을} 지우고 spec.nodeName 없이 다시 만드세요: 노드는 KAI가 고르고 KAI 바인더가 파드를 바인딩합니다.',
    },
    'node_name': {
        'en': '{name} sets spec.nodeName {node}: a pod that names its node is started without KAI',
        'ko': '{name} 에 spec.nodeName {node:이} 있습니다: 노드를 지정한 파드는 KAI 없이 시작됩니다',
    },
}


def stopped(problem, evidence=None, hint=None):
    """The Stop to raise for a failing check."""
    return Stop(failed(problem, evidence, hint))


def raw_file(snapshot, file_name):
    """The learner file's text (read through learner_read: bounded, no links, no FIFOs)."""
    got = snapshot.read(file_name)
    if got.missing:
        raise stopped(say_both(WORDS['file_missing'], file=file_name, workdir=snapshot.workdir))
    if got.problem:
        raise stopped(got.problem)
    return got.content


def yaml_docs(snapshot, file_name):
    """The file's YAML documents, each a mapping (no aliases, no non-JSON types, bounded depth)."""
    docs = learner_yaml.parse_yaml_documents(file_name, raw_file(snapshot, file_name))
    if docs.problem:
        raise stopped(docs.problem)
    if not all(isinstance(d, dict) for d in docs.content):
        raise stopped(bilingual('a document is not a mapping (an object with apiVersion, kind, metadata)',
                                '매핑이 아닌 문서가 있습니다 (apiVersion, kind, metadata 를 가진 객체여야 합니다)'))
    return docs.content


def json_object(snapshot, file_name):
    content = learner_parse.parse_json(file_name, raw_file(snapshot, file_name))
    if content.problem:
        raise stopped(content.problem)
    if not isinstance(content.content, dict):
        raise stopped(bilingual('the top level is not a JSON object', '최상위가 JSON 객체가 아닙니다'))
    return content.content


def text_file(snapshot, file_name):
    raw = raw_file(snapshot, file_name)
    if not raw.strip():
        raise stopped(bilingual('the file is empty', '파일이 비어 있습니다'))
    return raw.strip()


def manifest_pod(snapshot, file_name, name):
    """The Pod of this name in the learner's YAML file."""
    docs = yaml_docs(snapshot, file_name)
    pods = [d for d in docs if d.get('kind') == 'Pod' and kai.name_of(d) == name]
    if not pods:
        found = ', '.join('%s/%s' % (d.get('kind'), kai.name_of(d)) for d in docs)
        raise stopped(bilingual('no Pod named %s (documents: %s)' % (name, found or 'none'),
                                '이름이 %s 인 Pod 가 없습니다 (문서: %s)' % (name, found or '없음')))
    return pods[0]


def pod_spec_problems(snapshot, pod, gpus):
    """What keeps a learner's pod from going to KAI in queue research (gpus=None: any)."""
    problems = []
    name = kai.name_of(pod)
    namespace = kai.meta(pod).get('namespace')
    if namespace not in (None, snapshot.namespace):
        problems.append(bilingual('%s is for namespace %s, the lab works in %s' % (name, namespace, snapshot.namespace),
                                  '%s 의 네임스페이스가 %s 입니다. 실습은 %s 에서 합니다' % (name, namespace, snapshot.namespace)))
    if kai.scheduler_name(pod) != kai.SCHEDULER_NAME:
        problems.append(bilingual('%s has no schedulerName: %s, so the default scheduler would place it'
                                  % (name, kai.SCHEDULER_NAME),
                                  '%s 에 schedulerName: %s 없어 기본 스케줄러가 배치합니다'
                                  % (name, with_particle(kai.SCHEDULER_NAME, '이'))))
    if kai.pod_queue(pod) != RESEARCH:
        problems.append(bilingual('%s has queue label %s, expected %s' % (name, kai.pod_queue(pod), RESEARCH),
                                  '%s 의 큐 레이블이 %s 입니다. 필요한 값은 %s 입니다' % (name, kai.pod_queue(pod), RESEARCH)))
    if kai.pod_node(pod):
        problems.append(say_both(WORDS['node_name'], name=name, node=printable(str(kai.pod_node(pod)), 120)))
    if gpus is not None and kai_gpu.gpu_limit(pod) != gpus:
        values = (name, kai_gpu.gpu_limit(pod), kai_gpu.GPU_RESOURCE, gpus)
        problems.append(bilingual('%s asks for %s %s, expected %s' % values,
                                  '%s 의 %s 값이 %s 입니다. 필요한 값은 %s 입니다' % (name, kai_gpu.GPU_RESOURCE, values[1], gpus)))
    return problems


def fail_on(problems, evidence=None):
    """A failed Result with all problems joined, or None when there are none."""
    if problems:
        return failed(joined(problems), evidence)
    return None


def lab_pod(snapshot, name):
    """The pod in the lab namespace (or None), stopping with the namespace mistake named."""
    pod = snapshot.pod(name)
    if pod is None:
        elsewhere = snapshot.elsewhere(name)
        if elsewhere:
            values = dict(kind='Pod', name=name, found=elsewhere[0], namespace=snapshot.namespace)
            raise stopped(say_both(WORDS['wrong_namespace'], **values), {'namespaces': elsewhere},
                          hint=say_both(WORDS['wrong_namespace_hint'], **values))
    return pod


def require_kai(pod):
    scheduler = kai.scheduler_name(pod)
    if scheduler != kai.SCHEDULER_NAME:
        raise stopped(say_both(WORDS['default_scheduler'], name=kai.name_of(pod), found=scheduler),
                      {'schedulerName': scheduler}, hint=say_both(WORDS['default_scheduler_hint'],
                                                                  scheduler=kai.SCHEDULER_NAME))


def require_running(snapshot, name):
    """The lab's pod, Running and placed by KAI; else stop with KAI's reasons."""
    pod = lab_pod(snapshot, name)
    if pod is None:
        raise stopped(bilingual('pod %s does not exist in %s' % (name, snapshot.namespace),
                                '%s 네임스페이스에 %s 파드가 없습니다' % (snapshot.namespace, name)))
    require_kai(pod)
    phase = kai.pod_phase(pod)
    if phase != 'Running':
        podgroup = snapshot.podgroup(kai.podgroup_name_of_pod(pod) or '')
        reasons = kai.scheduling_reasons(podgroup) if podgroup else []
        why = '; '.join('%s: %s' % (r['reason'], r['message'][:160]) for r in reasons) or 'no reason from KAI yet'
        raise stopped(bilingual('is %s, not Running (%s)' % (phase, why), '%s 상태입니다. Running 이 아닙니다 (%s)' % (phase, why)),
                      {'phase': phase, 'reasons': reasons})
    problem = not_placed_by_kai(pod)
    if problem:
        raise problem
    return pod


def not_placed_by_kai(pod):
    """The Stop for a pod that runs without KAI having bound it (kai.provenance.bound_at), else None."""
    if provenance.bound_at(pod):
        return None
    values = dict(name=printable(kai.name_of(pod), 120), node=printable(str(kai.pod_node(pod) or '?'), 120))
    return stopped(say_both(WORDS['not_placed'], **values),
                   {'node': kai.pod_node(pod), 'conditions': [c.get('type') for c in
                                                              ((pod.get('status') or {}).get('conditions') or [])]},
                   hint=say_both(WORDS['not_placed_hint'], **values))


def pod_events(snapshot, name):
    return kai_events.events_for(snapshot.events, 'Pod', name)


def ran_by_kai(snapshot, name):
    return any(e.get('reason') == 'Scheduled' and 'at node-pool' in (e.get('message') or '')
               and kai_events.reported_by_scheduler(e) for e in pod_events(snapshot, name))
