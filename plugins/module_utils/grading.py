# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Grade a learner's lab as it stands: the files in the workdir and the cluster.

Read-only by construction: the grader reads files and lists objects; it has
no code path that writes to the cluster, and it never opens a learner file
for writing. Each check reports passed, failed or unverified (its evidence is
gone, e.g. an event past its TTL) with a message and a hint in Korean or
English, and the evidence it looked at.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import time

try:
    import yaml
except ImportError:  # reported by common.require_libraries before any use
    yaml = None

from ansible_collections.gsb.kai_lab.plugins.module_utils import kai
from ansible_collections.gsb.kai_lab.plugins.module_utils import lab_catalog as cat
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading_messages import text
from ansible_collections.gsb.kai_lab.plugins.module_utils.k8s import ClusterError

SCHEMA_VERSION = 1
PASSED, FAILED, UNVERIFIED = 'passed', 'failed', 'unverified'
QUEUE_API = '%s/%s' % (kai.QUEUE_GROUP, kai.QUEUE_VERSION)
PODGROUP_API = '%s/%s' % (kai.QUEUE_GROUP, kai.PODGROUP_VERSION)

# Weights: what a step is worth is split over its checks.
WEIGHTS = {
    'queues.file': 1, 'queues.hierarchy': 2, 'queues.applied': 1,
    'podgroup.manifest': 1, 'podgroup.running': 2, 'podgroup.file': 1,
    'nolimit.queue': 1, 'nolimit.reason': 2,
    'limit_fix.queue': 1, 'limit_fix.running': 2,
    'gang.reason': 3,
    'preempt.build_running': 2, 'preempt.evicted': 2,
    'fraction.manifest': 1, 'fraction.shared': 3,
    'report.file': 1, 'report.values': 2,
}
# Checks that read only the learner's files: they still run when the cluster
# cannot be read.
FILE_ONLY = frozenset(('queues.file', 'queues.hierarchy', 'podgroup.manifest', 'fraction.manifest', 'report.file'))
CHECKS_BY_STEP = (
    ('queues', ('queues.file', 'queues.hierarchy', 'queues.applied')),
    ('podgroup', ('podgroup.manifest', 'podgroup.running', 'podgroup.file')),
    ('nolimit', ('nolimit.queue', 'nolimit.reason')),
    ('limit_fix', ('limit_fix.queue', 'limit_fix.running')),
    ('gang', ('gang.reason',)),
    ('preempt', ('preempt.build_running', 'preempt.evicted')),
    ('fraction', ('fraction.manifest', 'fraction.shared')),
    ('report', ('report.file', 'report.values')),
)


def both(en, ko):
    """A problem stated in both languages."""
    return {'en': en, 'ko': ko}


class Outcome(Exception):
    """Ends a check early with its result."""

    def __init__(self, status, problem=None, evidence=None, message_key=None, values=None):
        super(Outcome, self).__init__(status)
        self.status = status
        self.problem = problem
        self.evidence = evidence
        self.message_key = message_key
        self.values = values or {}


def fail(problem, evidence=None):
    raise Outcome(FAILED, problem, evidence)


def unverified(why, evidence=None):
    raise Outcome(UNVERIFIED, why, evidence)


class Snapshot(object):
    """Everything the grader reads, fetched once (a few list calls)."""

    def __init__(self, cluster, namespace, workdir, health=None):
        self.namespace = namespace
        self.workdir = workdir
        self.error = None
        self.pods = []
        self.all_pods = []
        self.podgroups = []
        self.events = []
        self.queues = []
        self.configmaps = {}
        self.health = health or {}
        try:
            self.queues = cluster.list(QUEUE_API, 'Queue')
            self.all_pods = cluster.list('v1', 'Pod')
            self.pods = [p for p in self.all_pods if kai.meta(p).get('namespace') == namespace]
            self.podgroups = cluster.list(PODGROUP_API, 'PodGroup', namespace)
            self.events = cluster.list('v1', 'Event', namespace)
            for pod in self.pods:
                if kai.gpu_fraction(pod) is not None:
                    for name in kai.shared_gpu_configmap_names(pod):
                        cm = cluster.get('v1', 'ConfigMap', name, namespace)
                        if cm:
                            self.configmaps[name] = cm
        except ClusterError as exc:
            self.error = str(exc)

    def pod(self, name):
        for pod in self.pods:
            if kai.name_of(pod) == name:
                return pod
        return None

    def elsewhere(self, name):
        """Namespaces other than the lab's holding a pod of this name."""
        return sorted(kai.meta(p).get('namespace') for p in self.all_pods
                      if kai.name_of(p) == name and kai.meta(p).get('namespace') != self.namespace
                      and kai.meta(p).get('namespace') != kai.RESERVATION_NAMESPACE)

    def queue(self, name):
        for queue in self.queues:
            if kai.name_of(queue) == name:
                return queue
        return None

    def podgroup(self, name):
        for podgroup in self.podgroups:
            if kai.name_of(podgroup) == name:
                return podgroup
        return None

    def file(self, name):
        path = os.path.join(self.workdir, name)
        try:
            with open(path, 'rb') as handle:
                return handle.read().decode('utf-8', 'replace')
        except (IOError, OSError):
            return None


