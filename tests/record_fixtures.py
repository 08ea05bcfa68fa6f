#!/usr/bin/env python
"""Record unit-test fixtures from the real sim cluster: each step's own state.

Runs the lab's steps one by one (the step list, steps/registry.py) on a
freshly reset sim lab and, after each, saves what the domain code reads
(pods, PodGroups, events, queues and the fraction pods' ConfigMaps, the
learner's files, the step's result) to <out>/<step id>.json: the lab after
that step, which the unit tests load as tests/unit/lab_states.py's
lab_after(step id) (and finished(): the lab after the last step). With no
--step, every step is recorded, and also KAI's admission denial of a pod with
both a GPU fraction and a GPU limit and how the default scheduler places a pod
without schedulerName (mistakes.json).

  --step ID     record only this step's state (repeatable): every step up to
                the last one named is solved, only the named ones are saved.
                A new step's state is one command:
                  python tests/record_fixtures.py --kubeconfig <kubeconfig> --step <id>
  --add FILE    a Python file defining STEP (a step not yet in the step list,
                e.g. tests/unit/reclaim_step.py): registered after the lab's steps
  --out DIR     where the states go; default tests/unit/fixtures/sim/steps for the
                sim's KAI (v0.12.0), tests/unit/fixtures/kai-v0.17.0/steps for v0.17.0
                (a sim running your own KAI v0.17.0: lab author guide, "Your own KAI")

With --gang-job instead: steps 1-4, then step 5 as the lab text writes it (the
Job with kai.scheduler/batch-min-member "3"), saved to gang-job-on-<kai>.json:
what a KAI before v0.14.7 makes of it.

Usage (with the sim provisioned and reset; a sim of its own state directory
names its kubeconfig $KAI_LAB_SIM_STATE/kwok/clusters/kai-lab/kubeconfig.yaml):
  python tests/record_fixtures.py --kubeconfig ~/.local/state/gsb-kai-lab/sim/kwok/clusters/kai-lab/kubeconfig.yaml
"""

import argparse
import importlib.util
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


FIXTURES = os.path.join(HERE, 'unit', 'fixtures')
# Where each KAI version's states go by default (tests/unit/lab_states.py reads them there).
OUT = {'v0.12.0': os.path.join(FIXTURES, 'sim', 'steps'), 'v0.17.0': os.path.join(FIXTURES, 'kai-v0.17.0', 'steps')}


def save(name, data, directory=None):
    path = os.path.join(directory or os.path.join(FIXTURES, 'sim'), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as handle:
        json.dump(data, handle, indent=1, sort_keys=True)
    print('wrote', path)


def add_step(path):
    """Register the STEP a Python file defines after the lab's own steps."""
    spec = importlib.util.spec_from_file_location('added_step', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    steps.use(steps.STEPS + (module.STEP,))
    return module.STEP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--kubeconfig', required=True)
    parser.add_argument('--namespace', default='kai-lab')
    parser.add_argument('--kai-version', default='v0.12.0')
    parser.add_argument('--step', action='append', default=[], help='record only this step (repeatable)')
    parser.add_argument('--add', action='append', default=[], help='a Python file defining STEP, registered last')
    parser.add_argument('--out', help='the directory of the states (default: by --kai-version)')
    parser.add_argument('--gang-job', action='store_true', help="record the lab's Job of step 5 after steps 1-4")
    args = parser.parse_args()
    for path in args.add:
        add_step(path)
    unknown = [s for s in args.step if s not in steps.STEP_IDS]
    if unknown:
        parser.error('unknown step(s) %s; the steps are %s' % (', '.join(unknown), ', '.join(steps.STEP_IDS)))
    out = args.out or OUT.get(args.kai_version)
    if not out and not args.gang_job:
        parser.error('no default directory for KAI %s: give --out' % args.kai_version)
    cluster = Cluster(args.kubeconfig)
    workdir = tempfile.mkdtemp(prefix='kai-lab-fixtures-')
    if args.gang_job:
        return record_gang_job(cluster, args, workdir)
    wanted = set(args.step or steps.STEP_IDS)
    last = max(steps.STEP_IDS.index(s) for s in wanted)
    for step_id in steps.STEP_IDS[:last + 1]:
        runner = StepRunner(cluster, args.namespace, workdir, args.kai_version)
        result = runner.run(step_id)
        if step_id not in wanted:
            continue
        data = snapshot(cluster, args.namespace)
        data['step_result'] = {'evidence': result['evidence']}
        data['files'] = dict((f, open(os.path.join(workdir, f)).read()) for f in sorted(os.listdir(workdir)))
        data['source'] = ('tests/record_fixtures.py on the sim (KAI %s): the lab after step %d %s, every step before '
                          'it solved by the solver' % (args.kai_version, runner.step.number, step_id))
        save('%s.json' % step_id, data, out)
    if args.step:
        return 0

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
    for step_id in steps.STEP_IDS[:steps.STEP_IDS.index(gang.STEP.id)]:
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
