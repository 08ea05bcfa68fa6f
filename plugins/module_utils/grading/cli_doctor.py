# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kai-lab doctor: the environment's faults, each named with what to do.

  kai-lab doctor     exit 0 and says so when the lab's stack is healthy;
                     exit 2 naming each fault (kai/doctor.py finds them)

An environment fault is not the learner's: kai-lab check's exit 2 and its
"not ready" line are for what this verb names. grading/cli.py registers
the verb (add_parsers) and runs it (run) with the config's target.

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import cli_output
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import say

VERBS = ('doctor',)

WORDS = {
    'doctor': {'en': 'find what in the lab\'s environment (nodes, fake GPUs, KAI) breaks it, and what to do; '
                     'exit 0 healthy, 2 a fault',
               'ko': '실습 환경(노드, 가짜 GPU, KAI)에서 실습을 망가뜨리는 문제와 할 일을 찾음; 종료 코드 0 정상, 2 문제'},
    'healthy': {'en': 'the lab\'s environment is healthy: nodes, fake GPUs and KAI-Scheduler are ready',
                'ko': '실습 환경이 정상입니다: 노드, 가짜 GPU, KAI-Scheduler 가 준비되었습니다'},
    'found': {'en': '{count} environment fault(s); these are not your work:',
              'ko': '환경 문제 {count}개; 여러분의 작업 문제가 아닙니다:'},
    'cluster': {'en': 'cannot read the cluster: {error}. Is the lab running? Provision it again.',
                'ko': '클러스터를 읽을 수 없습니다: {error}. 실습이 실행 중인지 확인하고 다시 프로비저닝하세요.'},
    'node_pool_label': {
        'en': 'node(s) {nodes} lack {label}={pool} or {fake}=true, so fake-gpu-operator gives them no GPUs. Label '
              'them (kubectl label node NODE {label}={pool}), then restart fake-gpu-operator, or provision again.',
        'ko': '노드 {nodes} 에 {label}={pool} 또는 {fake}=true 레이블이 없어 fake-gpu-operator 가 GPU 를 주지 않습니다. '
              '레이블을 붙이고(kubectl label node NODE {label}={pool}) fake-gpu-operator 를 재시작하거나 다시 프로비저닝하세요.'},
    'no_gpus': {
        'en': 'no allocatable {resource} on node(s) {nodes}: GPU pods stay Pending. Check fake-gpu-operator\'s device '
              'plugin, or provision again.',
        'ko': '노드 {nodes} 에 할당 가능한 {resource:이} 없습니다: GPU 파드가 Pending 으로 남습니다. fake-gpu-operator '
              '의 device plugin 을 확인하거나 다시 프로비저닝하세요.'},
    'runtime_class_missing': {
        'en': 'RuntimeClass {name} does not exist: pods that name it cannot start. Provision again (fake-gpu-operator\'s '
              'chart makes it).',
        'ko': 'RuntimeClass {name:이} 없습니다: 이를 쓰는 파드가 시작하지 못합니다. 다시 프로비저닝하세요 '
              '(fake-gpu-operator 차트가 만듭니다).'},
    'runtime_class_handler': {
        'en': 'RuntimeClass {name} has handler {handler}, which this node cannot run (fake GPUs run with {runnable}): '
              'keep k3s\'s runtimes disabled (k3s_disable: [runtimes]), delete the RuntimeClass and provision again.',
        'ko': 'RuntimeClass {name} 의 handler {handler:은} 이 노드에서 실행할 수 없습니다 (가짜 GPU 는 {runnable}): '
              'k3s 의 runtimes 를 끈 채(k3s_disable: [runtimes]) RuntimeClass 를 지우고 다시 프로비저닝하세요.'},
    'reservation_namespace': {
        'en': 'the reservation namespace {namespace} does not exist: GPU fraction pods cannot get a GPU. Provision '
              'again.',
        'ko': '예약 네임스페이스 {namespace:이} 없습니다: GPU 분할 파드가 GPU 를 받지 못합니다. 다시 프로비저닝하세요.'},
    'reservation_namespace_kai': {
        'en': 'KAI reserves GPUs in namespace {kai}, fake-gpu-operator serves {namespace}: set KAI\'s Config '
              'spec.binder.resourceReservation.namespace to {namespace} (provision again).',
        'ko': 'KAI 는 {kai} 네임스페이스에, fake-gpu-operator 는 {namespace} 에 GPU 를 예약합니다: KAI Config 의 '
              'spec.binder.resourceReservation.namespace 를 {namespace:으로} 두고 다시 프로비저닝하세요.'},
    'reservation_service_account': {
        'en': 'the reservation namespace {namespace} has no ServiceAccount {account}: KAI cannot create the '
              'reservation pods that give GPU fraction pods their GPU, so they stay unbound. Provision again.',
        'ko': '예약 네임스페이스 {namespace} 에 ServiceAccount {account:이} 없습니다: KAI 가 GPU 분할 파드에 GPU 를 '
              '주는 예약 파드를 만들지 못해 분할 파드가 바인딩되지 않습니다. 다시 프로비저닝하세요.'},
    'status_updater_rights': {
        'en': 'fake-gpu-operator\'s status-updater ({account}) may not patch pods in {namespace} ({reason}): '
              'reservation pods never get their GPU. Bind it a Role that allows patch on pods there, or provision '
              'again.',
        'ko': 'fake-gpu-operator 의 status-updater ({account}) 가 {namespace} 의 파드를 patch 할 수 없습니다 '
              '({reason}): 예약 파드가 GPU 를 받지 못합니다. 그곳 파드에 patch 를 허용하는 Role 을 바인딩하거나 '
              '다시 프로비저닝하세요.'},
    'kai_config_missing': {
        'en': 'KAI\'s Config {name} does not exist: KAI\'s operator is not installed. Provision again.',
        'ko': 'KAI 의 Config {name:이} 없습니다: KAI operator 가 설치되지 않았습니다. 다시 프로비저닝하세요.'},
    'queue_label_key': {
        'en': 'KAI reads a pod\'s queue from label {kai}, the lab uses {lab}: no pod finds its queue. Set '
              'kai_scheduler_queue_label to {lab} and provision again.',
        'ko': 'KAI 는 파드의 큐를 {kai} 레이블에서 읽지만 실습은 {lab:을} 씁니다: 어떤 파드도 큐를 찾지 못합니다. '
              'kai_scheduler_queue_label 을 {lab:으로} 두고 다시 프로비저닝하세요.'},
    'snapshot_plugin': {
        'en': 'KAI\'s scheduler runs its {plugin} plugin (ConfigMap {configmap}): whoever reaches its plugin server gets '
              'the whole cluster at {path}, ConfigMaps of every namespace included, without authentication. Keep '
              '{plugin} in kai_scheduler_disabled_plugins (KAI\'s chart value scheduler.plugins.{plugin}.enabled: '
              'false, KAI v0.13 and later) and provision again.',
        'ko': 'KAI 스케줄러가 {plugin} 플러그인을 켜 두었습니다 (ConfigMap {configmap}): 플러그인 서버에 닿는 누구나 '
              '인증 없이 {path} 에서 모든 네임스페이스의 ConfigMap 을 포함한 클러스터 전체를 받습니다. '
              'kai_scheduler_disabled_plugins 에 {plugin:을} 두고(KAI 차트 값 scheduler.plugins.{plugin}.enabled: '
              'false, KAI v0.13 이상) 다시 프로비저닝하세요.'},
    'reservation_pods': {
        'en': 'KAI\'s reservation pods in {namespace} are not holding their GPU: {pods}. Delete them (KAI makes new '
              'ones); if they come back so, see the faults above or provision again.',
        'ko': '{namespace} 의 KAI 예약 파드가 GPU 를 잡고 있지 않습니다: {pods}. 지우면 KAI 가 새로 만듭니다; 다시 '
              '그러면 위의 문제를 보거나 다시 프로비저닝하세요.'},
    'kai_not_ready': {
        'en': 'KAI component(s) not ready: {names}. Pods will not be grouped, scheduled or bound. Run ansible-playbook '
              'playbooks/provision.yml again; it restarts stopped components.',
        'ko': '준비되지 않은 KAI 구성요소: {names}. 파드가 그룹화·스케줄·바인딩되지 않습니다. ansible-playbook '
              'playbooks/provision.yml 을 다시 실행하면 멈춘 구성요소가 재시작됩니다.'},
    'runtime_class_sim': {
        'en': 'not asked on the sim: the RuntimeClass (KAI injects none there)',
        'ko': 'sim 에서는 확인하지 않음: RuntimeClass (KAI 가 주입하지 않음)'},
    'snapshot_plugin_sim': {
        'en': 'not asked on the sim: the scheduler\'s plugins (its configuration is a file provision writes without '
              'kai_scheduler_disabled_plugins; the sim\'s build of the scheduler serves plugins on 127.0.0.1)',
        'ko': 'sim 에서는 확인하지 않음: 스케줄러 플러그인 (설정은 provision 이 kai_scheduler_disabled_plugins 를 빼고 '
              '쓰는 파일; sim 빌드의 스케줄러는 127.0.0.1 에서만 플러그인을 제공)'},
    'status_updater_sim': {
        'en': 'not asked on the sim: the status-updater\'s RBAC (it is a process with the lab\'s kubeconfig; its '
              'work shows on the reservation pods)',
        'ko': 'sim 에서는 확인하지 않음: status-updater 의 RBAC (실습 kubeconfig 로 도는 프로세스; 그 결과는 예약 '
              '파드에 보입니다)'},
}


