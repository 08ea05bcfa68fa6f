# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 2, pod p1 and its PodGroup: p1 runs through KAI; podgroup.txt names
the PodGroup KAI's pod-grouper made for it.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    import yaml
except ImportError:  # reported by common.require_libraries before any use
    yaml = None

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import printable, with_particle
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import evictions
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import learner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    P1, RESEARCH, Check, Step, bilingual, failed, gpu_pod, passed, say_both, unverified)

MANIFEST_FILE = 'p1.yaml'
PODGROUP_FILE = 'podgroup.txt'


def p1(namespace):
    return gpu_pod(P1, namespace, RESEARCH)


# ---------------------------------------------------------------- solving

def solve(runner):
    pod = p1(runner.namespace)
    runner.write_file(MANIFEST_FILE, yaml.safe_dump(pod, sort_keys=False))
    recorded = runner.read_file(PODGROUP_FILE)
    if runner.view.pod(P1) is None and recorded:
        # Done before: a later step's declared eviction took p1 (evictions); not created again.
        evicted = evictions.evicted_in_view(runner.view.events(), P1)
        if evicted:
            return {'evicted': evicted[-1]['message'], 'podgroup': recorded.strip()}
    if runner.view.pod(P1) is None:
        runner.apply(pod)
    runner.wait_pods([P1], 'Running', '%s to run' % P1)
    live = runner.view.pod(P1)
    name = kai.podgroup_name_of_pod(live) if live else None
    if kai.scheduler_name(live) != kai.SCHEDULER_NAME:
        runner.not_as_expected('%s scheduled by %s' % (P1, kai.SCHEDULER_NAME), runner.view.pod_state(P1),
                               'pod scheduled by default-scheduler')
    elif not name or runner.view.podgroup(name) is None:
        runner.not_as_expected('a PodGroup for %s' % P1, runner.view.pod_state(P1), runner.view.diagnose(P1))
    if name:
        runner.write_file(PODGROUP_FILE, name + '\n')
    return {'pod': runner.view.pod_state(P1), 'podgroup': name}


# ---------------------------------------------------------------- checking

