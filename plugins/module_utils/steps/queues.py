# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 1, the queue hierarchy: lab, research and ops in queues.yaml, applied.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    import yaml
except ImportError:  # reported by common.require_libraries before any use
    yaml = None

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import learner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (  # noqa: F401 (queue_manifest)
    CPU_MEMORY, LAB_QUEUE, RESEARCH, Check, Step, bilingual, failed, passed, queue_manifest, say_both)

FILE = 'queues.yaml'
# None = the lab asks that nothing be written.
QUEUES = {
    LAB_QUEUE: {'parent': None, 'gpu_quota': 4, 'gpu_limit': -1},
    RESEARCH: {'parent': LAB_QUEUE, 'gpu_quota': 2, 'gpu_limit': 4},
    'ops': {'parent': LAB_QUEUE, 'gpu_quota': 2, 'gpu_limit': -1},
}


def lab_queues():
    return [queue_manifest(name, q['parent'], q['gpu_quota'], q['gpu_limit']) for name, q in QUEUES.items()]


# ---------------------------------------------------------------- solving

def solve(runner):
    queues = lab_queues()
    runner.write_file(FILE, yaml.safe_dump_all(queues, sort_keys=False))
    for queue in queues:
        live = runner.view.queue(kai.name_of(queue))
        if live is None or kai.queue_summary(live) != kai.queue_summary(queue):
            runner.apply(queue)
    seen = {}
    for queue in queues:
        live = runner.view.queue(kai.name_of(queue))
        seen[kai.name_of(queue)] = kai.queue_summary(live) if live else None
    for name, want in QUEUES.items():
        got = seen.get(name)
        if not got or got['parent'] != want['parent'] or got['gpu']['quota'] != want['gpu_quota'] \
                or got['gpu']['limit'] != want['gpu_limit']:
            runner.not_as_expected('queue %s as in %s' % (name, FILE), got, 'the Queue CRD rejected or changed it')
    return {'queues': seen}


# ---------------------------------------------------------------- checking

WORDS = {
    'queues.file': {
        'desc': {'en': '{queues_file} holds {queue_count} Queue objects', 'ko': '{queues_file} 에 Queue 객체 {queue_count}개'},
        'fail': {'en': '{queues_file}: {problem}', 'ko': '{queues_file}: {problem}'},
        'hint': {'en': 'Write the queues {queue_list} as apiVersion {queue_api}, kind Queue, separated by ---.',
                 'ko': '{queue_list} 큐를 apiVersion {queue_api}, kind Queue 로 --- 로 구분해 작성하세요.'},
    },
    'queues.hierarchy': {
        'desc': {'en': '{queues_file} has the right parents, GPU quotas and limits',
                 'ko': '{queues_file} 의 부모 큐, GPU quota, limit 이 맞음'},
        'fail': {'en': '{queues_file}: {problem}', 'ko': '{queues_file}: {problem}'},
        'hint': {'en': '{queue_specs}; cpu and memory quota {cpu_quota}, limit {cpu_limit}.',
                 'ko': '{queue_specs}; cpu, memory 는 quota {cpu_quota}, limit {cpu_limit}.'},
        'unset_limit': {'en': 'queue {name} has no gpu limit; KAI reads an unset limit as 0, so nothing can run in it',
                        'ko': '{name} 큐에 gpu limit 이 없습니다. KAI는 비어 있는 limit 을 0으로 읽어 아무것도 실행되지 않습니다'},
    },
    'queues.applied': {
        'desc': {'en': 'The queues {queue_list} are applied to the cluster as written',
                 'ko': '{queue_list} 큐가 파일대로 클러스터에 적용됨'},
        'fail': {'en': '{problem}', 'ko': '{problem}'},
        'hint': {'en': 'kubectl apply -f {queues_path}', 'ko': 'kubectl apply -f {queues_path}'},
    },
}


def file_queues(snapshot):
    """The learner's queues by name; stops on a document that is not a Queue."""
    queues = {}
    for doc in learner.yaml_docs(snapshot, FILE):
        if doc.get('kind') != 'Queue' or doc.get('apiVersion') != kai.QUEUE_API:
            raise learner.stopped(bilingual('a document is %s %s, expected apiVersion %s kind Queue'
                                            % (doc.get('apiVersion'), doc.get('kind'), kai.QUEUE_API),
                                            '%s %s 문서가 있습니다. apiVersion %s, kind Queue 여야 합니다'
                                            % (doc.get('apiVersion'), doc.get('kind'), kai.QUEUE_API)))
        queues[kai.name_of(doc)] = doc
    return queues


