# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's text in Korean (the lab's first language), block for block as
steps/lab_text_en.py: the same keys, placeholders and block shapes.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# One Korean term per concept, across the lab text, hints, checks and docs (tests/unit/test_korean_words.py reads
# every Korean string against it): 'use' is the term, 'not' the patterns of the other names it had. Code is
# not prose: a field path, a flag, a backticked name, a template's field ({annotation}) or a kubectl verb (kubectl
# label) keeps its name, and so does an object named after the concept (Job gang, PodGroup gang).
_WORD = r'(?<![\w./`{-])(?<!kubectl )%s(?![\w./`}-])'
GLOSSARY = {
    'annotation': {'use': '어노테이션', 'not': ['주석', _WORD % 'annotations?']},
    'label': {'use': '레이블', 'not': ['라벨', _WORD % 'labels?']},
    'admission': {'use': '어드미션', 'not': [r'입장\(admission\)', '승인 정책', _WORD % '[Aa]dmission']},
    'event': {'use': '이벤트', 'not': [_WORD % 'Events?']},
    'gang': {'use': '갱', 'not': [_WORD % '(?<!Job )(?<!PodGroup )gang(?= [가-힣])']},
}

TEXT = {
    'title': 'KAI-Scheduler 실습: 큐, 갱, 우선순위, 나눠 쓰는 GPU',
    'teaser': 'KAI-Scheduler 가 큐 트리를 세우고, 갱을 붙잡아 두고, 우선순위로 밀어내고, GPU 를 나눠 주게 하고, 왜 그렇게 '
              '결정했는지 읽습니다. {step_count_word} 단계를 하나씩 확인하며 나아갑니다.',
    'and': ',',
    'queue_root': '`{name}`: 맨 위 큐, GPU quota {quota}, GPU limit {limit}',
    'queue_child': '`{name}`: `{parent}` 의 자식 큐, GPU quota {quota}, GPU limit {limit}',
    'headings': {
        'teaches': '무엇을 하나', 'why': '왜 중요한가', 'setting': '실습 머신', 'how': '진행 방법',
        'mistakes': '흔한 실수 두 가지', 'notes': '읽을거리', 'steps': '{step_count_word} 단계',
        'task': '할 일', 'context': '무슨 일이 일어나나', 'check': '마쳤으면', 'finish': '마무리',
    },
    'step_title': '{number}단계: {title}',
    'check': '바로 확인하세요: `kai-lab check {id}` (종료 코드 0 이면 통과). 막히면 `kai-lab hint {id}`.',
    'files': '이 단계에서 만들 파일: {files}.',
    'teaches': [
        '짧은 {step_count_word} 단계에 걸쳐 KAI-Scheduler 가 내리는 핵심 결정을 하나씩 일부러 일으키고, KAI 가 그 결정을 어디에 '
        '설명해 두는지 배웁니다. quota 와 limit 을 가진 큐 계층을 세우고, KAI 가 파드에 PodGroup 을 붙이는 것을 보고, '
        'limit 없는 큐의 함정에 빠져 보고, 함께 묶인 파드들이 다 같이 기다리는 것을 보고, 높은 우선순위의 파드가 낮은 '
        '파드를 밀어내게 하고, 파드 두 개를 GPU 한 장에서 돌립니다. KAI 는 결정마다 그 이유를 PodGroup 조건과 이벤트에 '
        '문장으로 남깁니다. 그 문장을 읽는 힘이 이 실습이 기르는 기술입니다.',
    ],
    'why': [
        'GPU 는 클러스터에서 가장 비싼 자원이고, 낭비의 대부분은 두 가지에서 나옵니다. 분산 작업이 워커 일부만 받아 '
        '나머지를 기다리는 동안 이미 받은 GPU 를 놀리는 것, 그리고 작은 작업이 다 쓰지도 못할 카드 한 장을 통째로 '
        '차지하는 것입니다. 갱 스케줄링이 앞의 낭비를, GPU 쪼개기가 뒤의 낭비를 없앱니다.',
        'GPU 가 모자랄 때 누가 받을지는 quota, limit, 우선순위가 정합니다. 셋이 어떻게 맞물리는지 알면 GPU 를 나눠 '
        '쓰는 클러스터에서 늘 나오는 두 질문, 「내 학습 작업은 왜 쫓겨났나」 와 「내 작업은 왜 quota 를 넘지 못하나」 '
        '에 답할 수 있습니다. {n_nolimit}단계는 문서만 읽어서는 예상하기 어려운 동작을 보여 줍니다. 일부러 밟아 보세요.',
    ],
    'setting': [
        '실습 머신에는 노드 하나짜리 쿠버네티스 클러스터가 있고, 흉내 낸 GPU {gpus}장(fake-gpu-operator)과 '
        'KAI-Scheduler {kai_version} 버전이 올라 있습니다. 진짜 GPU 없이 GPU 나눠 쓰기가 되도록 두 가지를 미리 맞춰 '
        '두었습니다. KAI 는 GPU 예약 파드를 흉내 GPU 오퍼레이터가 찾는 네임스페이스에 두고, GPU 파드에 RuntimeClass 를 '
        '넣지 않습니다.',
        '머신 준비에는 몇 분이 걸립니다. 실습 플랫폼에서는 세션이 끝나면 머신과 파일이 사라집니다.',
    ],
    'how': [
        [
            '실습의 모든 객체는 `{namespace}` 네임스페이스에 만듭니다. KAI 자신은 `{kai_namespace}` 에서 돌아가니 그 '
            '네임스페이스는 건드리지 마세요.',
            '단계가 요구하는 파일은 `{workdir}` 에 둡니다.',
            '실습의 파드는 기다리기만 합니다. 컨테이너 하나에 이미지 `{pod_image}`, 명령 `{pod_command}` 를 주세요 '
            '(sleep 할 수 있는 이미지면 무엇이든 됩니다).',
            '단계를 마칠 때마다 곧바로 `kai-lab check <단계>` 로 확인하세요. KAI 의 대답 중에는 오래 남지 않는 것이 '
            '있습니다. 이벤트는 만료되고, PodGroup 이 배치되면 KAI 가 그 사유를 지웁니다. 제때 확인하면 KAI 의 대답이 '
            '채점 기록에 남습니다.',
            '`kai-lab task` 는 다음 할 일을, `kai-lab status` 는 진행 상황을, `kai-lab hint <단계>` 는 힌트를 '
            '보여 줍니다.',
        ],
        'KAI 의 결정은 대부분 다음 세 화면에서 보입니다.',
        {'code': ['kubectl get {queue_resource}', 'kubectl -n {namespace} get podgroups',
                  'kubectl -n {namespace} get events']},
    ],
    'mistakes': [
        [
            '`schedulerName: {scheduler}` 줄을 빠뜨리는 것. 그러면 클러스터의 기본 스케줄러가 파드를 배치하고, KAI 의 '
            '큐도 갱도 쪼개기도 전혀 적용되지 않습니다. 파드의 `schedulerName` 은 만든 뒤에는 바꿀 수 없습니다. 파드를 '
            '지우고 다시 만드세요.',
            '{n_fraction}단계에서 `{fraction_annotation}` 어노테이션으로 GPU 일부를 요청하면서 `{gpu_resource}` limits 로 '
            '통째 GPU 까지 함께 요청하는 것. KAI 의 어드미션 웹훅이 그런 파드를 거부합니다.',
        ],
    ],
    'notes': [
        '이 실습이 쓰는 버전의 KAI-Scheduler 문서입니다.',
        [
            '큐, quota, limit, 공정 분배: https://github.com/NVIDIA/KAI-Scheduler/tree/{kai_version}/docs/fairness',
            '배치 작업과 갱 스케줄링: https://github.com/NVIDIA/KAI-Scheduler/tree/{kai_version}/docs/batch',
            '우선순위와 선점: https://github.com/NVIDIA/KAI-Scheduler/tree/{kai_version}/docs/priority',
            'GPU 나눠 쓰기: https://github.com/NVIDIA/KAI-Scheduler/tree/{kai_version}/docs/gpu-sharing',
        ],
    ],
    'finish': [
        '큐, PodGroup, 갱, 우선순위, 나눠 쓰는 GPU 로 KAI 가 결정을 내리게 했고, 그 이유를 PodGroup 과 이벤트에서 '
        '읽었습니다. 단계 없이 `kai-lab check` 를 실행하면 실습 전체를 한 번 더 채점하고 결과를 파일 옆에 씁니다.',
    ],
    'forms': {
        'podgroup': {
            'heading': 'KAI-Scheduler v{job_gang_since} 이전에서는',
            'gang': {
                'summary': '함께 떠야 하는 파드 {gang_size}개와 그 PodGroup `{gang_podgroup_name}` 을 만들어 모두 Pending '
                           '에 머무는 것을 보고, KAI 의 이유를 `{gang_path}` 에 담습니다.',
                'task': [
                    'KAI-Scheduler v{job_gang_since} 이전에는 batch Job 이 갱 하나가 되지 않습니다. pod-grouper 가 Job 의 '
                    '파드마다 PodGroup 을 따로 붙입니다. 갱을 PodGroup 으로 직접 적으세요. `{namespace}` 네임스페이스에 PodGroup '
                    '{gang_podgroup_name:`을} 만들고 (apiVersion `{podgroup_api}`, kind `PodGroup`) `spec` 에 '
                    '`minMember: {gang_min_member}`, `queue: {gang_podgroup_queue}`, `priorityClassName: {gang_class}` '
                    '세 값을 적으세요.',
                    '그다음 `{namespace}` 에 {gang_pod_names} 파드를 만드세요. 파드마다 `schedulerName: {scheduler}`, '
                    '레이블 `{queue_label}: {gang_queue}`, 어노테이션 `{podgroup_annotation}: {gang_podgroup_name}` '
                    '(파드를 그 PodGroup 에 넣습니다), 이미지 `{pod_image}`, 명령 `{pod_command}`, `{gpu_resource}` '
                    'limit {gang_gpus}개를 줍니다.',
                    '지금 남은 GPU 는 {free_gpus}장뿐이라 파드 {gang_size}개 모두 Pending 이어야 합니다. PodGroup '
                    '`{gang_podgroup_name}` 의 `status.schedulingConditions` 에 있는 조건의 `message` 를 `{gang_path}` 에 '
                    '옮겨 적으세요.',
                ],
                'context': [
                    '기본 스케줄러라면 파드 {free_gpus}개를 띄우고 마지막 하나를 기다리게 했을 것이고, 먼저 뜬 파드들은 '
                    'GPU 를 쥔 채 아무 일도 못 합니다. KAI 는 구성원 {gang_min_member}개가 필요한 PodGroup 을 전부 '
                    '배치하거나 하나도 배치하지 않습니다. 막는 것은 큐가 아닙니다. `{gang_queue}` 의 limit '
                    '({gang_queue_limit})은 갱 전체가 들어갈 만큼 넉넉합니다. v{job_gang_since} 부터는 '
                    '{min_member_annotation:`을} 단 Job 이 스스로 이런 PodGroup 이 됩니다.',
                ],
            },
            'preempt': {
                'summary': '갱(PodGroup {gang_podgroup_name:`과} 그 파드들)을 지우고 {train_names} 파드(우선순위 '
                           '`{train_class}`)로 GPU 를 채운 뒤 `{build_pod}` 파드(우선순위 `{build_class}`)를 띄워 KAI 가 '
                           '학습 파드 하나를 밀어내는 것을 봅니다.',
                'task': [
                    '갱을 지우세요: {gang_pod_names} 파드와 PodGroup `{gang_podgroup_name}`. `{namespace}` '
                    '네임스페이스에 {train_names} 파드를 띄우세요. 파드마다 레이블 `{queue_label}: {train_queue}`, '
                    '`schedulerName: {scheduler}`, 이미지 `{pod_image}`, 명령 `{pod_command}`, `{gpu_resource}` limit '
                    '{train_gpus}, `priorityClassName: {train_class}` 입니다. 그러면 GPU {gpus}장이 모두 쓰입니다.',
                    '그다음 같은 방식으로 `{gpu_resource}` limit {build_gpus}, `priorityClassName: {build_class}` 인 '
                    '`{build_pod}` 파드를 띄우세요. `{build_pod}` 파드가 Running 이 되고 학습 파드 하나가 밀려나야 '
                    '합니다.',
                ],
            },
        },
    },
    'targets': {
        'sim': {
            'report': [
                'sim 에서는 노드가 흉내 낸 것이라 `kubectl exec` 로 파드 안에서 명령을 실행할 수 없습니다. `{fr1}` 파드의 '
                '`{visible_devices}` 는 컨테이너의 `env` 가 값을 가져오는 ConfigMap 에서 읽으세요 (`kubectl -n '
                '{namespace} get pod {fr1} -o yaml` 다음 `kubectl -n {namespace} get configmap <이름> -o yaml`).',
            ],
        },
        'k3s': {
            'report': [
                '실습 VM 에서는 파드에 직접 물어보세요: `kubectl -n {namespace} exec {fr1} -- printenv '
                '{visible_devices}`.',
            ],
        },
    },
    'steps': {
        'queues': {
            'summary': '{queue_names} 큐를 `{queues_path}` 파일에 적어 적용합니다.',
            'task': [
                'KAI 큐 {queue_count}개를 파일 하나 `{queues_path}` 에 적고(apiVersion `{queue_api}`, kind `Queue`, 문서 사이는 '
                '`---`) 적용하세요.',
                ['*queue_items'],
                '{queue_count}개 큐 모두 CPU 와 메모리는 quota {cpu_quota}, limit {cpu_limit} 입니다.',
            ],
            'context': [
                'KAI 큐는 그 작업들에 보장되는 GPU 수(quota)와 최대로 쓸 수 있는 GPU 수(limit)를 정합니다. 상한이 없음을 '
                '뜻하는 값은 {unlimited} 입니다. 큐는 트리를 이루고 작업은 잎 큐에만 들어갑니다. {leaf_names} 큐가 작업을 받고, '
                '{parent_names} 큐는 자기 GPU 를 그 큐들에 나눠 줄 뿐입니다. 파드는 `{queue_label}` 레이블로 자기 큐를 '
                '밝힙니다.',
            ],
        },
        'podgroup': {
            'summary': '`{p1}` 파드를 `{p1_path}` 파일로 KAI 에 맡겨 띄우고, 그 PodGroup 이름을 `{podgroup_path}` 에 '
                       '적습니다.',
            'task': [
                '`{p1}` 파드를 `{p1_path}` 파일에 적으세요. 네임스페이스 `{namespace}`, `schedulerName: {scheduler}`, 레이블 '
                '`{queue_label}: {research}`, 컨테이너 하나에 이미지 `{pod_image}`, 명령 `{pod_command}`, '
                '`{gpu_resource}` limit {p1_gpus} 입니다. 적용한 뒤 Running 이 될 때까지 기다리세요.',
                '그다음 KAI 가 `{p1}` 파드에 만들어 준 PodGroup 을 찾아 그 이름을 한 줄로 `{podgroup_path}` 에 적으세요.',
            ],
            'context': [
                'KAI 는 파드 하나하나가 아니라 PodGroup 을 스케줄링합니다. pod-grouper 가 파드마다(또는 그 파드를 가진 '
                'Job 같은 워크로드마다) PodGroup 을 붙이고, PodGroup 이름을 파드의 `{podgroup_annotation}` 어노테이션에 '
                '적습니다. 혼자 뜬 파드는 구성원 하나짜리 그룹입니다.',
            ],
        },
        'nolimit': {
            'summary': 'GPU limit 없는 `{nolimit}` 큐에 `{nl1}` 파드를 넣고, KAI 가 그 파드를 Pending 으로 두는 이유를 '
                       '`{nolimit_path}` 에 담습니다.',
            'task': [
                '`{nolimit_parent}` 아래에 GPU quota 를 {nolimit_quota:으로} 두고 GPU limit 은 아예 적지 않은 `{nolimit}` '
                '큐를 만드세요. CPU 와 메모리는 다른 큐와 같이 quota {nolimit_cpu_quota}, limit {nolimit_cpu_limit} '
                '입니다. `{namespace}` 네임스페이스에 `{p1}` 처럼 `{nl1}` 파드를 넣으세요. 큐는 `{nl1_queue}` (레이블 '
                '`{queue_label}: {nl1_queue}`), `schedulerName: {scheduler}`, 이미지 `{pod_image}`, 명령 '
                '`{pod_command}`, `{gpu_resource}` limit {nl1_gpus} 입니다. quota 로는 충분한데도 `{nl1}` 파드는 '
                'Pending 에 머뭅니다.',
                'KAI 는 그 이유를 `{nl1}` 파드의 PodGroup 의 `status.schedulingConditions` 에 적습니다. 그 조건의 '
                '`message` (문장 전체)를 `{nolimit_path}` 에 옮겨 적으세요.',
            ],
            'context': [
                '이 실습의 함정입니다. limit 이 없는 큐는 무제한처럼 보이지만 KAI 는 비어 있는 limit 을 0 으로 읽으므로 '
                '`{nolimit}` 에서는 아무것도 돌 수 없습니다. 이유의 첫 단어는 `{over_limit}` 입니다. `{nl1}` 파드가 '
                'Pending 인 동안 옮겨 적으세요. 파드가 배치되면 KAI 가 그 조건을 지웁니다.',
            ],
        },
        'limit_fix': {
            'summary': '`{nolimit}` 큐의 GPU limit 만 {limit_value:으로} 바꿔 `{nl1}` 파드가 돌게 합니다.',
            'task': [
                '`kubectl patch` 로 `{nolimit}` 큐의 `{limit_path}` 만 {limit_value:으로} 바꾸세요. 다른 것은 그대로 '
                '둡니다. 그러면 `{nl1}` 파드가 Running 이 되어야 합니다.',
            ],
            'context': [
                'KAI 에서 「상한 없음」 을 뜻하는 값이 {unlimited} 입니다. 변경은 다음 스케줄링 주기, 몇 초 안에 반영되고 '
                '`{nl1}` 파드를 다시 만들 필요는 없습니다.',
            ],
        },
        'gang': {
            'summary': '함께 떠야 하는 파드 {gang_size}개짜리 `{gang}` Job 을 넣어 모두 Pending 에 머무는 것을 보고, '
                       'KAI 의 이유를 `{gang_path}` 에 담습니다.',
            'task': [
                '`{namespace}` 네임스페이스에 parallelism {gang_size} 인 `{gang}` Job 을 만들고, Job 에 '
                '`{min_member_annotation}: "{min_member}"` 어노테이션을 답니다. 레이블 `{queue_label}: {gang_queue}` 는 '
                'Job 과 파드 템플릿 양쪽에 답니다. 파드는 `schedulerName: {scheduler}`, 이미지 `{pod_image}`, 명령 '
                '`{pod_command}`, `restartPolicy: Never`, 파드마다 `{gpu_resource}` limit {gang_gpus} 입니다.',
                '지금 남은 GPU 는 {free_gpus}장뿐이라 파드 {gang_size}개 모두 Pending 이어야 합니다. 갱의 PodGroup 의 '
                '`status.schedulingConditions` 에 있는 조건의 `message` 를 `{gang_path}` 에 옮겨 적으세요.',
            ],
            'context': [
                '기본 스케줄러라면 파드 {free_gpus}개를 띄우고 마지막 하나를 기다리게 했을 것이고, 먼저 뜬 파드들은 '
                'GPU 를 쥔 채 아무 일도 못 합니다. KAI 는 Job 을 구성원 {min_member}개가 필요한 PodGroup 하나로 보고 '
                '전부 배치하거나 하나도 배치하지 않습니다. 막는 것은 큐가 아닙니다. `{gang_queue}` 의 limit '
                '({gang_queue_limit})은 갱 전체가 들어갈 만큼 넉넉합니다.',
            ],
        },
        'preempt': {
            'summary': '`{gang}` Job 을 지우고 {train_names} 파드(우선순위 `{train_class}`)로 GPU 를 채운 뒤 '
                       '`{build_pod}` 파드(우선순위 `{build_class}`)를 띄워 KAI 가 학습 파드 하나를 밀어내는 것을 봅니다.',
            'task': [
                '`{gang}` Job 을 지우세요. `{namespace}` 네임스페이스에 {train_names} 파드를 띄우세요. 파드마다 레이블 '
                '`{queue_label}: {train_queue}`, `schedulerName: {scheduler}`, 이미지 `{pod_image}`, 명령 '
                '`{pod_command}`, `{gpu_resource}` limit {train_gpus}, `priorityClassName: {train_class}` 입니다. 그러면 '
                'GPU {gpus}장이 모두 쓰입니다.',
                '그다음 같은 방식으로 `{gpu_resource}` limit {build_gpus}, `priorityClassName: {build_class}` 인 '
                '`{build_pod}` 파드를 띄우세요. `{build_pod}` 파드가 Running 이 되고 학습 파드 하나가 밀려나야 합니다.',
            ],
            'context': [
                '누가 양보할지는 우선순위가 정합니다. `{build_class}` ({build_priority}) 파드는 선점당하지 않는 대신 큐의 '
                'quota 안에서만 돕니다. `{train_class}` ({train_priority}) 파드는 선점될 수 있으므로 quota 를 넘어 GPU 를 '
                '빌려 쓰고 나중에 돌려줍니다. KAI 는 밀어낸 파드와 자리를 만들어 준 PodGroup 을 적은 `Evict` 이벤트로 '
                '이를 기록합니다.',
            ],
        },
        'fraction': {
            'summary': '남은 학습 파드를 지우고, GPU 의 {fraction} 씩 요청하는 {fraction_names} 파드를 '
                       '`{fraction_path}` 파일로 띄워 GPU 한 장을 나눠 쓰게 합니다.',
            'task': [
                '아직 도는 학습 파드({train_names} 가운데 KAI 가 밀어내지 않은 것)를 지워 GPU 한 장을 비우세요. '
                '{fraction_names} 파드를 `{fraction_path}` 파일에 적어 적용하세요. 파드마다 `{namespace}` 네임스페이스, '
                '어노테이션 `{fraction_annotation}: "{fraction}"`, 레이블 `{queue_label}: {fraction_queue}`, '
                '`schedulerName: {scheduler}`, 이미지 `{pod_image}`, 명령 `{pod_command}` 이고 resources 에 '
                '`{gpu_resource}` 는 없습니다. 두 파드가 같은 GPU 에서 돌아야 합니다.',
            ],
            'context': [
                'GPU 일부는 어노테이션으로 요청하고, `{gpu_resource}` limits 와 함께 쓰지 않습니다. KAI 는 두 파드를 한 카드에 '
                '두고 `{reservation_ns}` 의 예약 파드로 그 카드를 잡아 둡니다. 예약 파드는 노드에서 GPU 한 장으로 '
                '셈해지고, 두 파드는 같은 장치를 받습니다.',
            ],
        },
        'report': {
            'summary': '{report_names} 값을 클러스터에서 구해 `{report_path}` 파일에 적습니다.',
            'task': [
                '지금 누가 GPU 를 쥐고 있는지 알아내어 키 {report_count}개를 가진 JSON 객체를 `{report_path}` 에 적으세요.',
                [
                    '`{report_keys[0]}`: 모든 네임스페이스에서 노드에 배치된 Pending·Running 파드의 `{gpu_resource}` '
                    'limits 합',
                    '`{report_keys[1]}`: `{reservation_ns}` 에 있는 파드 수',
                    '`{report_keys[2]}`: `{fr1}` 파드가 받은 `{visible_devices}` 값',
                ],
            ],
            'context': [
                '쪼갠 파드에는 `{gpu_resource}` limits 가 없어서 노드의 GPU 장부에 나타나지 않습니다. 그 자리에 예약 '
                '파드가 나눠 쓰는 카드를 GPU 한 장으로 쥐고 있습니다.',
            ],
        },
    },
}