class Grader(object):
    """Runs every check against one snapshot."""

    def __init__(self, snapshot, lang='ko', deadline=None, kai_version='v0.18.6', time_limit=None):
        self.s = snapshot
        self.lang = lang
        self.deadline = deadline
        self.time_limit = time_limit
        self.kai_version = kai_version

    # ------------------------------------------------------------ plumbing
    def run(self):
        started = time.monotonic()
        steps = []
        for step_id, check_ids in CHECKS_BY_STEP:
            entry = cat.step(step_id)
            checks = [self.run_check(check_id) for check_id in check_ids]
            steps.append({
                'id': step_id, 'number': entry['number'], 'title': entry['title'][self.lang],
                'passed': all(c['status'] == PASSED for c in checks),
                'checks': checks,
            })
        checks = [c for s in steps for c in s['checks']]
        points = sum(c['weight'] for c in checks if c['status'] == PASSED)
        total = sum(c['weight'] for c in checks)
        environment = [self.run_check('environment.kai_components')]
        return {
            'schema_version': SCHEMA_VERSION,
            'lang': self.lang,
            'namespace': self.s.namespace,
            'workdir': self.s.workdir,
            'kai_version': self.kai_version,
            'passed': points == total and all(c['status'] == PASSED for c in environment),
            'score': round(100.0 * points / total, 1) if total else 0.0,
            'points': points,
            'max_points': total,
            'counts': dict((status, len([c for c in checks if c['status'] == status]))
                           for status in (PASSED, FAILED, UNVERIFIED)),
            'environment': environment,
            'steps': steps,
            'duration': round(time.monotonic() - started, 3),
        }

    def run_check(self, check_id):
        started = time.monotonic()
        step_id = check_id.split('.', 1)[0]
        result = {'id': check_id, 'step': step_id, 'weight': WEIGHTS.get(check_id, 0),
                  'description': text(check_id, self.lang, 'desc')}
        try:
            # Checks of the learner's files alone take no time: they always run.
            if self.deadline is not None and time.monotonic() > self.deadline and check_id not in FILE_ONLY:
                raise Outcome(UNVERIFIED, message_key='_timeout', values={'seconds': self.time_limit})
            if self.s.error and check_id not in FILE_ONLY and check_id != 'environment.kai_components':
                raise Outcome(FAILED, message_key='_cluster', values={'error': self.s.error})
            evidence = getattr(self, 'check_' + check_id.replace('.', '_'))()
            outcome = Outcome(PASSED, evidence=evidence)
        except Outcome as exc:
            outcome = exc
        except Exception as exc:  # a learner's file of an unexpected shape: a failing check, not a crash
            what = '%s: %s' % (type(exc).__name__, str(exc)[:160])
            outcome = Outcome(FAILED, both('its input has an unexpected shape, so it cannot be interpreted (%s); '
                                           'compare your file with the lab text' % what,
                                           '입력의 형태가 예상과 달라 해석할 수 없습니다 (%s). 파일을 실습 설명과 비교하세요'
                                           % what))
        result['status'] = outcome.status
        result['passed'] = outcome.status == PASSED
        result['evidence'] = outcome.evidence
        if outcome.status == PASSED:
            result['message'] = 'OK'
            result['hint'] = ''
        else:
            result['message'], result['hint'] = self.words(check_id, outcome)
        result['duration'] = round(time.monotonic() - started, 4)
        return result

    def words(self, check_id, outcome):
        if outcome.message_key == '_cluster':
            return text('_cluster', self.lang, **outcome.values), text('_cluster_hint', self.lang)
        if outcome.message_key:
            return text(outcome.message_key, self.lang, **outcome.values), text(check_id, self.lang, 'hint')
        problem = outcome.problem
        if isinstance(problem, dict) and 'hint' in problem:
            hint = problem['hint'][self.lang]
            problem = problem['text']
        else:
            hint = text(check_id, self.lang, 'hint')
        problem_text = problem[self.lang] if isinstance(problem, dict) else str(problem)
        if outcome.status == UNVERIFIED:
            return text('_unverified', self.lang, why=problem_text), hint
        return text(check_id, self.lang, 'fail', problem=problem_text, names=problem_text), hint

    # ------------------------------------------------------------ shared reads
    def yaml_docs(self, file_name):
        raw = self.s.file(file_name)
        if raw is None:
            fail(both(text('_file_missing', 'en', file=file_name, workdir=self.s.workdir),
                      text('_file_missing', 'ko', file=file_name, workdir=self.s.workdir)))
        try:
            docs = [d for d in yaml.safe_load_all(raw) if d is not None]
        except (yaml.YAMLError, ValueError, RecursionError) as exc:
            error = str(exc).replace('\n', ' ')[:200]
            fail(both(text('_file_unreadable', 'en', file=file_name, fmt='YAML', error=error),
                      text('_file_unreadable', 'ko', file=file_name, fmt='YAML', error=error)))
        if not all(isinstance(d, dict) for d in docs):
            fail(both('a document is not a mapping (an object with apiVersion, kind, metadata)',
                      '매핑이 아닌 문서가 있습니다 (apiVersion, kind, metadata 를 가진 객체여야 합니다)'))
        return docs

    def text_file(self, file_name):
        raw = self.s.file(file_name)
        if raw is None:
            fail(both(text('_file_missing', 'en', file=file_name, workdir=self.s.workdir),
                      text('_file_missing', 'ko', file=file_name, workdir=self.s.workdir)))
        if not raw.strip():
            fail(both('the file is empty', '파일이 비어 있습니다'))
        return raw.strip()

    def lab_pod(self, name):
        """The pod in the lab namespace, failing with the namespace mistake named."""
        pod = self.s.pod(name)
        if pod is None:
            elsewhere = self.s.elsewhere(name)
            if elsewhere:
                values = dict(kind='Pod', name=name, found=elsewhere[0], namespace=self.s.namespace)
                fail({'text': both(text('_wrong_namespace', 'en', **values), text('_wrong_namespace', 'ko', **values)),
                      'hint': both(text('_wrong_namespace_hint', 'en', **values),
                                   text('_wrong_namespace_hint', 'ko', **values))},
                     {'namespaces': elsewhere})
        return pod

    def require_kai(self, pod):
        scheduler = kai.scheduler_name(pod)
        if scheduler != kai.SCHEDULER_NAME:
            values = dict(name=kai.name_of(pod), scheduler=scheduler)
            fail({'text': both(text('_default_scheduler', 'en', **values), text('_default_scheduler', 'ko', **values)),
                  'hint': both(text('_default_scheduler_hint', 'en'), text('_default_scheduler_hint', 'ko'))},
                 {'schedulerName': scheduler})

    def pod_events(self, name):
        return kai.events_for(self.s.events, 'Pod', name)

    def ran_by_kai(self, name):
        return any(e.get('reason') == 'Scheduled' and 'at node-pool' in (e.get('message') or '')
                   for e in self.pod_events(name))

    def evictions(self):
        return kai.eviction_events(self.s.events)

    def require_running(self, name):
        pod = self.lab_pod(name)
        if pod is None:
            fail(both('pod %s does not exist in %s' % (name, self.s.namespace),
                      '%s 네임스페이스에 %s 파드가 없습니다' % (self.s.namespace, name)))
        self.require_kai(pod)
        phase = kai.pod_phase(pod)
        if phase != 'Running':
            podgroup = self.s.podgroup(kai.podgroup_name_of_pod(pod) or '')
            reasons = kai.scheduling_reasons(podgroup) if podgroup else []
            why = '; '.join('%s: %s' % (r['reason'], r['message'][:160]) for r in reasons) or 'no reason from KAI yet'
            fail(both('is %s, not Running (%s)' % (phase, why), '%s 상태입니다. Running 이 아닙니다 (%s)' % (phase, why)),
                 {'phase': phase, 'reasons': reasons})
        return pod

    # ------------------------------------------------------------ environment
    def check_environment_kai_components(self):
        down = sorted(name for name, ok in self.s.health.items() if not ok)
        if down:
            raise Outcome(FAILED, problem=both(', '.join(down), ', '.join(down)), evidence=self.s.health)
        if self.s.error:
            raise Outcome(FAILED, message_key='_cluster', values={'error': self.s.error})
        return self.s.health

    # ------------------------------------------------------------ step 1
    def file_queues(self):
        docs = self.yaml_docs(cat.FILES['queues'])
        queues = {}
        for doc in docs:
            if doc.get('kind') != 'Queue' or doc.get('apiVersion') != QUEUE_API:
                fail(both('a document is %s %s, expected apiVersion %s kind Queue'
                          % (doc.get('apiVersion'), doc.get('kind'), QUEUE_API),
                          '%s %s 문서가 있습니다. apiVersion %s, kind Queue 여야 합니다'
                          % (doc.get('apiVersion'), doc.get('kind'), QUEUE_API)))
            queues[kai.name_of(doc)] = doc
        return queues

    def check_queues_file(self):
        queues = self.file_queues()
        missing = sorted(set(cat.QUEUES) - set(queues))
        if missing:
            fail(both('queue(s) %s missing (found: %s)' % (', '.join(missing), ', '.join(sorted(queues)) or 'none'),
                      '%s 큐가 없습니다 (있는 큐: %s)' % (', '.join(missing), ', '.join(sorted(queues)) or '없음')))
        return {'queues': sorted(queues)}

    def queue_problems(self, queue, name, want):
        summary = kai.queue_summary(queue)
        problems = []
        if summary['parent'] != want['parent']:
            problems.append(both('%s has parentQueue %s, expected %s' % (name, summary['parent'], want['parent']),
                                 '%s 의 parentQueue 가 %s 입니다. %s 여야 합니다' % (name, summary['parent'], want['parent'])))
        if summary['gpu']['quota'] != want['gpu_quota']:
            values = (name, summary['gpu']['quota'], want['gpu_quota'])
            problems.append(both('%s gpu quota is %s, expected %s' % values,
                                 '%s 의 gpu quota 가 %s 입니다. %s 여야 합니다' % values))
        if want['gpu_limit'] is not None and not summary['gpu']['limit_set']:
            problems.append(both(text('queues.hierarchy', 'en', 'unset_limit', name=name),
                                 text('queues.hierarchy', 'ko', 'unset_limit', name=name)))
        elif want['gpu_limit'] is not None and summary['gpu']['limit'] != want['gpu_limit']:
            values = (name, summary['gpu']['limit'], want['gpu_limit'])
            problems.append(both('%s gpu limit is %s, expected %s' % values,
                                 '%s 의 gpu limit 이 %s 입니다. %s 여야 합니다' % values))
        for resource in ('cpu', 'memory'):
            got = summary[resource]
            if (got['quota'], got['limit']) != (-1, -1):
                problems.append(both('%s %s quota/limit are %s/%s, expected -1/-1'
                                     % (name, resource, got['quota'], got['limit'] if got['limit_set'] else 'unset'),
                                     '%s 의 %s quota/limit 이 %s/%s 입니다. -1/-1 이어야 합니다'
                                     % (name, resource, got['quota'], got['limit'] if got['limit_set'] else '없음')))
        return problems

    def check_queues_hierarchy(self):
        queues = self.file_queues()
        problems = []
        for name, want in cat.QUEUES.items():
            if name not in queues:
                problems.append(both('queue %s missing' % name, '%s 큐가 없습니다' % name))
                continue
            problems.extend(self.queue_problems(queues[name], name, want))
        if problems:
            fail(both('; '.join(p['en'] for p in problems), '; '.join(p['ko'] for p in problems)))
        return dict((n, kai.queue_summary(q)) for n, q in queues.items() if n in cat.QUEUES)

    def check_queues_applied(self):
        problems = []
        seen = {}
        for name, want in cat.QUEUES.items():
            live = self.s.queue(name)
            if live is None:
                problems.append(both('queue %s is not in the cluster' % name, '클러스터에 %s 큐가 없습니다' % name))
                continue
            seen[name] = kai.queue_summary(live)
            problems.extend(self.queue_problems(live, name, want))
        if problems:
            fail(both('; '.join(p['en'] for p in problems), '; '.join(p['ko'] for p in problems)), seen)
        return seen

    # ------------------------------------------------------------ step 2
    def manifest_pod(self, file_name, name):
        docs = self.yaml_docs(file_name)
        pods = [d for d in docs if d.get('kind') == 'Pod' and kai.name_of(d) == name]
        if not pods:
            found = ', '.join('%s/%s' % (d.get('kind'), kai.name_of(d)) for d in docs)
            fail(both('no Pod named %s (documents: %s)' % (name, found or 'none'),
                      '%s 라는 Pod 가 없습니다 (문서: %s)' % (name, found or '없음')))
        return pods[0]

    def pod_spec_problems(self, pod, gpus):
        problems = []
        name = kai.name_of(pod)
        namespace = kai.meta(pod).get('namespace')
        if namespace not in (None, self.s.namespace):
            problems.append(both('%s is for namespace %s, the lab works in %s' % (name, namespace, self.s.namespace),
                                 '%s 의 네임스페이스가 %s 입니다. 실습은 %s 에서 합니다' % (name, namespace, self.s.namespace)))
        if kai.scheduler_name(pod) != kai.SCHEDULER_NAME:
            problems.append(both('%s has no schedulerName: kai-scheduler, so the default scheduler would place it' % name,
                                 '%s 에 schedulerName: kai-scheduler 가 없어 기본 스케줄러가 배치합니다' % name))
        if kai.pod_queue(pod) != 'research':
            problems.append(both('%s has queue label %s, expected research' % (name, kai.pod_queue(pod)),
                                 '%s 의 큐 레이블이 %s 입니다. research 여야 합니다' % (name, kai.pod_queue(pod))))
        if gpus is not None and kai.gpu_limit(pod) != gpus:
            problems.append(both('%s asks for %s nvidia.com/gpu, expected %s' % (name, kai.gpu_limit(pod), gpus),
                                 '%s 의 nvidia.com/gpu 가 %s 입니다. %s 여야 합니다' % (name, kai.gpu_limit(pod), gpus)))
        return problems

    def check_podgroup_manifest(self):
        pod = self.manifest_pod(cat.FILES['p1'], cat.P1)
        problems = self.pod_spec_problems(pod, 1)
        if problems:
            fail(both('; '.join(p['en'] for p in problems), '; '.join(p['ko'] for p in problems)))
        return {'schedulerName': kai.scheduler_name(pod), 'queue': kai.pod_queue(pod), 'gpus': kai.gpu_limit(pod)}

    def check_podgroup_running(self):
        pod = self.lab_pod(cat.P1)
        if pod is None:
            victims = [e for e in self.evictions() if e['victim'] == cat.P1]
            if victims and self.ran_by_kai(cat.P1):
                raise Outcome(PASSED, evidence={'evicted': victims[-1]['message']})
            if victims or self.ran_by_kai(cat.P1):
                unverified(both('p1 is gone; its events show it ran through KAI but not the whole story',
                                'p1 이 없습니다. 이벤트로는 KAI가 실행했다는 것까지만 확인됩니다'))
            if self.s.pod(cat.BUILD_POD) is not None and not self.pod_events(cat.P1):
                unverified(both('p1 is gone (KAI may have evicted it in step 6) and its events have expired',
                                'p1 이 없고(6단계에서 KAI가 밀어냈을 수 있음) 이벤트도 만료되었습니다'))
            fail(both('pod p1 does not exist in %s' % self.s.namespace, '%s 네임스페이스에 p1 파드가 없습니다' % self.s.namespace))
        self.require_running(cat.P1)
        return {'phase': kai.pod_phase(pod), 'node': kai.pod_node(pod), 'podgroup': kai.podgroup_name_of_pod(pod)}

    def check_podgroup_file(self):
        raw = self.text_file(cat.FILES['podgroup'])
        lines = [line.strip() for line in raw.splitlines() if line.strip()]
        if len(lines) != 1:
            fail(both('expected one line with the PodGroup name, found %d lines' % len(lines),
                      'PodGroup 이름 한 줄이어야 하는데 %d 줄입니다' % len(lines)))
        claimed = lines[0]
        pod = self.s.pod(cat.P1)
        if pod is not None:
            actual = kai.podgroup_name_of_pod(pod)
            if claimed != actual:
                fail(both('says %s but p1\'s PodGroup is %s' % (claimed, actual),
                          '%s 라고 되어 있지만 p1 의 PodGroup 은 %s 입니다' % (claimed, actual)),
                     {'claimed': claimed, 'actual': actual})
        if self.s.podgroup(claimed) is None:
            if pod is not None:
                unverified(both('p1 names %s but that PodGroup object is gone, so its owner cannot be checked' % claimed,
                                'p1 이 %s 를 가리키지만 그 PodGroup 객체가 없어 소유자를 확인할 수 없습니다' % claimed))
            if claimed.startswith('pg-%s-' % cat.P1):
                unverified(both('p1 and its PodGroup are gone (evicted in step 6?), so %s cannot be matched' % claimed,
                                'p1 과 PodGroup 이 없어(6단계에서 밀려남?) %s 를 대조할 수 없습니다' % claimed))
            fail(both('no PodGroup named %s exists in %s' % (claimed, self.s.namespace),
                      '%s 에 %s 라는 PodGroup 이 없습니다' % (self.s.namespace, claimed)))
        podgroup = self.s.podgroup(claimed)
        owner = kai.podgroup_summary(podgroup)['owner']
        if owner and owner.get('name') != cat.P1:
            fail(both('%s belongs to %s %s, not p1' % (claimed, owner.get('kind'), owner.get('name')),
                      '%s 는 p1 이 아니라 %s %s 의 것입니다' % (claimed, owner.get('kind'), owner.get('name'))))
        return {'podgroup': claimed}

    # ------------------------------------------------------------ steps 3-4
    def check_nolimit_queue(self):
        queue = self.s.queue(cat.NOLIMIT_QUEUE['name'])
        if queue is None:
            fail(both('not in the cluster', '클러스터에 없습니다'))
        summary = kai.queue_summary(queue)
        if summary['parent'] != cat.NOLIMIT_QUEUE['parent'] or summary['gpu']['quota'] != cat.NOLIMIT_QUEUE['gpu_quota']:
            fail(both('parentQueue %s, gpu quota %s; expected lab and 1' % (summary['parent'], summary['gpu']['quota']),
                      'parentQueue %s, gpu quota %s 입니다. lab 과 1 이어야 합니다' % (summary['parent'], summary['gpu']['quota'])),
                 summary)
        return summary

    def over_limit_evidence(self):
        """KAI's OverLimit texts for nl-1 still in the cluster (conditions or events)."""
        texts = []
        pod = self.s.pod(cat.NL1)
        if pod is not None:
            podgroup = self.s.podgroup(kai.podgroup_name_of_pod(pod) or '')
            if podgroup is not None:
                texts.extend(r['message'] for r in kai.scheduling_reasons(podgroup) if r['reason'] == kai.REASON_OVER_LIMIT)
        texts.extend(m for m in kai.unschedulable_messages(self.s.events, 'Pod', cat.NL1) if kai.REASON_OVER_LIMIT in m)
        return texts

    def check_nolimit_reason(self):
        raw = self.text_file(cat.FILES['nolimit'])
        if kai.OVER_LIMIT_MESSAGE_MARK not in raw:
            if kai.REASON_OVER_LIMIT in raw:
                fail(both('holds the reason code but not KAI\'s message; copy the whole condition message '
                          '("... quota has reached the allowable limit of GPUs ...")',
                          '이유 코드만 있고 KAI의 메시지가 없습니다. 조건 메시지 전체를 복사하세요 '
                          '("... quota has reached the allowable limit of GPUs ...")'))
            fail(both('does not hold KAI\'s OverLimit reason (got: %s)' % raw[:120],
                      'KAI의 OverLimit 이유가 아닙니다 (내용: %s)' % raw[:120]))
        evidence = self.over_limit_evidence()
        if not evidence:
            unverified(both('KAI\'s OverLimit record for nl-1 (its PodGroup condition and events) is gone, '
                            'so the text cannot be matched with the cluster',
                            'nl-1 에 대한 KAI의 OverLimit 기록(PodGroup 조건과 이벤트)이 없어 클러스터와 대조할 수 없습니다'),
                       {'file': raw})
        if 'Limit is 0 GPUs' in evidence[0] and 'Limit is 0 GPUs' not in raw:
            fail(both('does not match KAI\'s message for nl-1: %s' % evidence[0][:160],
                      'nl-1 에 대한 KAI 메시지와 다릅니다: %s' % evidence[0][:160]), {'file': raw, 'kai': evidence[0]})
        return {'file': raw, 'kai': evidence[0]}

    def check_limit_fix_queue(self):
        queue = self.s.queue(cat.NOLIMIT_QUEUE['name'])
        if queue is None:
            fail(both('not in the cluster', '클러스터에 없습니다'))
        summary = kai.queue_summary(queue)
        if summary['gpu']['limit'] != kai.UNLIMITED:
            limit_set = summary['gpu']['limit_set']
            fail(both('gpu limit is %s, expected -1' % (summary['gpu']['limit'] if limit_set else 'unset (0)'),
                      'gpu limit 이 %s 입니다. -1 이어야 합니다' % (summary['gpu']['limit'] if limit_set else '없음(0)')),
                 summary)
        if summary['gpu']['quota'] != cat.NOLIMIT_QUEUE['gpu_quota'] or summary['parent'] != cat.NOLIMIT_QUEUE['parent']:
            fail(both('more than the limit changed: quota %s, parent %s' % (summary['gpu']['quota'], summary['parent']),
                      'limit 외에도 바뀌었습니다: quota %s, parent %s' % (summary['gpu']['quota'], summary['parent'])), summary)
        return summary

    def check_limit_fix_running(self):
        pod = self.require_running(cat.NL1)
        return {'phase': kai.pod_phase(pod), 'node': kai.pod_node(pod)}

    # ------------------------------------------------------------ step 5
    def check_gang_reason(self):
        raw = self.text_file(cat.FILES['gang'])
        if kai.GANG_MESSAGE_MARK not in raw:
            fail(both('does not hold KAI\'s gang reason ("... required for gang scheduling"); got: %s' % raw[:120],
                      'KAI의 갱 이유("... required for gang scheduling")가 아닙니다. 내용: %s' % raw[:120]))
        if 'while %d are required' % cat.GANG_SIZE not in raw:
            fail(both('the gang was not of %d pods: %s' % (cat.GANG_SIZE, raw[:160]),
                      '갱 크기가 %d 이 아닙니다: %s' % (cat.GANG_SIZE, raw[:160])))
        seen = [e.get('message') or '' for e in self.s.events
                if e.get('reason') == 'Unschedulable' and kai.GANG_MESSAGE_MARK in (e.get('message') or '')]
        seen += [r['message'] for pg in self.s.podgroups for r in kai.scheduling_reasons(pg)
                 if kai.GANG_MESSAGE_MARK in r['message']]
        if not seen:
            unverified(both('the gang\'s PodGroup and events are gone, so the text cannot be matched with the cluster',
                            '갱의 PodGroup 과 이벤트가 없어 클러스터와 대조할 수 없습니다'), {'file': raw})
        return {'file': raw, 'kai': seen[0][:300]}

    # ------------------------------------------------------------ step 6
    def check_preempt_build_running(self):
        pod = self.require_running(cat.BUILD_POD)
        problems = []
        if ((pod.get('spec') or {}).get('priorityClassName')) != cat.BUILD_CLASS:
            problems.append(both('priorityClassName is %s, expected build' % (pod.get('spec') or {}).get('priorityClassName'),
                                 'priorityClassName 이 %s 입니다. build 여야 합니다'
                                 % (pod.get('spec') or {}).get('priorityClassName')))
        if kai.pod_queue(pod) != 'research':
            problems.append(both('queue is %s, expected research' % kai.pod_queue(pod),
                                 '큐가 %s 입니다. research 여야 합니다' % kai.pod_queue(pod)))
        if problems:
            fail(both('; '.join(p['en'] for p in problems), '; '.join(p['ko'] for p in problems)))
        return {'phase': kai.pod_phase(pod), 'priorityClassName': cat.BUILD_CLASS}

    def check_preempt_evicted(self):
        candidates = (cat.P1,) + cat.TRAIN_PODS
        evictions = [e for e in self.evictions() if e['victim'] in candidates]
        by_build = [e for e in evictions if ('pg-%s-' % cat.BUILD_POD) in e['message'] or cat.BUILD_POD in e['message']]
        if by_build:
            victim = by_build[-1]['victim']
            remaining = self.s.pod(victim)
            if remaining is not None and not kai.meta(remaining).get('deletionTimestamp'):
                fail(both('%s was marked for eviction but still exists' % victim,
                          '%s 이(가) 밀려나야 했지만 아직 있습니다' % victim))
            return {'victim': victim, 'event': by_build[-1]['message']}
        trains_gone = [n for n in cat.TRAIN_PODS if self.s.pod(n) is None]
        step6_events = [e for name in (cat.BUILD_POD,) + cat.TRAIN_PODS for e in self.pod_events(name)]
        if self.s.pod(cat.BUILD_POD) is not None and trains_gone and not step6_events:
            # bd-1 runs and a train pod is gone, but the events of step 6 have expired.
            unverified(both('no events are left to show who removed %s' % ', '.join(trains_gone),
                            '%s 을(를) 누가 지웠는지 보여줄 이벤트가 남아 있지 않습니다' % ', '.join(trains_gone)))
        fail(both('no Evict event from KAI for a train pod of research; bd-1 did not preempt anything '
                  '(were tr-1 and tr-2 running with priorityClassName train when bd-1 came?)',
                  'research 의 train 파드에 대한 KAI의 Evict 이벤트가 없습니다. bd-1 이 선점하지 않았습니다 '
                  '(bd-1 을 만들 때 tr-1, tr-2 가 priorityClassName train 으로 실행 중이었나요?)'),
             {'evictions': evictions})

    # ------------------------------------------------------------ step 7
    def check_fraction_manifest(self):
        docs = self.yaml_docs(cat.FILES['fraction'])
        problems = []
        for name in cat.FRACTION_PODS:
            pods = [d for d in docs if d.get('kind') == 'Pod' and kai.name_of(d) == name]
            if not pods:
                problems.append(both('no Pod %s' % name, '%s 파드가 없습니다' % name))
                continue
            pod = pods[0]
            fraction = kai.annotations(pod).get(kai.FRACTION_ANNOTATION)
            if not isinstance(fraction, str):
                problems.append(both('%s gpu-fraction annotation is %r, not a string: annotation values must be quoted, '
                                     'e.g. gpu-fraction: "0.5"' % (name, fraction),
                                     '%s 의 gpu-fraction annotation 값 %r 이 문자열이 아닙니다. 따옴표로 감싸야 합니다 '
                                     '(예: gpu-fraction: "0.5")' % (name, fraction)))
            elif fraction != cat.FRACTION:
                problems.append(both('%s gpu-fraction annotation is %s, expected "0.5"' % (name, fraction),
                                     '%s 의 gpu-fraction annotation 이 %s 입니다. "0.5" 여야 합니다' % (name, fraction)))
            if kai.gpu_limit(pod) or any(kai.GPU_RESOURCE in ((c.get('resources') or {}).get('requests') or {})
                                         for c in (pod.get('spec') or {}).get('containers') or []):
                values = dict(name=name, denial=kai.FRACTION_WITH_GPU_LIMIT_DENIAL)
                problems.append(both(text('fraction.manifest', 'en', 'both', **values),
                                     text('fraction.manifest', 'ko', 'both', **values)))
            problems.extend(p for p in self.pod_spec_problems(pod, None))
        if problems:
            fail(both('; '.join(p['en'] for p in problems), '; '.join(p['ko'] for p in problems)))
        return {'pods': list(cat.FRACTION_PODS), 'gpu-fraction': cat.FRACTION}

    def check_fraction_shared(self):
        pods = dict((name, self.require_running(name)) for name in cat.FRACTION_PODS)
        groups = dict((n, kai.gpu_group(p)) for n, p in pods.items())
        devices = dict((n, kai.resolve_env(p, self.s.configmaps)) for n, p in pods.items())
        reservations = [p for p in self.s.all_pods if kai.meta(p).get('namespace') == kai.RESERVATION_NAMESPACE]
        evidence = {'groups': groups, 'devices': devices, 'reservation_pods': [kai.name_of(p) for p in reservations]}
        if None in groups.values() or len(set(groups.values())) != 1:
            fail(both('fr-1 and fr-2 are not in one GPU group: %s' % groups,
                      'fr-1 과 fr-2 가 같은 GPU 그룹이 아닙니다: %s' % groups), evidence)
        if None in devices.values() or len(set(devices.values())) != 1:
            fail(both('fr-1 and fr-2 do not see the same device (NVIDIA_VISIBLE_DEVICES %s)' % devices,
                      'fr-1 과 fr-2 가 같은 장치를 보지 않습니다 (NVIDIA_VISIBLE_DEVICES %s)' % devices), evidence)
        holders = [p for p in reservations if kai.gpu_group(p) == groups[cat.FRACTION_PODS[0]]]
        if len(holders) != 1 or kai.reserved_gpu(holders[0]) != devices[cat.FRACTION_PODS[0]]:
            fail(both('expected one reservation pod in %s holding %s; found %d'
                      % (kai.RESERVATION_NAMESPACE, devices[cat.FRACTION_PODS[0]], len(holders)),
                      '%s 에 %s 를 쥔 예약 파드가 하나여야 하는데 %d 개입니다'
                      % (kai.RESERVATION_NAMESPACE, devices[cat.FRACTION_PODS[0]], len(holders))), evidence)
        return evidence

    # ------------------------------------------------------------ step 8
    def report_claims(self):
        raw = self.s.file(cat.FILES['report'])
        if raw is None:
            fail(both(text('_file_missing', 'en', file=cat.FILES['report'], workdir=self.s.workdir),
                      text('_file_missing', 'ko', file=cat.FILES['report'], workdir=self.s.workdir)))
        try:
            report = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            fail(both(text('_file_unreadable', 'en', file=cat.FILES['report'], fmt='JSON', error=str(exc)),
                      text('_file_unreadable', 'ko', file=cat.FILES['report'], fmt='JSON', error=str(exc))))
        if not isinstance(report, dict):
            fail(both('the top level is not a JSON object', '최상위가 JSON 객체가 아닙니다'))
        return report

    def device_ids(self):
        """Every GPU id this cluster has handed out (reservation pods' annotations)."""
        return set(kai.reserved_gpu(p) for p in self.s.all_pods if kai.reserved_gpu(p))

    def check_report_file(self):
        report = self.report_claims()
        missing = [k for k in cat.REPORT_KEYS if k not in report]
        extra = sorted(set(report) - set(cat.REPORT_KEYS))
        problems = []
        if missing:
            problems.append(both('missing key(s) %s' % ', '.join(missing), '키 %s 가 없습니다' % ', '.join(missing)))
        if extra:
            problems.append(both('unexpected key(s) %s' % ', '.join(extra), '필요 없는 키 %s 가 있습니다' % ', '.join(extra)))
        for key in ('gpu_allocated', 'reservation_pods'):
            if key in report and (isinstance(report[key], bool) or not isinstance(report[key], (int, float))):
                problems.append(both('%s must be a number, not %r' % (key, report[key]),
                                     '%s 는 %r 가 아니라 숫자여야 합니다' % (key, report[key])))
        if 'shared_gpu' in report and not isinstance(report['shared_gpu'], str):
            problems.append(both('shared_gpu must be a string', 'shared_gpu 는 문자열이어야 합니다'))
        if problems:
            fail(both('; '.join(p['en'] for p in problems), '; '.join(p['ko'] for p in problems)))
        return report

    def check_report_values(self):
        report = self.report_claims()
        actual = cat.report(self.s.all_pods, self.s.namespace, self.s.configmaps)
        evidence = {'report': report, 'cluster': actual}
        claimed_gpu = report.get('shared_gpu')
        if actual['shared_gpu'] and isinstance(claimed_gpu, str) and claimed_gpu.startswith('GPU-') \
                and claimed_gpu != actual['shared_gpu'] and claimed_gpu not in self.device_ids():
            values = dict(claimed=claimed_gpu, actual=actual['shared_gpu'])
            fail(both(text('report.values', 'en', 'copied', **values), text('report.values', 'ko', 'copied', **values)),
                 evidence)
        wrong = [k for k in cat.REPORT_KEYS if report.get(k) != actual[k]]
        if wrong:
            fail(both('; '.join('%s is %r, the cluster shows %r' % (k, report.get(k), actual[k]) for k in wrong),
                      '; '.join('%s 가 %r 이지만 클러스터는 %r 입니다' % (k, report.get(k), actual[k]) for k in wrong)),
                 evidence)
        return evidence


