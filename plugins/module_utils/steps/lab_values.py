# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's names and numbers as its text states them, read from the steps.

Every value comes from where the steps keep it: the objects the solver
applies (p1, nl-1, Job gang, the train, build and fraction pods, the
queues), the steps' file names and constants, and the KAI domain's names.
They are read at each call, so the text follows any change of a step's
datum; nothing here is typed a second time.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import posixpath

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import (
    base, fraction, gang, limit_fix, nolimit, podgroup, preempt, queues, registry, report)


EN_ONES = ('zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven',
           'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen')
EN_TENS = ('', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety')
# Korean native numerals as they stand before a counted noun ('여덟', '스무', '스물한').
KO_ONES = ('', '한', '두', '세', '네', '다섯', '여섯', '일곱', '여덟', '아홉')
KO_TENS = ('', '열', '스물', '서른', '마흔', '쉰', '예순', '일흔', '여든', '아흔')


def english_number(count):
    """A count as an English word ('eight', 'twenty-one'); digits from 100."""
    if not 0 <= count < 100:
        return str(count)
    if count < 20:
        return EN_ONES[count]
    return EN_TENS[count // 10] + ('-' + EN_ONES[count % 10] if count % 10 else '')


def korean_number(count):
    """A count as a Korean native numeral before a counted noun ('여덟', '열두', '스무'); digits outside 1-99."""
    if not 0 < count < 100:
        return str(count)
    tens, ones = divmod(count, 10)
    if tens == 2 and not ones:
        return '스무'
    return KO_TENS[tens] + KO_ONES[ones]


def queue_rows():
    """The lab's queues in the order queues.yaml writes them: name, parent, GPU quota and limit."""
    rows = []
    for queue in queues.lab_queues():
        summary = kai.queue_summary(queue)
        rows.append({'name': summary['name'], 'parent': summary['parent'],
                     'quota': summary['gpu']['quota'], 'limit': summary['gpu']['limit']})
    return rows


def pod_facts(pod):
    """What the text says of a pod: its name, queue, GPUs, priority class and annotations."""
    return {'name': kai.name_of(pod), 'queue': kai.pod_queue(pod), 'gpus': kai_gpu.gpu_limit(pod),
            'priority_class': (pod.get('spec') or {}).get('priorityClassName'), 'annotations': kai.annotations(pod)}


def listed(names):
    """Names as one line for a hint, the same in both languages: 'a, b, c'."""
    return ', '.join(str(name) for name in names)


def queue_spec(row):
    """A queue as a hint states it: 'research: parentQueue lab, quota 2, limit 4'."""
    parts = (['parentQueue %s' % row['parent']] if row['parent'] else []) + \
        ['quota %s' % row['quota'], 'limit %s' % row['limit']]
    return '%s: %s' % (row['name'], ', '.join(parts))


def values(namespace, workdir, kai_namespace, kai_version=None):
    """The text's values for a lab in namespace with the learner's files in workdir (KAI runs in kai_namespace);
    kai_version: the KAI that runs (the lab text's own when None)."""
    def path(name):
        return posixpath.join(workdir, name)

    rows = queue_rows()
    parents = set(r['parent'] for r in rows if r['parent'])
    p1 = pod_facts(podgroup.p1(namespace))
    nl1 = pod_facts(nolimit.nl1(namespace))
    job = gang.gang_job(namespace)
    gang_pod = pod_facts(job['spec']['template'])
    trains = [pod_facts(p) for p in preempt.train_pods(namespace)]
    build = pod_facts(preempt.build_pod(namespace))
    fractions = [pod_facts(p) for p in fraction.fraction_pods(namespace)]
    limit_path, limit_value = limit_fix.patched_field(limit_fix.LIMIT_PATCH)
    queue_limits = dict((r['name'], r['limit']) for r in rows)
    nolimit_queue = kai.queue_summary(nolimit.nolimit_queue())
    gang_podgroup = gang.gang_podgroup(namespace)
    found = {
        'namespace': namespace, 'workdir': workdir, 'kai_namespace': kai_namespace,
        'kai_version': kai_version or kai_profiles.LAB_VERSION, 'lab_kai_version': kai_profiles.LAB_VERSION,
        'gpus': fraction.NODE_GPUS, 'pod_image': base.POD_IMAGE, 'pod_command': ' '.join(base.POD_COMMAND),
        'scheduler': kai.SCHEDULER_NAME, 'queue_label': kai.QUEUE_LABEL, 'queue_api': kai.QUEUE_API,
        'queue_resource': 'queues.' + kai.QUEUE_API.partition('/')[0],
        'gpu_resource': kai_gpu.GPU_RESOURCE, 'fraction_annotation': kai_gpu.FRACTION_ANNOTATION,
        'reservation_ns': kai_gpu.RESERVATION_NAMESPACE, 'visible_devices': kai_gpu.VISIBLE_DEVICES,
        'podgroup_annotation': kai.PODGROUP_ANNOTATION, 'over_limit': kai.REASON_OVER_LIMIT,
        'unlimited': kai.UNLIMITED,
        # Step 1
        'queues_path': path(queues.FILE), 'queue_rows': rows,
        'leaf_queues': [r['name'] for r in rows if r['name'] not in parents],
        'parent_queues': [r['name'] for r in rows if r['name'] in parents],
        'cpu_quota': queues.CPU_MEMORY['quota'], 'cpu_limit': queues.CPU_MEMORY['limit'],
        'queue_list': listed(r['name'] for r in rows), 'queue_count': len(rows),
        'queue_specs': '; '.join(queue_spec(r) for r in rows), 'queues_file': queues.FILE,
        # Step 2
        'p1': p1['name'], 'p1_gpus': p1['gpus'], 'research': p1['queue'],
        'p1_path': path(podgroup.MANIFEST_FILE), 'podgroup_path': path(podgroup.PODGROUP_FILE),
        'p1_file': podgroup.MANIFEST_FILE, 'podgroup_file': podgroup.PODGROUP_FILE,
        # Steps 3 and 4
        'nolimit': nolimit_queue['name'], 'nolimit_parent': nolimit_queue['parent'],
        'nolimit_quota': nolimit_queue['gpu']['quota'], 'nl1': nl1['name'], 'nl1_gpus': nl1['gpus'],
        'nolimit_cpu_quota': nolimit_queue['cpu']['quota'], 'nolimit_cpu_limit': nolimit_queue['cpu']['limit'],
        'nolimit_memory_quota': nolimit_queue['memory']['quota'],
        'nolimit_memory_limit': nolimit_queue['memory']['limit'], 'nl1_queue': nl1['queue'],
        'nolimit_path': path(nolimit.FILE), 'limit_path': limit_path, 'limit_value': limit_value,
        'nolimit_file': nolimit.FILE, 'limit_patch': json.dumps(limit_fix.LIMIT_PATCH, separators=(',', ':')),
        # Step 5
        'gang': kai.name_of(job), 'gang_size': job['spec']['parallelism'], 'gang_gpus': gang_pod['gpus'],
        'min_member_annotation': kai.BATCH_MIN_MEMBER_ANNOTATION,
        'min_member': kai.annotations(job).get(kai.BATCH_MIN_MEMBER_ANNOTATION),
        'gang_queue': gang_pod['queue'], 'gang_path': path(gang.FILE),
        'free_gpus': fraction.NODE_GPUS - p1['gpus'] - nl1['gpus'],
        'gang_queue_limit': queue_limits.get(gang_pod['queue']),
        'gang_found': (fraction.NODE_GPUS - p1['gpus'] - nl1['gpus']) // (gang_pod['gpus'] or 1),
        'gang_file': gang.FILE, 'podgroup_api': kai.PODGROUP_API, 'gang_class': gang_podgroup['spec']['priorityClassName'],
        'gang_pods': listed(kai.name_of(p) for p in gang.gang_pods(namespace)),
        'gang_pod_list': [kai.name_of(p) for p in gang.gang_pods(namespace)], 'gang_podgroup_name': kai.name_of(gang_podgroup),
        'gang_podgroup_queue': gang_podgroup['spec']['queue'], 'gang_min_member': gang_podgroup['spec']['minMember'],
        'gang_mark': kai.GANG_MESSAGE_MARK, 'job_gang_since': '%d.%d.%d' % gang.JOB_GANG_MIN_VERSION,
        'gang_podgroup': kai.workload_podgroup_name(kai.name_of(job), '<job uid>'),
        # Step 6
        'train_pods': [p['name'] for p in trains], 'train_gpus': trains[0]['gpus'],
        'train_class': trains[0]['priority_class'], 'train_priority': base.PRIORITIES[trains[0]['priority_class']],
        'train_queue': trains[0]['queue'], 'build_pod': build['name'], 'build_gpus': build['gpus'],
        'train_list': listed(p['name'] for p in trains), 'build_queue': build['queue'],
        'build_class': build['priority_class'], 'build_priority': base.PRIORITIES[build['priority_class']],
        # Step 7
        'fraction_pods': [p['name'] for p in fractions], 'fraction_path': path(fraction.FILE),
        'fraction': fractions[0]['annotations'].get(kai_gpu.FRACTION_ANNOTATION), 'fraction_queue': fractions[0]['queue'],
        'fraction_list': listed(p['name'] for p in fractions), 'fraction_file': fraction.FILE,
        # Step 8
        'report_path': path(report.FILE), 'report_keys': list(report.REPORT_KEYS), 'fr1': fractions[0]['name'],
        'report_list': listed(report.REPORT_KEYS), 'report_count': len(report.REPORT_KEYS), 'report_file': report.FILE,
    }
    # The step list (registry): how many steps, each one's number, and what a step declares it does to
    # earlier steps' pods (the step that deletes each).
    found['step_count'] = len(registry.STEPS)
    # In words, per language (the lab text's {step_count_word}, steps/lab_text.py).
    found['step_count_words'] = {'en': english_number(len(registry.STEPS)), 'ko': korean_number(len(registry.STEPS))}
    found['deleted_in'] = {}
    for step in registry.STEPS:
        found['n_' + step.id] = step.number
        for name in step.deletes:
            found['deleted_in'].setdefault(name, step.number)
    # A step's own names and numbers, where it states them itself (Step.values).
    for step in registry.STEPS:
        if step.values:
            found.update(step.values(namespace, path))
    return found


def step_files(step, workdir):
    """The paths of the files a step asks the learner for."""
    return [posixpath.join(workdir, name) for name in step.files]
