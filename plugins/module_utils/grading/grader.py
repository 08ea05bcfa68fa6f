# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Grade a learner's lab as it stands: the files in the workdir and the cluster.

Read-only by construction: the grader reads files and lists objects; it has
no code path that writes to the cluster, and it never opens a learner file
for writing. Each check (registered by its step in steps/) reports passed,
failed or unverified (its evidence is gone, e.g. an event past its TTL) with
a message and a hint in Korean or English, and the evidence it looked at.
This runner takes one snapshot, runs every check within the time limit,
words the results and scores them.

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.record import store as grade_record_store
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import parse as learner_parse
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import text as learner_text
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import evictions
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import lab_values
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import ClusterError
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import ListTooLarge, RequestTimeout
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import flood
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    FAILED, PASSED, UNVERIFIED, Check, Result, Stop, bilingual, failed, passed, say, say_both)

SCHEMA_VERSION = 1
MESSAGE_LIMIT = 1000
# The snapshot's error when the time limit ran out while reading the cluster.
OUT_OF_TIME = 'the grade\'s time limit ran out while reading the cluster'

WORDS = {
    'unverified': {
        'en': 'Could not be verified: {why}',
        'ko': '확인할 수 없습니다: {why}',
    },
    'cluster': {
        'en': 'The cluster could not be read: {error}',
        'ko': '클러스터를 읽을 수 없습니다: {error}',
    },
    'cluster_hint': {
        'en': 'Start the lab (ansible-playbook playbooks/provision.yml) and grade again.',
        'ko': '실습 환경을 시작한 뒤(ansible-playbook playbooks/provision.yml) 다시 채점하세요.',
    },
    'timeout': {
        'en': 'Not checked: grading ran out of its {seconds} s time limit.',
        'ko': '확인하지 못했습니다: 채점 제한 시간 {seconds}초를 넘었습니다.',
    },
    'unread': {
        'en': '{what} could not be read: {error}',
        'ko': '{what_ko:을} 읽을 수 없습니다: {error}',
    },
    'unread_hint': {
        'en': 'Remove or fix what the message names (or start the lab if it is not running), then check again.',
        'ko': '메시지가 가리키는 것을 지우거나 고친 뒤(실습 환경이 멈췄다면 시작한 뒤) 다시 확인하세요.',
    },
    'environment.kai_components': {
        'desc': {'en': 'KAI-Scheduler components are running', 'ko': 'KAI-Scheduler 구성요소가 실행 중'},
        'fail': {'en': 'KAI component(s) not running: {names}. Pods will not be grouped, scheduled or bound.',
                 'ko': '실행되지 않는 KAI 구성요소: {names}. 파드가 그룹화·스케줄·바인딩되지 않습니다.'},
        'hint': {'en': 'Run ansible-playbook playbooks/provision.yml again; it restarts stopped components.',
                 'ko': 'ansible-playbook playbooks/provision.yml 을 다시 실행하면 멈춘 구성요소가 재시작됩니다.'},
    },
}


def cluster_unreadable(error):
    return Result(FAILED, message=say_both(WORDS['cluster'], error=error), hint=say_both(WORDS['cluster_hint']))


def check_kai_components(snapshot):
    down = sorted(name for name, ok in snapshot.health.items() if not ok)
    if down:
        return failed(bilingual(', '.join(down), ', '.join(down)), snapshot.health)
    if snapshot.error:
        return cluster_unreadable(snapshot.error)
    return passed(snapshot.health)


# Not a lab step's check and not scored; it reads health, so it reports a
# cluster it cannot read itself.
ENVIRONMENT_CHECK = Check('environment.kai_components', 0, check_kai_components, WORDS['environment.kai_components'])


def step_selection(requested):
    """(step ids, None) for the steps to grade (None: every step), or (None, message) naming the valid ids."""
    names = [str(n).strip() for n in requested or [] if str(n).strip()]
    if not names or 'all' in names:
        return None, None
    unknown = [n for n in names if n not in steps.STEP_IDS]
    if unknown:
        return None, ('unknown step(s) %s; the steps are %s, or all. / 알 수 없는 단계 %s; 단계는 %s 또는 all 입니다.'
                      % (', '.join(unknown), ', '.join(steps.STEP_IDS), ', '.join(unknown), ', '.join(steps.STEP_IDS)))
    return [n for n in steps.STEP_IDS if n in names], None