def queue_problems(queue, name, want):
    """How a queue differs from what the lab text asks of it."""
    summary = kai.queue_summary(queue)
    problems = []
    if summary['parent'] != want['parent']:
        problems.append(bilingual('%s has parentQueue %s, expected %s' % (name, summary['parent'], want['parent']),
                                  '%s 의 parentQueue 가 %s 입니다. 필요한 값은 %s 입니다' % (name, summary['parent'], want['parent'])))
    if summary['gpu']['quota'] != want['gpu_quota']:
        values = (name, summary['gpu']['quota'], want['gpu_quota'])
        problems.append(bilingual('%s gpu quota is %s, expected %s' % values,
                                  '%s 의 gpu quota 가 %s 입니다. 필요한 값은 %s 입니다' % values))
    if want['gpu_limit'] is not None and not summary['gpu']['limit_set']:
        problems.append(say_both(WORDS['queues.hierarchy']['unset_limit'], name=name))
    elif want['gpu_limit'] is not None and summary['gpu']['limit'] != want['gpu_limit']:
        values = (name, summary['gpu']['limit'], want['gpu_limit'])
        problems.append(bilingual('%s gpu limit is %s, expected %s' % values,
                                  '%s 의 gpu limit 이 %s 입니다. 필요한 값은 %s 입니다' % values))
    for resource in ('cpu', 'memory'):
        got = summary[resource]
        if (got['quota'], got['limit']) != (CPU_MEMORY['quota'], CPU_MEMORY['limit']):
            problems.append(bilingual('%s %s quota/limit are %s/%s, expected %s/%s'
                                      % (name, resource, got['quota'], got['limit'] if got['limit_set'] else 'unset',
                                         CPU_MEMORY['quota'], CPU_MEMORY['limit']),
                                      '%s 의 %s quota/limit 이 %s/%s 입니다. 필요한 값은 %s/%s 입니다'
                                      % (name, resource, got['quota'], got['limit'] if got['limit_set'] else '없음',
                                         CPU_MEMORY['quota'], CPU_MEMORY['limit'])))
    return problems


def check_file(snapshot):
    queues = file_queues(snapshot)
    missing = sorted(set(QUEUES) - set(queues))
    if missing:
        return failed(bilingual('queue(s) %s missing (found: %s)' % (', '.join(missing), ', '.join(sorted(queues)) or 'none'),
                                '%s 큐가 없습니다 (있는 큐: %s)' % (', '.join(missing), ', '.join(sorted(queues)) or '없음')))
    return passed({'queues': sorted(queues)})


def check_hierarchy(snapshot):
    queues = file_queues(snapshot)
    problems = []
    for name, want in QUEUES.items():
        if name not in queues:
            problems.append(bilingual('queue %s missing' % name, '%s 큐가 없습니다' % name))
            continue
        problems.extend(queue_problems(queues[name], name, want))
    return learner.fail_on(problems) or \
        passed(dict((n, kai.queue_summary(q)) for n, q in queues.items() if n in QUEUES))


def check_applied(snapshot):
    problems = []
    seen = {}
    for name, want in QUEUES.items():
        live = snapshot.queue(name)
        if live is None:
            problems.append(bilingual('queue %s is not in the cluster' % name, '클러스터에 %s 큐가 없습니다' % name))
            continue
        seen[name] = kai.queue_summary(live)
        problems.extend(queue_problems(live, name, want))
    return learner.fail_on(problems, seen) or passed(seen)


STEP = Step(
    'queues', {'en': 'Queue hierarchy', 'ko': '큐 계층'}, [FILE],
    'queues lab, research and ops exist as written in queues.yaml', solve, (
        Check('queues.file', 1, check_file, WORDS['queues.file'], files_only=True),
        Check('queues.hierarchy', 2, check_hierarchy, WORDS['queues.hierarchy'], files_only=True),
        Check('queues.applied', 1, check_applied, WORDS['queues.applied']),
    ), words=[WORDS], queues=dict((name, queue['parent']) for name, queue in QUEUES.items()))
