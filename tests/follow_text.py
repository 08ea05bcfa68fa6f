"""What a learner writes by following the lab text word for word: objects and files built only from the data
the text states (steps/lab_text.py's values for one lab and the running KAI's form), never from the solver's
manifests. molecule/default's test_zzb_follow_the_text.py applies them to the real sim step by step;
tests/unit/test_follow_text_v017.py grades them against KAI v0.17.0's recorded lab.
tests/unit/test_lab_text_complete.py holds that the text states each datum used here."""

import yaml


def pod(v, name, queue, gpus, annotations=None, priority_class=None):
    """A lab pod as the text states it: namespace, schedulerName, queue label, image, command, GPU limit."""
    container = {'name': 'main', 'image': v['pod_image'], 'command': v['pod_command'].split()}
    if gpus:
        container['resources'] = {'limits': {v['gpu_resource']: gpus}}
    meta = {'name': name, 'namespace': v['namespace'], 'labels': {v['queue_label']: queue}}
    if annotations:
        meta['annotations'] = dict(annotations)
    spec = {'schedulerName': v['scheduler'], 'containers': [container]}
    if priority_class:
        spec['priorityClassName'] = priority_class
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': meta, 'spec': spec}


def queue(v, name, parent, gpu_quota, gpu_limit, cpu):
    """A queue: GPU quota and limit (None: left out), CPU and memory (quota, limit)."""
    gpu = {'quota': gpu_quota}
    if gpu_limit is not None:
        gpu['limit'] = gpu_limit
    resources = {'gpu': gpu, 'cpu': {'quota': cpu[0], 'limit': cpu[1]}, 'memory': {'quota': cpu[0], 'limit': cpu[1]}}
    spec = dict({'parentQueue': parent} if parent else {}, resources=resources)
    return {'apiVersion': v['queue_api'], 'kind': 'Queue', 'metadata': {'name': name}, 'spec': spec}


def lab_queues(v):
    return [queue(v, r['name'], r['parent'], r['quota'], r['limit'], (v['cpu_quota'], v['cpu_limit']))
            for r in v['queue_rows']]


def p1(v):
    return pod(v, v['p1'], v['research'], v['p1_gpus'])


def nolimit(v):
    return [queue(v, v['nolimit'], v['nolimit_parent'], v['nolimit_quota'], None,
                  (v['nolimit_cpu_quota'], v['nolimit_cpu_limit'])),
            pod(v, v['nl1'], v['nl1_queue'], v['nl1_gpus'])]


def limit_patch(v):
    """The merge patch of step 4: only the field the text names, to the value it gives."""
    patch = v['limit_value']
    for key in reversed(v['limit_path'].split('.')):
        patch = {key: patch}
    return patch


def gang(v, form):
    """Step 5's objects in the text's form for the running KAI: the explicit PodGroup and its pods, or the Job."""
    if form == 'podgroup':
        podgroup = {'apiVersion': v['podgroup_api'], 'kind': 'PodGroup',
                    'metadata': {'name': v['gang_podgroup_name'], 'namespace': v['namespace']},
                    'spec': {'minMember': v['gang_min_member'], 'queue': v['gang_podgroup_queue'],
                             'priorityClassName': v['gang_class']}}
        return [podgroup] + [pod(v, name, v['gang_queue'], v['gang_gpus'],
                                 annotations={v['podgroup_annotation']: v['gang_podgroup_name']})
                             for name in v['gang_pod_list']]
    template = pod(v, v['gang'], v['gang_queue'], v['gang_gpus'])
    template['spec']['restartPolicy'] = 'Never'
    return [{'apiVersion': 'batch/v1', 'kind': 'Job',
             'metadata': {'name': v['gang'], 'namespace': v['namespace'],
                          'labels': {v['queue_label']: v['gang_queue']},
                          'annotations': {v['min_member_annotation']: str(v['min_member'])}},
             'spec': {'parallelism': v['gang_size'],
                      'template': {'metadata': {'labels': template['metadata']['labels']},
                                   'spec': template['spec']}}}]


def train_and_build(v):
    return ([pod(v, name, v['train_queue'], v['train_gpus'], priority_class=v['train_class'])
             for name in v['train_pods']],
            pod(v, v['build_pod'], v['build_queue'], v['build_gpus'], priority_class=v['build_class']))


def fractions(v):
    return [pod(v, name, v['fraction_queue'], 0, annotations={v['fraction_annotation']: v['fraction']})
            for name in v['fraction_pods']]


def files(v):
    """The files whose content the text dictates (not the ones holding what the learner finds in the cluster)."""
    return {v['queues_file']: yaml.safe_dump_all(lab_queues(v), sort_keys=False),
            v['p1_file']: yaml.safe_dump(p1(v), sort_keys=False),
            v['fraction_file']: yaml.safe_dump_all(fractions(v), sort_keys=False)}


def report(v, pods, reservation_pods, device):
    """report.json as the text says to compute it: every namespace's GPU limits of pods placed on a node and
    Pending or Running, the reservation namespace's pods, fr-1's device."""
    allocated = sum(int(((c.get('resources') or {}).get('limits') or {}).get(v['gpu_resource'], 0))
                    for p in pods if (p.get('spec') or {}).get('nodeName')
                    and (p.get('status') or {}).get('phase') in ('Pending', 'Running')
                    for c in p['spec']['containers'])
    return dict(zip(v['report_keys'], (allocated, len(reservation_pods), device)))
