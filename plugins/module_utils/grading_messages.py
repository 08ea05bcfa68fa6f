# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Words of the grader, in Korean (the lab's language) and English.

Keyed by check id, then 'desc' (what the check looks at), 'fail' and 'hint';
further keys name specific mistakes. Messages are str.format templates.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

M = {
    # ---------------------------------------------------------------- common
    '_unverified': {
        'en': 'Could not be verified: {why}',
        'ko': '확인할 수 없습니다: {why}',
    },
    '_cluster': {
        'en': 'The cluster could not be read: {error}',
        'ko': '클러스터를 읽을 수 없습니다: {error}',
    },
    '_cluster_hint': {
        'en': 'Start the lab (ansible-playbook playbooks/provision.yml) and grade again.',
        'ko': '실습 환경을 시작한 뒤(ansible-playbook playbooks/provision.yml) 다시 채점하세요.',
    },
    '_timeout': {
        'en': 'Not checked: grading ran out of its {seconds} s time limit.',
        'ko': '확인하지 못했습니다: 채점 제한 시간 {seconds}초를 넘었습니다.',
    },
    '_file_missing': {
        'en': '{file} does not exist in {workdir}.',
        'ko': '{workdir} 에 {file} 파일이 없습니다.',
    },
    '_file_unreadable': {
        'en': '{file} cannot be read as {fmt}: {error}',
        'ko': '{file} 을(를) {fmt}(으)로 읽을 수 없습니다: {error}',
    },
    '_wrong_namespace': {
        'en': '{kind} {name} is in namespace {found}, but the lab works in {namespace}.',
        'ko': '{kind} {name} 이(가) {found} 네임스페이스에 있습니다. 실습은 {namespace} 네임스페이스에서 합니다.',
    },
    '_wrong_namespace_hint': {
        'en': 'Delete it there and create it again with metadata.namespace: {namespace} (or kubectl -n {namespace}).',
        'ko': '그곳의 객체를 지우고 metadata.namespace: {namespace} 로(또는 kubectl -n {namespace}) 다시 만드세요.',
    },
    '_default_scheduler': {
        'en': 'Pod {name} was placed by {scheduler}, not KAI: spec.schedulerName is missing, so no queue, gang or fraction applies.',
        'ko': '{name} 파드를 KAI가 아닌 {scheduler} 가 배치했습니다: spec.schedulerName 이 빠져 큐, 갱, 분할 GPU가 적용되지 않습니다.',
    },
    '_default_scheduler_hint': {
        'en': 'Add "schedulerName: kai-scheduler" under spec, delete the pod and create it again.',
        'ko': 'spec 아래에 "schedulerName: kai-scheduler" 를 넣고 파드를 지운 뒤 다시 만드세요.',
    },
    # ---------------------------------------------------------------- environment
    'environment.kai_components': {
        'desc': {'en': 'KAI-Scheduler components are running', 'ko': 'KAI-Scheduler 구성요소가 실행 중'},
        'fail': {'en': 'KAI component(s) not running: {names}. Pods will not be grouped, scheduled or bound.',
                 'ko': '실행되지 않는 KAI 구성요소: {names}. 파드가 그룹화·스케줄·바인딩되지 않습니다.'},
        'hint': {'en': 'Run ansible-playbook playbooks/provision.yml again; it restarts stopped components.',
                 'ko': 'ansible-playbook playbooks/provision.yml 을 다시 실행하면 멈춘 구성요소가 재시작됩니다.'},
    },
    # ---------------------------------------------------------------- step 1
    'queues.file': {
        'desc': {'en': 'queues.yaml holds three Queue objects', 'ko': 'queues.yaml 에 Queue 객체 세 개'},
        'fail': {'en': 'queues.yaml: {problem}', 'ko': 'queues.yaml: {problem}'},
        'hint': {'en': 'Write lab, research and ops as apiVersion scheduling.run.ai/v2, kind Queue, separated by ---.',
                 'ko': 'lab, research, ops 를 apiVersion scheduling.run.ai/v2, kind Queue 로 --- 로 구분해 작성하세요.'},
    },
    'queues.hierarchy': {
        'desc': {'en': 'queues.yaml has the right parents, GPU quotas and limits',
                 'ko': 'queues.yaml 의 부모 큐, GPU quota, limit 이 맞음'},
        'fail': {'en': 'queues.yaml: {problem}', 'ko': 'queues.yaml: {problem}'},
        'hint': {'en': 'lab: quota 4, limit -1; research: parentQueue lab, quota 2, limit 4; ops: parentQueue lab, quota 2, '
                       'limit -1; cpu and memory quota -1, limit -1.',
                 'ko': 'lab: quota 4, limit -1; research: parentQueue lab, quota 2, limit 4; ops: parentQueue lab, '
                       'quota 2, limit -1; cpu, memory 는 quota -1, limit -1.'},
        'unset_limit': {'en': 'queue {name} has no gpu limit; KAI reads an unset limit as 0, so nothing can run in it',
                        'ko': '{name} 큐에 gpu limit 이 없습니다. KAI는 비어 있는 limit 을 0으로 읽어 아무것도 실행되지 않습니다'},
    },
    'queues.applied': {
        'desc': {'en': 'The three queues are applied to the cluster as written',
                 'ko': '세 큐가 파일대로 클러스터에 적용됨'},
        'fail': {'en': '{problem}', 'ko': '{problem}'},
        'hint': {'en': 'kubectl apply -f /root/gsb-kai/queues.yaml', 'ko': 'kubectl apply -f /root/gsb-kai/queues.yaml'},
    },
    # ---------------------------------------------------------------- step 2
    'podgroup.manifest': {
        'desc': {'en': 'p1.yaml asks KAI for 1 GPU in queue research', 'ko': 'p1.yaml 이 research 큐에서 KAI에 GPU 1개를 요청'},
        'fail': {'en': 'p1.yaml: {problem}', 'ko': 'p1.yaml: {problem}'},
        'hint': {'en': 'Pod p1 in kai-lab: spec.schedulerName kai-scheduler, label kai.scheduler/queue: research, '
                       'limits nvidia.com/gpu: 1.',
                 'ko': 'kai-lab 의 p1 파드: spec.schedulerName kai-scheduler, 레이블 kai.scheduler/queue: research, '
                       'limits nvidia.com/gpu: 1.'},
    },
    'podgroup.running': {
        'desc': {'en': 'p1 runs, placed by KAI', 'ko': 'p1 이 KAI로 배치되어 실행 중'},
        'fail': {'en': 'p1: {problem}', 'ko': 'p1: {problem}'},
        'hint': {'en': 'kubectl -n kai-lab describe pod p1 shows why; see the PodGroup with kubectl -n kai-lab get podgroups.',
                 'ko': 'kubectl -n kai-lab describe pod p1 로 이유를 보고 kubectl -n kai-lab get podgroups 로 PodGroup을 확인하세요.'},
        'evicted': {'en': 'p1 ran through KAI and was later evicted by KAI in step 6 ({message})',
                    'ko': 'p1 은 KAI로 실행되었고 6단계에서 KAI가 밀어냈습니다 ({message})'},
    },
    'podgroup.file': {
        'desc': {'en': 'podgroup.txt names p1\'s PodGroup', 'ko': 'podgroup.txt 가 p1 의 PodGroup 이름'},
        'fail': {'en': 'podgroup.txt: {problem}', 'ko': 'podgroup.txt: {problem}'},
        'hint': {'en': "kubectl -n kai-lab get pod p1 -o jsonpath='{{.metadata.annotations.pod-group-name}}' > podgroup.txt",
                 'ko': "kubectl -n kai-lab get pod p1 -o jsonpath='{{.metadata.annotations.pod-group-name}}' > podgroup.txt"},
    },
    # ---------------------------------------------------------------- step 3
    'nolimit.queue': {
        'desc': {'en': 'Queue nolimit under lab with GPU quota 1', 'ko': 'lab 아래 GPU quota 1 인 nolimit 큐'},
        'fail': {'en': 'queue nolimit: {problem}', 'ko': 'nolimit 큐: {problem}'},
        'hint': {'en': 'Create Queue nolimit with parentQueue lab and resources.gpu.quota 1 and no limit.',
                 'ko': 'parentQueue lab, resources.gpu.quota 1, limit 없이 nolimit 큐를 만드세요.'},
    },
    'nolimit.reason': {
        'desc': {'en': 'nolimit.txt holds KAI\'s OverLimit reason for nl-1', 'ko': 'nolimit.txt 에 nl-1 에 대한 KAI의 OverLimit 이유'},
        'fail': {'en': 'nolimit.txt: {problem}', 'ko': 'nolimit.txt: {problem}'},
        'hint': {'en': 'While nl-1 is Pending: kubectl -n kai-lab get podgroup <nl-1\'s PodGroup> -o yaml, copy '
                       'status.schedulingConditions[0].message (it starts with OverLimit).',
                 'ko': 'nl-1 이 Pending 일 때 kubectl -n kai-lab get podgroup <nl-1 의 PodGroup> -o yaml 에서 '
                       'status.schedulingConditions[0].message (OverLimit 으로 시작) 를 복사하세요.'},
    },
    # ---------------------------------------------------------------- step 4
    'limit_fix.queue': {
        'desc': {'en': 'nolimit\'s GPU limit patched to -1, nothing else changed', 'ko': 'nolimit 의 GPU limit 만 -1 로 patch'},
        'fail': {'en': 'queue nolimit: {problem}', 'ko': 'nolimit 큐: {problem}'},
        'hint': {'en': "kubectl patch queue nolimit --type merge -p '{{\"spec\":{{\"resources\":{{\"gpu\":{{\"limit\":-1}}}}}}}}'",
                 'ko': "kubectl patch queue nolimit --type merge -p '{{\"spec\":{{\"resources\":{{\"gpu\":{{\"limit\":-1}}}}}}}}'"},
    },
    'limit_fix.running': {
        'desc': {'en': 'nl-1 runs after the fix', 'ko': '수정 후 nl-1 실행 중'},
        'fail': {'en': 'nl-1: {problem}', 'ko': 'nl-1: {problem}'},
        'hint': {'en': 'After the patch KAI places nl-1 in its next cycle; kubectl -n kai-lab get pod nl-1 -w.',
                 'ko': 'patch 후 다음 스케줄링 주기에 배치됩니다. kubectl -n kai-lab get pod nl-1 -w 로 확인하세요.'},
    },
    # ---------------------------------------------------------------- step 5
    'gang.reason': {
        'desc': {'en': 'gang.txt holds KAI\'s gang reason (2 found, 3 required)',
                 'ko': 'gang.txt 에 KAI의 갱 이유 (2개 찾음, 3개 필요)'},
        'fail': {'en': 'gang.txt: {problem}', 'ko': 'gang.txt: {problem}'},
        'hint': {'en': 'With the three gang pods Pending, copy the PodGroup\'s status.schedulingConditions[0].message '
                       '("... required for gang scheduling").',
                 'ko': '갱 파드 세 개가 Pending 일 때 PodGroup 의 status.schedulingConditions[0].message '
                       '("... required for gang scheduling") 를 복사하세요.'},
    },
    # ---------------------------------------------------------------- step 6
    'preempt.build_running': {
        'desc': {'en': 'bd-1 (priority build) runs in queue research', 'ko': 'bd-1 (build 우선순위) 이 research 큐에서 실행 중'},
        'fail': {'en': 'bd-1: {problem}', 'ko': 'bd-1: {problem}'},
        'hint': {'en': 'Pod bd-1: priorityClassName build, 1 GPU, queue research, schedulerName kai-scheduler.',
                 'ko': 'bd-1 파드: priorityClassName build, GPU 1개, research 큐, schedulerName kai-scheduler.'},
    },
    'preempt.evicted': {
        'desc': {'en': 'KAI evicted one train pod of research for bd-1', 'ko': 'KAI가 bd-1 을 위해 research 의 train 파드 하나를 밀어냄'},
        'fail': {'en': '{problem}', 'ko': '{problem}'},
        'hint': {'en': 'tr-1 and tr-2 (priorityClassName train) must fill all 4 GPUs before bd-1 is created.',
                 'ko': 'bd-1 을 만들기 전에 tr-1, tr-2 (priorityClassName train) 로 GPU 4개를 모두 채워야 합니다.'},
    },
    # ---------------------------------------------------------------- step 7
    'fraction.manifest': {
        'desc': {'en': 'fraction.yaml: fr-1 and fr-2 with gpu-fraction 0.5 and no GPU limits',
                 'ko': 'fraction.yaml: gpu-fraction 0.5, GPU limit 없는 fr-1, fr-2'},
        'fail': {'en': 'fraction.yaml: {problem}', 'ko': 'fraction.yaml: {problem}'},
        'hint': {'en': 'Annotation gpu-fraction: "0.5", schedulerName kai-scheduler, queue research, and no nvidia.com/gpu '
                       'under resources.',
                 'ko': 'annotation gpu-fraction: "0.5", schedulerName kai-scheduler, research 큐, resources 에 '
                       'nvidia.com/gpu 없이 작성하세요.'},
        'both': {'en': 'pod {name} has both the gpu-fraction annotation and nvidia.com/gpu limits; KAI\'s admission '
                       'webhook rejects it ("{denial}")',
                 'ko': '{name} 파드에 gpu-fraction annotation 과 nvidia.com/gpu limits 가 함께 있습니다. KAI admission '
                       '웹훅이 거부합니다 ("{denial}")'},
    },
    'fraction.shared': {
        'desc': {'en': 'fr-1 and fr-2 run on one GPU held by one reservation pod',
                 'ko': 'fr-1, fr-2 가 예약 파드 하나가 잡은 GPU 하나에서 실행 중'},
        'fail': {'en': '{problem}', 'ko': '{problem}'},
        'hint': {'en': 'Free one GPU first (delete the remaining train pod), then kubectl apply -f fraction.yaml.',
                 'ko': '먼저 남은 train 파드를 지워 GPU 하나를 비운 뒤 kubectl apply -f fraction.yaml 하세요.'},
    },
    # ---------------------------------------------------------------- step 8
    'report.file': {
        'desc': {'en': 'report.json has the three keys', 'ko': 'report.json 에 세 키'},
        'fail': {'en': 'report.json: {problem}', 'ko': 'report.json: {problem}'},
        'hint': {'en': 'A JSON object with gpu_allocated (number), reservation_pods (number) and shared_gpu (string).',
                 'ko': 'gpu_allocated(숫자), reservation_pods(숫자), shared_gpu(문자열) 를 가진 JSON 객체.'},
    },
    'report.values': {
        'desc': {'en': 'report.json values equal what the cluster shows now', 'ko': 'report.json 값이 지금 클러스터와 같음'},
        'fail': {'en': 'report.json: {problem}', 'ko': 'report.json: {problem}'},
        'hint': {'en': 'Compute each value from this cluster with kubectl (all namespaces for gpu_allocated) and write it again.',
                 'ko': '이 클러스터에서 kubectl 로 각 값을 다시 계산해 작성하세요 (gpu_allocated 는 모든 네임스페이스).'},
        'copied': {'en': 'shared_gpu is {claimed} but fr-1 received {actual}: this report.json was not computed from this cluster',
                   'ko': 'shared_gpu 가 {claimed} 이지만 fr-1 이 받은 값은 {actual} 입니다: 이 클러스터에서 계산한 report.json 이 아닙니다'},
    },
}


def text(key, lang, part=None, **values):
    """The message for key (and part) in lang, filled with values."""
    entry = M[key]
    if part:
        entry = entry[part]
    template = entry.get(lang) or entry['en']
    try:
        return template.format(**values)
    except (KeyError, IndexError):
        return template
