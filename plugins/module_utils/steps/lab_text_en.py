# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's text in English: what it teaches and why, the tasks, the
two common mistakes and the notes, as templates.

Every name and number is a {placeholder} that steps/lab_values.py fills from
the steps; `backticks` mark code. A block is a paragraph (a string), a list
(a list of strings; '*name' stands for the items of the list value name) or
a code block ({'code': [lines]}). steps/lab_text.py renders them.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

TEXT = {
    'title': 'The KAI-Scheduler lab: queues, gangs, priorities and shared GPUs',
    'teaser': 'Make KAI-Scheduler build a queue tree, hold a gang, evict for priority and share a GPU, and read '
              'why it decided so, in {step_count_word} steps each checked as you go.',
    'and': 'and',
    'queue_root': '`{name}`: a top-level queue with GPU quota {quota} and GPU limit {limit}',
    'queue_child': '`{name}`: a child of `{parent}` with GPU quota {quota} and GPU limit {limit}',
    'headings': {
        'teaches': 'What you do', 'why': 'Why it matters', 'setting': 'The lab machine', 'how': 'How you work',
        'mistakes': 'Two common mistakes', 'notes': 'Notes to read', 'steps': 'The {step_count_word} steps',
        'task': 'Your task', 'context': 'What is going on', 'check': 'When you are done', 'finish': 'Done',
    },
    'step_title': 'Step {number}: {title}',
    'check': 'Check the step right away: `kai-lab check {id}` (exit code 0 means passed). Stuck? `kai-lab hint {id}`.',
    'files': 'Files this step asks for: {files}.',
    'teaches': [
        'In {step_count_word} short steps you make KAI-Scheduler take each of its central decisions on purpose, and you learn '
        'where it explains them: you build a hierarchy of queues with quotas and limits, watch KAI give a pod its '
        'PodGroup, walk into the trap of a queue without a limit, see a gang of pods wait together, let a pod of '
        'high priority push out one of lower priority, and run two pods on one GPU. KAI writes the reason for '
        'every decision into PodGroup conditions and Events; reading those sentences is the skill this lab trains.',
    ],
    'why': [
        'GPUs are the costly part of a cluster, and two patterns waste most of them: a distributed job that gets '
        'only some of its workers and keeps their GPUs busy doing nothing while it waits for the rest, and a small '
        'job that occupies a whole card it cannot fill. Gang scheduling removes the first, GPU fractions the second.',
        'When GPUs run short, quotas, limits and priorities decide who gets them. Knowing how they work together '
        'answers the two questions every shared GPU cluster hears: why was my training job evicted, and why can my '
        'job not go beyond its quota? Step {n_nolimit} shows a behaviour the documentation leads few people to '
        'expect; walk into it on purpose.',
    ],
    'setting': [
        'The lab machine runs a one-node Kubernetes cluster with {gpus} simulated GPUs (fake-gpu-operator) and '
        'KAI-Scheduler {kai_version}. Two settings let GPU sharing work without real GPUs, and are in place for you: '
        'KAI keeps its GPU reservation pods in the namespace where the simulated GPU operator looks for them, and '
        'KAI does not add a RuntimeClass to GPU pods.',
        'Setting the machine up takes a few minutes. On a lab platform the machine and your files are gone when the '
        'session ends.',
    ],
    'how': [
        [
            'Create every object of the lab in namespace `{namespace}`. KAI itself runs in `{kai_namespace}`: leave '
            'that namespace alone.',
            'Keep the files the steps ask for in `{workdir}`.',
            'The lab\'s pods only wait: give each one container with the image `{pod_image}` and the command '
            '`{pod_command}` (any image that can sleep would do).',
            'Check each step as soon as it is done with `kai-lab check <step>`. Some of KAI\'s answers do not last: '
            'Events expire, and KAI clears a PodGroup\'s reason once the PodGroup is placed. A check made in time keeps '
            'KAI\'s answer in the grader\'s record.',
            '`kai-lab task` prints the next task, `kai-lab status` shows where you are, `kai-lab hint <step>` gives '
            'hints.',
        ],
        'Three views show most of what KAI decides:',
        {'code': ['kubectl get {queue_resource}', 'kubectl -n {namespace} get podgroups',
                  'kubectl -n {namespace} get events']},
    ],
    'mistakes': [
        [
            'Leaving out `schedulerName: {scheduler}`. The cluster\'s default scheduler then places the pod, and none '
            'of KAI\'s queues, gangs or fractions apply to it. A pod\'s `schedulerName` cannot be changed once it '
            'is created: delete the pod and create it again.',
            'In step {n_fraction}, asking for a fraction with the `{fraction_annotation}` annotation and also for '
            'whole GPUs with `{gpu_resource}` limits. KAI\'s admission webhook rejects such a pod.',
        ],
    ],
    'notes': [
        'KAI-Scheduler\'s own documentation for the version this lab runs:',
        [
            'Queues, quotas, limits and fairness: https://github.com/NVIDIA/KAI-Scheduler/tree/{kai_version}/docs/fairness',
            'Batch jobs and gang scheduling: https://github.com/NVIDIA/KAI-Scheduler/tree/{kai_version}/docs/batch',
            'Priorities and preemption: https://github.com/NVIDIA/KAI-Scheduler/tree/{kai_version}/docs/priority',
            'GPU sharing: https://github.com/NVIDIA/KAI-Scheduler/tree/{kai_version}/docs/gpu-sharing',
        ],
    ],
    'finish': [
        'You have made KAI decide with queues, PodGroups, a gang, priorities and a shared GPU, and read its reasons '
        'in PodGroups and Events. `kai-lab check` without a step grades the whole lab once more and writes the '
        'grade next to your files.',
    ],
    # Where the KAI that runs differs from the lab text's (steps/gang.py's forms): these replace a step's words.
    'forms': {
        'podgroup': {
            'heading': 'On KAI-Scheduler before v{job_gang_since}',
            'gang': {
                'summary': 'Create PodGroup `{gang_podgroup_name}` and its {gang_size} pods, which must start '
                           'together, see all of them stay Pending, and save KAI\'s reason to `{gang_path}`.',
                'task': [
                    'Before KAI-Scheduler v{job_gang_since} a batch Job is not one gang: the pod-grouper gives each '
                    'pod of a Job a PodGroup of its own. Write the gang as a PodGroup of your own. Create PodGroup `{gang_podgroup_name}` in namespace '
                    '`{namespace}` (apiVersion `{podgroup_api}`, kind `PodGroup`) with `minMember: '
                    '{gang_min_member}`, `queue: {gang_podgroup_queue}` and `priorityClassName: {gang_class}` under '
                    '`spec`.',
                    'Then create pods {gang_pod_names} in `{namespace}`, each with `schedulerName: {scheduler}`, the '
                    'label `{queue_label}: {gang_queue}`, the annotation `{podgroup_annotation}: {gang_podgroup_name}` '
                    '(it puts the pod in that PodGroup), the image `{pod_image}`, the command `{pod_command}` and a '
                    'limit of {gang_gpus} `{gpu_resource}`.',
                    'Only {free_gpus} GPUs are free now, so all {gang_size} pods must stay Pending. Copy the `message` '
                    'of the condition in `status.schedulingConditions` of PodGroup `{gang_podgroup_name}` into '
                    '`{gang_path}`.',
                ],
                'context': [
                    'The default scheduler would start {free_gpus} of the pods and leave the last one waiting, while '
                    'the others hold their GPUs for nothing. KAI places a PodGroup that needs {gang_min_member} '
                    'members all at once or not at all. The queue is not what stops them: the limit of '
                    '`{gang_queue}` ({gang_queue_limit}) leaves room for the whole gang. On v{job_gang_since} and '
                    'later, a Job with `{min_member_annotation}` becomes such a PodGroup by itself.',
                ],
            },
            'preempt': {
                'summary': 'Delete the gang (PodGroup `{gang_podgroup_name}` and its pods), fill the GPUs with '
                           '{train_names} (priority `{train_class}`), then run `{build_pod}` (priority '
                           '`{build_class}`) and see KAI evict a training pod.',
                'task': [
                    'Delete the gang: pods {gang_pod_names} and PodGroup `{gang_podgroup_name}`. Run pods '
                    '{train_names} in namespace `{namespace}`, each with the label `{queue_label}: {train_queue}`, '
                    '`schedulerName: {scheduler}`, the image `{pod_image}`, the command `{pod_command}`, a limit of '
                    '{train_gpus} `{gpu_resource}` and `priorityClassName: {train_class}`: with them, all {gpus} GPUs '
                    'are in use.',
                    'Then run pod `{build_pod}` the same way, with a limit of {build_gpus} `{gpu_resource}` and '
                    '`priorityClassName: {build_class}`. `{build_pod}` must become Running, and one training pod must '
                    'be evicted.',
                ],
            },
        },
    },
    # What differs on a target: appended to a step's task there (the docs show every target's).
    'targets': {
        'sim': {
            'report': [
                'On the sim the nodes are simulated and `kubectl exec` does not run a command in a pod: read '
                '`{visible_devices}` of `{fr1}` from the ConfigMap its container\'s `env` takes it from '
                '(`kubectl -n {namespace} get pod {fr1} -o yaml`, then `kubectl -n {namespace} get configmap <name> '
                '-o yaml`).',
            ],
        },
        'k3s': {
            'report': [
                'On the lab VM, ask the pod itself: `kubectl -n {namespace} exec {fr1} -- printenv '
                '{visible_devices}`.',
            ],
        },
    },
    'steps': {
        'queues': {
            'summary': 'Write `{queues_path}` with the queues {queue_names} and apply it.',
            'task': [
                'Describe {queue_count} KAI queues in one file, `{queues_path}` (apiVersion `{queue_api}`, kind `Queue`, '
                'the documents separated by `---`), and apply it:',
                ['*queue_items'],
                'On all {queue_count}, CPU and memory get quota {cpu_quota} and limit {cpu_limit}.',
            ],
            'context': [
                'A KAI queue states how many GPUs its workloads are guaranteed (the quota) and how many they may use '
                'at most (the limit); {unlimited} means no limit. Queues form a tree, and workloads go only to the '
                'leaves: {leaf_names} take work, {parent_names} only shares its GPUs among them. A pod names its '
                'queue with the label `{queue_label}`.',
            ],
        },
        'podgroup': {
            'summary': 'Run pod `{p1}` through KAI from `{p1_path}` and write the name of its PodGroup to '
                       '`{podgroup_path}`.',
            'task': [
                'Write pod `{p1}` in `{p1_path}`: namespace `{namespace}`, `schedulerName: {scheduler}`, the label '
                '`{queue_label}: {research}`, one container with the image `{pod_image}`, the command '
                '`{pod_command}` and a limit of {p1_gpus} `{gpu_resource}`. Apply it and wait until it is Running.',
                'Then find the PodGroup KAI made for `{p1}` and write its name, on one line, to `{podgroup_path}`.',
            ],
            'context': [
                'KAI schedules PodGroups, not single pods. Its pod-grouper gives every pod (or the workload that owns '
                'it, such as a Job) a PodGroup and writes the PodGroup\'s name into the pod\'s `{podgroup_annotation}` '
                'annotation. A lone pod is a group of one.',
            ],
        },
        'nolimit': {
            'summary': 'Create queue `{nolimit}` without a GPU limit, run `{nl1}` in it and save KAI\'s reason for '
                       'keeping it Pending to `{nolimit_path}`.',
            'task': [
                'Add a queue `{nolimit}` under `{nolimit_parent}` with GPU quota {nolimit_quota} and no GPU limit: '
                'leave the field out. CPU and memory as on the other queues: quota {nolimit_cpu_quota}, limit '
                '{nolimit_cpu_limit}. Run pod `{nl1}` in namespace `{namespace}` as you wrote `{p1}`, in queue '
                '`{nl1_queue}` (the label `{queue_label}: {nl1_queue}`), with `schedulerName: {scheduler}`, the image '
                '`{pod_image}`, the command `{pod_command}` and a limit of {nl1_gpus} `{gpu_resource}`. It stays '
                'Pending although the quota covers it.',
                'KAI gives its reason in the `status.schedulingConditions` of `{nl1}`\'s PodGroup: copy that condition\'s '
                '`message` (the whole sentence) into `{nolimit_path}`.',
            ],
            'context': [
                'This is the lab\'s trap. A queue without a limit looks unlimited, but KAI reads a missing limit as 0, '
                'so nothing can run in `{nolimit}`; the reason starts with `{over_limit}`. Copy it while `{nl1}` is '
                'Pending: KAI clears the condition once the pod is placed.',
            ],
        },
        'limit_fix': {
            'summary': 'Set only the GPU limit of queue `{nolimit}` to {limit_value} so that `{nl1}` runs.',
            'task': [
                'Change `{limit_path}` of queue `{nolimit}` to {limit_value}, and nothing else, with `kubectl patch`. '
                '`{nl1}` must then be Running.',
            ],
            'context': [
                'KAI writes "no limit" as {unlimited}. It sees the change in its next scheduling cycle, within '
                'seconds; `{nl1}` need not be created again.',
            ],
        },
        'gang': {
            'summary': 'Submit Job `{gang}` of {gang_size} pods that must start together, see all of them stay '
                       'Pending, and save KAI\'s reason to `{gang_path}`.',
            'task': [
                'Create Job `{gang}` in namespace `{namespace}` with parallelism {gang_size} and the annotation '
                '`{min_member_annotation}: "{min_member}"` on the Job. The label `{queue_label}: {gang_queue}` goes '
                'on the Job and on its pod template; the pods get `schedulerName: {scheduler}`, the image '
                '`{pod_image}`, the command `{pod_command}`, `restartPolicy: Never` and a limit of {gang_gpus} '
                '`{gpu_resource}` each.',
                'Only {free_gpus} GPUs are free now, so all {gang_size} pods must stay Pending. Copy the `message` of '
                'the condition in the gang\'s PodGroup\'s `status.schedulingConditions` into `{gang_path}`.',
            ],
            'context': [
                'The default scheduler would start {free_gpus} of the pods and leave the last one waiting, while the '
                'others hold their GPUs for nothing. KAI makes the Job one PodGroup that needs {min_member} members '
                'and places all of them or none. The queue is not what stops them: the limit of `{gang_queue}` '
                '({gang_queue_limit}) leaves room for the whole gang.',
            ],
        },
        'preempt': {
            'summary': 'Delete Job `{gang}`, fill the GPUs with {train_names} (priority `{train_class}`), then run '
                       '`{build_pod}` (priority `{build_class}`) and see KAI evict a training pod.',
            'task': [
                'Delete Job `{gang}`. Run pods {train_names} in namespace `{namespace}`, each with the label '
                '`{queue_label}: {train_queue}`, `schedulerName: {scheduler}`, the image `{pod_image}`, the command '
                '`{pod_command}`, a limit of {train_gpus} `{gpu_resource}` and `priorityClassName: {train_class}`: '
                'with them, all {gpus} GPUs are in use.',
                'Then run pod `{build_pod}` the same way, with a limit of {build_gpus} `{gpu_resource}` and '
                '`priorityClassName: {build_class}`. `{build_pod}` must become Running, and one training pod must be '
                'evicted.',
            ],
            'context': [
                'Priority decides who gives way. Pods of class `{build_class}` ({build_priority}) are never preempted, '
                'and in return they run only within their queue\'s quota; pods of class `{train_class}` '
                '({train_priority}) may be preempted, so they may borrow GPUs beyond the quota and give them back. KAI '
                'records the eviction as an `Evict` event that names the pod it evicted and the PodGroup it made room '
                'for.',
            ],
        },
        'fraction': {
            'summary': 'Delete the remaining training pod, then run {fraction_names} from `{fraction_path}`, each '
                       'asking for {fraction} of a GPU, on one shared GPU.',
            'task': [
                'Delete the training pod that still runs (of {train_names}, the one KAI did not evict), which frees '
                'one GPU. Write pods {fraction_names} in '
                '`{fraction_path}`, in namespace `{namespace}`, each with the annotation `{fraction_annotation}: '
                '"{fraction}"`, the label `{queue_label}: {fraction_queue}`, `schedulerName: {scheduler}`, the image '
                '`{pod_image}`, the command `{pod_command}` and no `{gpu_resource}` in their resources. Apply the '
                'file: both pods must run on the same GPU.',
            ],
            'context': [
                'A fraction is asked for with the annotation, never together with `{gpu_resource}` limits. KAI places '
                'both pods on one card and holds that card with a reservation pod in `{reservation_ns}`, which counts '
                'as a whole GPU on the node; both pods get the same device.',
            ],
        },
        'report': {
            'summary': 'Write `{report_path}` with {report_names}, each computed from the cluster.',
            'task': [
                'Find out who holds the GPUs now and write a JSON object with {report_count} keys to `{report_path}`:',
                [
                    '`{report_keys[0]}`: the sum of the `{gpu_resource}` limits of the pods that are placed on a node '
                    'and Pending or Running, in every namespace;',
                    '`{report_keys[1]}`: the number of pods in `{reservation_ns}`;',
                    '`{report_keys[2]}`: the value of `{visible_devices}` that `{fr1}` got.',
                ],
            ],
            'context': [
                'The fraction pods have no `{gpu_resource}` limits, so the node\'s GPU ledger does not list them; '
                'their reservation pod stands in for them there, holding the shared card as one whole GPU.',
            ],
        },
    },
}