WORDS = {
    'podgroup.manifest': {
        'desc': {'en': '{p1_file} asks KAI for {p1_gpus} GPU in queue {research}',
                 'ko': '{p1_file:이} {research} 큐에서 KAI에 GPU {p1_gpus}개를 요청'},
        'fail': {'en': '{p1_file}: {problem}', 'ko': '{p1_file}: {problem}'},
        'hint': {'en': 'Pod {p1} in {namespace}: spec.schedulerName {scheduler}, label {queue_label}: {research}, '
                       'limits {gpu_resource}: {p1_gpus}.',
                 'ko': '{namespace} 의 {p1} 파드: spec.schedulerName {scheduler}, 레이블 {queue_label}: {research}, '
                       'limits {gpu_resource}: {p1_gpus}.'},
    },
    'podgroup.running': {
        'desc': {'en': '{p1} runs, placed by KAI', 'ko': '{p1:이} KAI로 배치되어 실행 중'},
        'fail': {'en': '{p1}: {problem}', 'ko': '{p1}: {problem}'},
        'hint': {'en': 'kubectl -n {namespace} describe pod {p1} shows why; see the PodGroup with kubectl -n {namespace} '
                       'get podgroups.',
                 'ko': 'kubectl -n {namespace} describe pod {p1:으로} 이유를 보고 kubectl -n {namespace} get podgroups 로 '
                       'PodGroup을 확인하세요.'},
    },
    'podgroup.file': {
        'desc': {'en': '{podgroup_file} names {p1}\'s PodGroup', 'ko': '{podgroup_file:이} {p1} 의 PodGroup 이름'},
        'fail': {'en': '{podgroup_file}: {problem}', 'ko': '{podgroup_file}: {problem}'},
        'hint': {'en': "kubectl -n {namespace} get pod {p1} -o jsonpath='{{.metadata.annotations.{podgroup_annotation}}}' "
                       "> {podgroup_path}",
                 'ko': "kubectl -n {namespace} get pod {p1} -o jsonpath='{{.metadata.annotations.{podgroup_annotation}}}' "
                       "> {podgroup_path}"},
    },
    'not_p1s': {'en': 'says {claimed}, which is not the PodGroup KAI gave {p1}: KAI writes that name into {p1}\'s '
                      '{podgroup_annotation} annotation (kubectl -n {namespace} get pod {p1} -o yaml)',
                'ko': '"{claimed}" 라고 되어 있지만 KAI 가 {p1} 에게 준 PodGroup 이 아닙니다. KAI 는 그 이름을 {p1} 파드의 '
                      '{podgroup_annotation} 어노테이션에 적습니다 (kubectl -n {namespace} get pod {p1} -o yaml)'},
    'no_podgroup': {'en': 'says {claimed}, but {p1} has no PodGroup: KAI gives a pod one (in its {podgroup_annotation} '
                          'annotation) only when it schedules the pod, with schedulerName {scheduler}',
                    'ko': '"{claimed}" 라고 되어 있지만 {p1} 파드에는 PodGroup 이 없습니다. KAI 는 schedulerName {scheduler:으로} '
                          '자기가 스케줄링하는 파드에만 PodGroup 을 줍니다 ({podgroup_annotation} 어노테이션)'},
    'gone': {'en': '{p1} is gone; its events show it ran through KAI but not the whole story',
             'ko': '{p1:이} 없습니다. 이벤트로는 KAI가 실행했다는 것까지만 확인됩니다'},
    'gone_expired': {'en': '{p1} is gone (KAI may have evicted it in step {n_evicting}) and its events have expired',
                     'ko': '{p1:이} 없고({n_evicting}단계에서 KAI가 밀어냈을 수 있음) 이벤트도 만료되었습니다'},
    'both_gone': {'en': '{p1} and its PodGroup are gone (evicted in step {n_evicting}?), so {claimed} cannot be matched',
                  'ko': '{p1:과} PodGroup 이 없어({n_evicting}단계에서 밀려남?) {claimed:을} 대조할 수 없습니다'},
    # KAI's pod-grouper names the PodGroup of a pod it groups pg-<pod>-<pod uid> and makes the pod its owner; a
    # pod created with a pod-group-name annotation (any name: its uid is not known before) is left in that one.
    'own_podgroup': {'en': '{claimed} is not a PodGroup KAI\'s pod-grouper made for {p1}: {p1} was created naming it in '
                           'its {podgroup_annotation} annotation, so KAI placed {p1} in that PodGroup and made none '
                           'of its own',
                     'ko': '{claimed:은} KAI pod-grouper 가 {p1:을} 위해 만든 PodGroup 이 아닙니다: {p1:을} 만들 때 '
                           '{podgroup_annotation} 어노테이션으로 그 PodGroup 을 지정했으므로 KAI는 {p1:을} 그 '
                           'PodGroup 에 넣었고 자신의 PodGroup 은 만들지 않았습니다'},
    'own_podgroup_hint': {'en': 'Delete {p1} and create it again from {p1_path} without the {podgroup_annotation} '
                                'annotation: KAI\'s pod-grouper then makes its PodGroup and writes the name into that '
                                'annotation.',
                          'ko': '{p1:을} 지우고 {podgroup_annotation} 어노테이션 없이 {p1_path:으로} 다시 만드세요: 그러면 '
                                'KAI pod-grouper 가 PodGroup 을 만들고 그 이름을 어노테이션에 씁니다.'},
    'not_owned': {'en': '{claimed} is not a PodGroup KAI\'s pod-grouper made for {p1}: its ownerReferences do not name '
                        'the pod {p1} it is named after',
                  'ko': '{claimed:은} KAI pod-grouper 가 {p1:을} 위해 만든 PodGroup 이 아닙니다: ownerReferences 가 '
                        '이름이 가리키는 {p1} 파드가 아닙니다'},
}


def check_manifest(snapshot):
    pod = learner.manifest_pod(snapshot, MANIFEST_FILE, P1)
    return learner.fail_on(learner.pod_spec_problems(snapshot, pod, 1)) or \
        passed({'schedulerName': kai.scheduler_name(pod), 'queue': kai.pod_queue(pod), 'gpus': kai_gpu.gpu_limit(pod)})


def check_running(snapshot):
    pod = learner.lab_pod(snapshot, P1)
    if pod is None:
        return missing_p1(snapshot)
    learner.require_running(snapshot, P1)
    return passed({'phase': kai.pod_phase(pod), 'node': kai.pod_node(pod), 'podgroup': kai.podgroup_name_of_pod(pod)})


def evicting_steps(snapshot, present=False):
    """The numbers of the steps whose declared evictions may take p1 (evictions.evictors), comma-separated.
    present: only those whose evicting pod exists now (the lab has reached them)."""
    numbers = [str(step.number) for step, by in evictions.evictors(P1) if not present or snapshot.pod(by) is not None]
    return ', '.join(numbers)


def missing_p1(snapshot):
    """p1 is gone: KAI may have evicted it in a later step that declares so (evictions), which is no mistake."""
    # Only KAI's Evict about p1's own PodGroup, made for a declared evicting pod, counts (evictions.scan).
    victims = [e.summary for e in evictions.expected(snapshot, P1)]
    ran_by_kai = learner.ran_by_kai(snapshot, P1)
    if victims and ran_by_kai:
        return passed({'evicted': victims[-1]['message']})
    if victims or ran_by_kai:
        return unverified(say_both(WORDS['gone'], **snapshot.lab))
    if evicting_steps(snapshot, present=True) and not learner.pod_events(snapshot, P1):
        return unverified(say_both(WORDS['gone_expired'], **dict(snapshot.lab, n_evicting=evicting_steps(snapshot, True))))
    return failed(bilingual('pod %s does not exist in %s' % (P1, snapshot.namespace),
                            '%s 네임스페이스에 %s 파드가 없습니다' % (snapshot.namespace, P1)))


