#!/usr/bin/env python
"""Record unit-test fixtures from the real sim cluster.

Runs the lab's steps one by one on a freshly reset sim lab and, after each,
saves what the domain code reads (pods, PodGroups, events, queues and the
fraction pods' ConfigMaps) to tests/unit/fixtures/sim/NN-<step>.json. Also
records KAI's admission denial of a pod with both a GPU fraction and a GPU
limit, and how the default scheduler places a pod without schedulerName.

With --gang-job instead: steps 1-4, then step 5 as the lab text writes it (the
Job with kai.scheduler/batch-min-member "3"), saved to gang-job-on-<kai>.json:
what a KAI before v0.14.7 makes of it.

Usage (with the sim provisioned and reset):
  python tests/record_fixtures.py --kubeconfig ~/.local/state/gsb-kai-lab/sim/kwok/clusters/kai-lab/kubeconfig.yaml
"""

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai  # noqa: E402
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu  # noqa: E402
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps  # noqa: E402
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import Cluster, ClusterError  # noqa: E402
from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.solver import StepRunner  # noqa: E402
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import gang  # noqa: E402
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import gpu_pod  # noqa: E402


def strip(obj):
    obj.get('metadata', {}).pop('managedFields', None)
    return obj


def snapshot(cluster, namespace):
    pods = [strip(p) for p in cluster.list('v1', 'Pod', namespace)]
    reservation = [strip(p) for p in cluster.list('v1', 'Pod', kai_gpu.RESERVATION_NAMESPACE)]
    configmaps = {}
    for pod in pods:
        for name in kai_gpu.shared_gpu_configmap_names(pod):
            cm = cluster.get('v1', 'ConfigMap', name, namespace)
            if cm:
                configmaps[name] = strip(cm)
    return {
        'pods': pods,
        'reservation_pods': reservation,
        'podgroups': [strip(p) for p in cluster.list(kai.PODGROUP_API, 'PodGroup', namespace)],
        'events': [strip(e) for e in cluster.list('v1', 'Event', namespace)],
        'queues': [strip(q) for q in cluster.list(kai.QUEUE_API, 'Queue')],
        'configmaps': configmaps,
    }


def save(name, data):
    path = os.path.join(HERE, 'unit', 'fixtures', 'sim', name)
    with open(path, 'w') as handle:
        json.dump(data, handle, indent=1, sort_keys=True)
    print('wrote', path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--kubeconfig', required=True)
    parser.add_argument('--namespace', default='kai-lab')
    parser.add_argument('--kai-version', default='v0.12.0')
    parser.add_argument('--gang-job', action='store_true', help="record the lab's Job of step 5 after steps 1-4")
    args = parser.parse_args()
    cluster = Cluster(args.kubeconfig)
    workdir = tempfile.mkdtemp(prefix='kai-lab-fixtures-')
    if args.gang_job:
        return record_gang_job(cluster, args, workdir)
    for number, step_id in enumerate(steps.STEP_IDS, 1):
        runner = StepRunner(cluster, args.namespace, workdir, args.kai_version)
        result = runner.run(step_id)
        data = snapshot(cluster, args.namespace)
        data['step_result'] = {'evidence': result['evidence']}
        data['files'] = dict((f, open(os.path.join(workdir, f)).read()) for f in sorted(os.listdir(workdir)))
        save('%02d-%s.json' % (number, step_id), data)

    # Common mistake 2: a fraction together with a GPU limit.
    bad = gpu_pod('fr-bad', args.namespace, 'research', gpus=1, annotations={kai_gpu.FRACTION_ANNOTATION: '0.5'})
    try:
        cluster.apply(bad, dry_run=True)
        denial = None
    except ClusterError as exc:
        denial = str(exc)
    # Common mistake 1: no schedulerName; the default scheduler places it.
    plain = gpu_pod('no-kai', args.namespace, 'research', gpus=0)
    del plain['spec']['schedulerName']
    cluster.apply(plain)
    for _ in range(40):
        pod = cluster.get('v1', 'Pod', 'no-kai', args.namespace)
        if pod and kai.pod_phase(pod) == 'Running':
            break
        time.sleep(0.5)
    events = [strip(e) for e in cluster.list('v1', 'Event', args.namespace,
                                            field_selector='involvedObject.name=no-kai')]
    save('mistakes.json', {'fraction_with_gpu_limit_error': denial,
                           'default_scheduler_pod': strip(cluster.get('v1', 'Pod', 'no-kai', args.namespace)),
                           'default_scheduler_events': events})
    cluster.delete('v1', 'Pod', 'no-kai', args.namespace)
    return 0


def record_gang_job(cluster, args, workdir):
    for step_id in steps.STEP_IDS[:4]:
        StepRunner(cluster, args.namespace, workdir, args.kai_version).run(step_id)
    cluster.apply(gang.gang_job(args.namespace))
    for _ in range(40):
        pods = cluster.list('v1', 'Pod', args.namespace, label_selector='job-name=%s' % gang.GANG)
        if len(pods) == gang.GANG_SIZE and all(kai.pod_phase(p) in ('Running', 'Succeeded') for p in pods):
            break
        time.sleep(1.5)
    time.sleep(3)  # the last events
    data = snapshot(cluster, args.namespace)
    data['jobs'] = [strip(cluster.get('batch/v1', 'Job', gang.GANG, args.namespace))]
    data['files'] = dict((f, open(os.path.join(workdir, f)).read()) for f in sorted(os.listdir(workdir)))
    data['source'] = ("tests/record_fixtures.py --gang-job on the sim (KAI %s): steps 1-4 by the solver, then the lab's "
                      "Job gang applied as the lab text writes it" % args.kai_version)
    save('gang-job-on-%s.json' % args.kai_version, data)
    return 0


if __name__ == '__main__':
    sys.exit(main())