def _say(key, lang, **values):
    return say(WORDS[key], lang, **values)


def add_parsers(commands, common, lang, help_text, epilog):
    parser = commands.add_parser('doctor', parents=[common], help=_say('doctor', lang),
                                 description=_say('doctor', lang), add_help=False)
    parser.add_argument('-h', '--help', action='help', help=help_text)


def target_of(config, settings):
    """The config's target; a config without one: the sim has health URLs, k3s has none."""
    return config.get('target') or ('sim' if settings.get('health_urls') else 'k3s')


def diagnosis(settings, target, cluster=None, now=None, fake_gpu_namespace=None):
    """kai/doctor.py's diagnosis of the lab the settings name (the grade's light client); fake_gpu_namespace:
    where fake-gpu-operator runs, from the config provision wrote (None: the role's default)."""
    # Imported here: kai-lab's other verbs need neither the doctor nor the client's health probes.
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import session as grade_session
    from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import doctor
    settings = grade_session.complete(settings)
    if cluster is None:
        cluster = grade_session.connect(settings)
    return doctor.diagnose(cluster, target, settings['kai_namespace'], settings['kai_deployments'],
                           settings['health_urls'], now=now, fake_gpu_namespace=fake_gpu_namespace)


def worded(found, lang):
    return [dict(item, text=_say(item['id'], lang, **item['values'])) for item in found]


def run(settings, target, lang, out, as_json, cluster=None, now=None, fake_gpu_namespace=None):
    """kai-lab doctor; exit 0 healthy, 2 on any fault."""
    result = diagnosis(settings, target, cluster, now, fake_gpu_namespace)
    faults, notes = worded(result['faults'], lang), worded(result['notes'], lang)
    if as_json:
        out.json({'target': target, 'healthy': not faults, 'faults': faults, 'notes': notes})
    elif faults:
        out.line(_say('found', lang, count=len(faults)))
        for item in faults:
            out.line('- %s: %s' % (item['id'], item['text']))
    else:
        out.line(_say('healthy', lang))
    if not as_json:
        for item in notes:
            out.line('  (%s)' % item['text'])
    return cli_output.CANNOT_GRADE_EXIT if faults else cli_output.PASSED_EXIT