def junit_xml(grade):
    """A JUnit XML document: one testsuite per step, one testcase per check."""
    from xml.sax.saxutils import escape, quoteattr
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<testsuites name="gsb.kai_lab grade" tests="%d" failures="%d" skipped="%d" time="%.3f">'
             % (sum(len(s['checks']) for s in grade['steps']), grade['counts'][FAILED], grade['counts'][UNVERIFIED],
                grade['duration'])]
    for step in grade['steps']:
        failures = len([c for c in step['checks'] if c['status'] == FAILED])
        skipped = len([c for c in step['checks'] if c['status'] == UNVERIFIED])
        lines.append('  <testsuite name=%s tests="%d" failures="%d" skipped="%d">'
                     % (quoteattr('%d %s' % (step['number'], step['id'])), len(step['checks']), failures, skipped))
        for check in step['checks']:
            lines.append('    <testcase classname=%s name=%s time="%.4f">'
                         % (quoteattr('kai_lab.%s' % step['id']), quoteattr(check['id']), check['duration']))
            if check['status'] == FAILED:
                lines.append('      <failure message=%s>%s</failure>'
                             % (quoteattr(check['message']), escape(check['hint'])))
            elif check['status'] == UNVERIFIED:
                lines.append('      <skipped message=%s/>' % quoteattr(check['message']))
            lines.append('    </testcase>')
        lines.append('  </testsuite>')
    lines.append('</testsuites>')
    return '\n'.join(lines) + '\n'


def summary_table(grade):
    """The console table: one line per check."""
    marks = {PASSED: 'PASS', FAILED: 'FAIL', UNVERIFIED: '????'}
    rows = ['%-4s %-22s %-4s %s' % ('step', 'check', '', 'message')]
    for step in grade['steps']:
        for check in step['checks']:
            rows.append('%-4s %-22s %-4s %s' % (step['number'], check['id'], marks[check['status']],
                                                '' if check['status'] == PASSED else check['message']))
    for check in grade['environment']:
        rows.append('%-4s %-22s %-4s %s' % ('-', check['id'], marks[check['status']],
                                            '' if check['status'] == PASSED else check['message']))
    rows.append('score %.1f%% (%d/%d points), %s' % (grade['score'], grade['points'], grade['max_points'],
                                                     'PASSED' if grade['passed'] else 'NOT PASSED'))
    return rows