class Snapshot(flood.Lists):
    """Everything the grader reads, fetched once (a few list calls of the lab's namespace).

    deadline (time.monotonic()) bounds the reading too: past it, the rest is
    not read and the snapshot says so as its error, so the cluster's checks
    report the time limit instead of the grade running over it. What only
    some checks need beyond the lab's namespace (the pods of every namespace,
    of KAI's reservation namespace, pods of a name elsewhere) is read when a
    check first asks for it (read_later): an object the client refuses there
    (client/answer.py) leaves only that check unverified, naming it.
    A list longer than the client reads is the learner's flood: each check
    that reads it fails naming it (grading/flood.py's Lists).
    """

    def __init__(self, cluster, namespace, workdir, health=None, kai_version=kai_profiles.LAB_VERSION, deadline=None,
                 kai_namespace=None):
        self.namespace = namespace
        self.workdir = workdir
        self.kai_namespace = kai_namespace
        self._lab = None
        # The KAI version graded against: a check whose form depends on it reads it here.
        self.kai_version = kai_version
        self.error = None
        flood.Lists.__init__(self)
        self.health = health or {}
        self._files = {}
        self.namespace_uid = None
        # What earlier grades verified (grade_record_store); empty unless the caller loads one.
        self.record = grade_record_store.empty(namespace)
        self._cluster, self._deadline, self._later = cluster, deadline, {}
        try:
            self._read(cluster, deadline)
        except ClusterError as exc:
            self.error = OUT_OF_TIME if self._past(exc) else str(exc)
        except TimeoutError:
            self.error = OUT_OF_TIME

    def _read(self, cluster, deadline):
        def in_time(value):
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError()
            return value

        # Its uid tells a record of this lab from one of a lab since reset (namespace recreated).
        namespace_object = in_time(cluster.get('v1', 'Namespace', self.namespace))
        self.namespace_uid = kai.meta(namespace_object).get('uid') if namespace_object else None
        self.read_lists(cluster, self.namespace, in_time)
        # The ConfigMaps fraction pods read (configmaps): one list, not a GET per pod, when first needed.
        self._wanted = set(name for pod in self.listed('pods') for name in kai_gpu.shared_gpu_configmap_names(pod))

    def _past(self, exc):
        """Whether exc is the grade's time limit running out during a request."""
        return isinstance(exc, RequestTimeout) and self._deadline is not None and time.monotonic() >= self._deadline

    def read_later(self, key, read, what):
        """What read() gives, read once, when a check first needs it, within the grade's time.

        what: (en, ko) naming it. When it cannot be read, Stop with the
        check unverified, saying what and why (the client's error names an
        object it refused and the bound); when it is longer than the client
        reads, Stop with the check failed naming the flood (grading/flood.py).
        """
        if key not in self._later:
            try:
                if self._deadline is not None and time.monotonic() > self._deadline:
                    raise TimeoutError()
                self._later[key] = (read(), None)
            except ListTooLarge as exc:
                self._later[key] = (None, flood.named(exc))
            except ClusterError as exc:
                self._later[key] = (None, OUT_OF_TIME if self._past(exc) else str(exc))
            except TimeoutError:
                self._later[key] = (None, OUT_OF_TIME)
        value, error = self._later[key]
        if isinstance(error, Result):  # a flood, named
            raise Stop(error)
        if error is not None:
            raise Stop(Result(UNVERIFIED, problem=say_both(WORDS['unread'], what=what[0], what_ko=what[1], error=error),
                              hint=say_both(WORDS['unread_hint'])))
        return value

    @property
    def lab(self):
        """The lab's names and numbers for this lab's namespace and workdir (steps/lab_values.py), which the
        checks' words are filled with: a hint names this lab's paths, and the steps' data, never a copy."""
        if self._lab is None:
            self._lab = lab_values.values(self.namespace, self.workdir, self.kai_namespace)
        return self._lab

    @property
    def all_pods(self):
        """The pods of every namespace (step 8 counts every GPU), read page by page when first needed."""
        return self.read_later('all_pods', lambda: self._cluster.list('v1', 'Pod', lean=True),
                               ('the pods of every namespace', '모든 네임스페이스의 파드'))

    @property
    def reservation_pods(self):
        """The pods of KAI's reservation namespace (who holds a shared GPU), read when first needed."""
        where = kai_gpu.RESERVATION_NAMESPACE
        return self.read_later('reservation_pods', lambda: self._cluster.list('v1', 'Pod', where, lean=True),
                               ('the pods of namespace %s' % where, '%s 네임스페이스의 파드' % where))

    @property
    def configmaps(self):
        """name -> ConfigMap of the lab's namespace, those its fraction pods read (listed once, when first needed)."""
        if not getattr(self, '_wanted', None):
            return {}
        listed = self.read_later('configmaps', lambda: self._cluster.list('v1', 'ConfigMap', self.namespace, lean=True),
                                 ('the ConfigMaps of namespace %s' % self.namespace,
                                  '%s 네임스페이스의 ConfigMap' % self.namespace))
        return dict((kai.name_of(c), c) for c in listed if kai.name_of(c) in self._wanted)

    @staticmethod
    def _named(objs, name):
        for obj in objs:
            if kai.name_of(obj) == name:
                return obj
        return None

    def pod(self, name):
        return self._named(self.pods, name)

    def queue(self, name):
        return self._named(self.queues, name)

    def podgroup(self, name):
        return self._named(self.podgroups, name)

    def elsewhere(self, name):
        """Namespaces other than the lab's holding a pod of this name (a hint: [] when they cannot be read)."""
        try:
            pods = self.read_later(('named', name), lambda: self._cluster.list(
                'v1', 'Pod', field_selector='metadata.name=%s' % name, lean=True),
                ('pods named %s' % name, '%s 파드' % name))
        except Stop:
            return []
        return sorted(kai.meta(p).get('namespace') for p in pods
                      if kai.name_of(p) == name and kai.meta(p).get('namespace') != self.namespace
                      and kai.meta(p).get('namespace') != kai_gpu.RESERVATION_NAMESPACE)

    def read(self, name):
        """The learner's file as a LearnerFile (learner/read.py), read once per grade."""
        if name not in self._files:
            self._files[name] = learner_parse.read_text(self.workdir, name)
        return self._files[name]

    def file(self, name):
        """The learner's file as text, or None when it is missing or cannot be used."""
        return self.read(name).content