def check_file(snapshot):
    raw = learner.text_file(snapshot, PODGROUP_FILE)
    lines = [line.strip() for line in raw.splitlines() if line.strip()]
    if len(lines) != 1:
        return failed(bilingual('expected one line with the PodGroup name, found %d lines' % len(lines),
                                'PodGroup 이름 한 줄이어야 하는데 %d 줄입니다' % len(lines)))
    claimed = lines[0]
    pod = snapshot.pod(P1)
    # A PodGroup KAI never placed p1 through is no KAI decision to name. A p1
    # the default scheduler placed (common mistake 1) has no PodGroup, which the
    # lines below say; one that claims a PodGroup must have been bound by KAI.
    if pod is not None and kai.pod_phase(pod) == 'Running' and (
            kai.scheduler_name(pod) == kai.SCHEDULER_NAME or kai.podgroup_name_of_pod(pod)):
        problem = learner.not_placed_by_kai(pod)
        if problem:
            return problem.result
    shown = dict(snapshot.lab, claimed=printable(claimed, 120))
    # p1 evicted by a later step (evictions: declared, KAI's word): its Evict event names p1's PodGroup.
    evicted = evictions.expected(snapshot, P1) if pod is None else []
    if pod is not None or evicted:
        actual = kai.podgroup_name_of_pod(pod) if pod is not None else evicted[-1].podgroup
        if claimed != actual:
            # Never the name itself: reading it where KAI wrote it is the step (the record keeps both).
            return failed(say_both(WORDS['not_p1s' if actual else 'no_podgroup'],
                                   **dict(snapshot.lab, claimed=printable(claimed, 80))),
                          {'claimed': claimed, 'actual': actual})
        # The annotation is as p1 was created unless KAI's pod-grouper wrote it: only it can name p1's uid.
        if pod is not None and actual != kai.workload_podgroup_name(P1, kai.meta(pod).get('uid')):
            return failed(say_both(WORDS['own_podgroup'], **shown), {'claimed': claimed},
                          hint=say_both(WORDS['own_podgroup_hint'], **shown))
    podgroup = snapshot.podgroup(claimed)
    if podgroup is None:
        if pod is not None:
            return unverified(bilingual('%s names %s but that PodGroup object is gone, so its owner cannot be checked'
                                        % (P1, claimed),
                                        '%s %s 가리키지만 그 PodGroup 객체가 없어 소유자를 확인할 수 없습니다'
                                        % (with_particle(P1, '이'), with_particle(claimed, '을'))))
        if evicted:
            return passed({'podgroup': claimed, 'evicted': evicted[-1].summary['message']})
        if claimed.startswith(kai.workload_podgroup_name(P1, '')):
            words = dict(snapshot.lab, claimed=claimed, n_evicting=evicting_steps(snapshot))
            return unverified(say_both(WORDS['both_gone'], **words))
        return failed(bilingual('no PodGroup named %s exists in %s' % (claimed, snapshot.namespace),
                                '%s 에 이름이 %s 인 PodGroup 이 없습니다' % (snapshot.namespace, claimed)))
    owner = kai.podgroup_summary(podgroup)['owner']
    if owner and owner.get('name') != P1:
        return failed(bilingual('%s belongs to %s %s, not %s' % (claimed, owner.get('kind'), owner.get('name'), P1),
                                '%s %s 아니라 %s %s 의 것입니다'
                                % (with_particle(claimed, '은'), with_particle(P1, '이'), owner.get('kind'), owner.get('name'))))
    # KAI's pod-grouper makes p1 (the uid in the name) the owner; a PodGroup of no owner or another uid is not it.
    named_uid = kai.owner_uid_in_podgroup_name(claimed, P1)
    if not named_uid or kai.owner_uid(podgroup, 'Pod', P1) != named_uid:
        return failed(say_both(WORDS['not_owned'], **shown), {'claimed': claimed},
                      hint=say_both(WORDS['own_podgroup_hint'], **shown))
    return passed({'podgroup': claimed})


STEP = Step(
    'podgroup', {'en': 'Pod %s and its PodGroup' % P1, 'ko': '%s 파드와 PodGroup' % P1}, [MANIFEST_FILE, PODGROUP_FILE],
    '%s Running through KAI; %s names its PodGroup' % (P1, PODGROUP_FILE), solve, (
        Check('podgroup.manifest', 1, check_manifest, WORDS['podgroup.manifest'], files_only=True),
        Check('podgroup.running', 2, check_running, WORDS['podgroup.running']),
        Check('podgroup.file', 1, check_file, WORDS['podgroup.file']),
    ), words=[WORDS], evictable=[P1], objects=lambda namespace: {'pods': [p1(namespace)]})