class Grader(object):
    """Runs every check against one snapshot."""

    def __init__(self, snapshot, lang='ko', deadline=None, time_limit=None):
        self.snapshot = snapshot
        self.lang = lang
        self.deadline = deadline
        self.time_limit = time_limit

    def run(self, step_ids=None):
        """The grade of every step, or of the steps in step_ids only (see step_selection)."""
        started = time.monotonic()
        graded_steps = []
        for step in steps.STEPS:
            if step_ids and step.id not in step_ids:
                continue
            checks = [self.run_check(check) for check in step.checks]
            graded_steps.append({
                'id': step.id, 'number': step.number, 'title': step.title[self.lang],
                'passed': all(c['status'] == PASSED for c in checks),
                'checks': checks,
            })
        checks = [c for s in graded_steps for c in s['checks']]
        points = sum(c['weight'] for c in checks if c['status'] == PASSED)
        total = sum(c['weight'] for c in checks)
        environment = [self.run_check(ENVIRONMENT_CHECK)]
        return {
            'schema_version': SCHEMA_VERSION,
            'lang': self.lang,
            'namespace': self.snapshot.namespace,
            'workdir': self.snapshot.workdir,
            'kai_version': self.snapshot.kai_version,
            'passed': points == total and all(c['status'] == PASSED for c in environment),
            'score': round(100.0 * points / total, 1) if total else 0.0,
            'points': points,
            'max_points': total,
            'counts': dict((status, len([c for c in checks if c['status'] == status]))
                           for status in (PASSED, FAILED, UNVERIFIED)),
            'environment': environment,
            'steps': graded_steps,
            'duration': round(time.monotonic() - started, 3),
        }

    def result_of(self, check):
        # Checks of the learner's files alone take no time and need no cluster: they always run.
        if self.deadline is not None and time.monotonic() > self.deadline and not check.files_only:
            return Result(UNVERIFIED, message=say_both(WORDS['timeout'], seconds=self.time_limit))
        if self.snapshot.error and not check.files_only and check is not ENVIRONMENT_CHECK:
            return cluster_unreadable(self.snapshot.error)
        try:
            return check.run(self.snapshot)
        except Stop as stop:
            return stop.result
        except Exception as exc:  # a learner's file of an unexpected shape: a failing check, not a crash
            what = '%s: %s' % (type(exc).__name__, learner_text.printable(exc, 160))
            return failed(bilingual('its input has an unexpected shape, so it cannot be interpreted (%s); '
                                    'compare your file with the lab text' % what,
                                    '입력의 형태가 예상과 달라 해석할 수 없습니다 (%s). 파일을 실습 설명과 비교하세요' % what))

    def run_check(self, check):
        started = time.monotonic()
        result = self.result_of(check)
        if result.status != PASSED and check is not ENVIRONMENT_CHECK and not self.snapshot.error:
            # A later step's declared eviction took this step's pods: what a grade verified before stands.
            result = evictions.stands(self.snapshot, check, steps.step(check.step_id), result)
        graded = {'id': check.id, 'step': check.step_id, 'weight': check.weight,
                  'description': say(check.words['desc'], self.lang, **self.snapshot.lab),
                  'status': result.status, 'passed': result.status == PASSED,
                  # Evidence may quote a learner's file: bounded, JSON-only.
                  'evidence': learner_text.bounded(result.evidence)}
        if result.status == PASSED:
            # A passed check says more than OK only when it has more to say (a recorded proof).
            graded['message'], graded['hint'] = (result.message[self.lang] if result.message else 'OK'), ''
        else:
            # One printable line each: learner text in them cannot forge a
            # console line or break the JUnit XML.
            graded['message'], graded['hint'] = (learner_text.printable(words, MESSAGE_LIMIT)
                                                 for words in self.wording(check, result))
        graded['duration'] = round(time.monotonic() - started, 4)
        return graded

    def wording(self, check, result):
        """The message and hint of a result that did not pass, in the grade's language."""
        lab = self.snapshot.lab
        hint = result.hint[self.lang] if result.hint else say(check.words['hint'], self.lang, **lab)
        if result.message:
            return result.message[self.lang], hint
        problem = result.problem[self.lang] if isinstance(result.problem, dict) else str(result.problem)
        if result.status == UNVERIFIED:
            return say(WORDS['unverified'], self.lang, why=problem), hint
        return say(check.words['fail'], self.lang, **dict(lab, problem=problem, names=problem)), hint
