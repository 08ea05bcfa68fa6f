"""Issue 41: a learner who follows `kai-lab task` word for word passes every step on the first try.

Runs after test_zza_platform_checks.py, which leaves the lab solved: the
lab is reset, then each step is done as its text says, with objects built
only from the data the text states (steps/lab_text.py's values for this
lab and the running KAI's form: on the sim's KAI v0.12.0 step 5 is the
explicit PodGroup; tests/unit/test_lab_text_complete.py holds that the
text states each of them), never from the solver's manifests. The text of
each step is checked to say the data used, in both languages, and
`kai-lab check STEP` must pass at once, its language alternating. The lab
is left done, as the scenario's later files expect.
"""

import json
import os
import subprocess
import sys
import time

import pytest
import yaml

from conftest import REPO, kai_lab_command, run_playbook, sim_kubeconfig, sim_kubectl, sim_state

sys.path.insert(0, os.path.join(REPO, '.collections'))
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import lab_text  # noqa: E402
import follow_text as text  # noqa: E402  (tests/, on the path through conftest)


@pytest.fixture(scope='module')
def lab():
    """The text kai-lab task prints for this lab (its settings and the KAI that runs), in both languages."""
    with open(os.path.join(sim_state(), 'kai-lab.json')) as handle:
        settings = json.load(handle)
    with open(settings['kai_record']) as handle:
        version = json.load(handle)['version']
    texts = dict((lang, lab_text.Lab(lang, settings['namespace'], settings['workdir'], settings['kai_namespace'],
                                     kai_version=version, target=settings['target'])) for lang in ('en', 'ko'))
    done = run_playbook('reset.yml', timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    return texts


def kubectl(*args, stdin=None, check=True):
    done = subprocess.run([sim_kubectl(), '--kubeconfig', sim_kubeconfig()] + list(args), input=stdin,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 or not check, (args, done.stderr)
    return done


def apply(*objects):
    kubectl('apply', '-f', '-', stdin=yaml.safe_dump_all(list(objects), sort_keys=False))


def until(what, probe, seconds=150):
    """probe() until it gives a true value, within seconds."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        value = probe()
        if value:
            return value
        time.sleep(1)
    raise AssertionError('%s within %d s' % (what, seconds))


def jsonpath(kind, name, path, namespace):
    return kubectl('-n', namespace, 'get', kind, name, '-o', 'jsonpath={%s}' % path, check=False).stdout


def write(lab, name, text):
    with open(os.path.join(lab['en'].workdir, name), 'w') as handle:
        handle.write(text)


def check(step_id, number):
    lang = 'ko' if number % 2 else 'en'
    done = subprocess.run([kai_lab_command(), 'check', step_id, '--lang', lang], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    # The verdict is the first line (a quiet console).
    assert done.stdout.splitlines()[0].endswith(': PASSED' if lang == 'en' else ': 통과'), done.stdout


def said(lab, step_id, *data):
    """The data used are in the step's text, in both languages: the learner had them."""
    for lang, text in lab.items():
        shown = lab_text.plain(text.step(step_id))
        missing = [str(d) for d in data if str(d) not in shown]
        assert not missing, '%s text (%s) does not say %s' % (step_id, lang, missing)


def phase(v, name):
    return jsonpath('pod', name, '.status.phase', v['namespace'])


def test_the_lab_done_as_the_text_says_passes_each_step_at_once(lab):
    v = lab['en'].values
    ns = v['namespace']
    # Each step's number, as the text states it (n_<step id>).
    steps = dict((key[len('n_'):], number) for key, number in v.items() if key.startswith('n_'))
    # 1: the queues as listed, CPU and memory as stated.
    said(lab, 'queues', *[r['name'] for r in v['queue_rows']])
    made = text.files(v)
    write(lab, v['queues_file'], made[v['queues_file']])
    kubectl('apply', '-f', v['queues_path'])
    check('queues', steps['queues'])
    # 2: p1, then the PodGroup its annotation names.
    said(lab, 'podgroup', v['p1'], v['pod_image'], v['podgroup_path'])
    write(lab, v['p1_file'], made[v['p1_file']])
    kubectl('apply', '-f', v['p1_path'])
    until('p1 Running', lambda: phase(v, v['p1']) == 'Running')
    group = until('p1\'s PodGroup', lambda: jsonpath('pod', v['p1'], '.metadata.annotations.%s'
                                                     % v['podgroup_annotation'].replace('.', '\\.'), ns))
    write(lab, os.path.basename(v['podgroup_path']), group + '\n')
    check('podgroup', steps['podgroup'])
    # 3: queue nolimit without a GPU limit, nl-1 Pending, the condition's message.
    said(lab, 'nolimit', v['nolimit'], v['nl1'], 'message')
    apply(*text.nolimit(v))
    nl1_group = until('nl-1\'s PodGroup', lambda: jsonpath('pod', v['nl1'], '.metadata.annotations.%s'
                                                           % v['podgroup_annotation'].replace('.', '\\.'), ns))
    message = until('nl-1\'s condition', lambda: jsonpath('podgroup', nl1_group,
                                                          '.status.schedulingConditions[0].message', ns))
    write(lab, os.path.basename(v['nolimit_path']), message + '\n')
    check('nolimit', steps['nolimit'])
    # 4: the limit, and nothing else.
    kubectl('patch', 'queue', v['nolimit'], '--type', 'merge', '-p', json.dumps(text.limit_patch(v)))
    until('nl-1 Running', lambda: phase(v, v['nl1']) == 'Running')
    check('limit_fix', steps['limit_fix'])
    # 5: the gang in the form the text gives for this KAI.
    if lab['en'].form == 'podgroup':
        said(lab, 'gang', v['gang_podgroup_name'], v['gang_pods'].split(', ')[0], v['podgroup_annotation'])
        apply(*text.gang(v, 'podgroup'))
        gang_group = v['gang_podgroup_name']
    else:
        said(lab, 'gang', v['gang'], v['min_member_annotation'])
        apply(*text.gang(v, None))
        gang_group = until('the Job\'s PodGroup', lambda: kubectl(
            '-n', ns, 'get', 'pods', '-l', 'job-name=%s' % v['gang'], '-o',
            'jsonpath={.items[0].metadata.annotations.%s}' % v['podgroup_annotation'].replace('.', '\\.'),
            check=False).stdout)
    message = until('the gang\'s condition', lambda: jsonpath('podgroup', gang_group,
                                                             '.status.schedulingConditions[0].message', ns))
    write(lab, os.path.basename(v['gang_path']), message + '\n')
    check('gang', steps['gang'])
    # 6: the gang goes, train fills the GPUs, build evicts one.
    if lab['en'].form == 'podgroup':
        kubectl('-n', ns, 'delete', 'pod', *v['gang_pod_list'], '--wait=true')
        kubectl('-n', ns, 'delete', 'podgroup', v['gang_podgroup_name'])
    else:
        kubectl('-n', ns, 'delete', 'job', v['gang'], '--wait=true')
    trains, build = text.train_and_build(v)
    apply(*trains)
    until('the train pods Running', lambda: all(phase(v, n) == 'Running' for n in v['train_pods']))
    apply(build)
    until('bd-1 Running', lambda: phase(v, v['build_pod']) == 'Running', seconds=240)
    check('preempt', steps['preempt'])
    # 7: the train pod KAI did not evict goes; two fraction pods from fraction.yaml.
    left = [n for n in v['train_pods'] if phase(v, n)]
    kubectl('-n', ns, 'delete', 'pod', *left, '--wait=true')
    write(lab, v['fraction_file'], made[v['fraction_file']])
    kubectl('apply', '-f', v['fraction_path'])
    until('the fraction pods Running', lambda: all(phase(v, n) == 'Running' for n in v['fraction_pods']), 240)
    check('fraction', steps['fraction'])
    # 8: counted from the cluster as the text says; fr-1's device where the text says to read it on the sim.
    pods = json.loads(kubectl('get', 'pods', '-A', '-o', 'json').stdout)['items']
    reserved = json.loads(kubectl('-n', v['reservation_ns'], 'get', 'pods', '-o', 'json').stdout)['items']
    fr1 = json.loads(kubectl('-n', ns, 'get', 'pod', v['fr1'], '-o', 'json').stdout)
    source = [e['valueFrom']['configMapKeyRef'] for e in fr1['spec']['containers'][0]['env']
              if e['name'] == v['visible_devices']][0]
    device = json.loads(kubectl('-n', ns, 'get', 'configmap', source['name'], '-o', 'json').stdout)['data'][source['key']]
    said(lab, 'report', 'configmap', *v['report_keys'])
    write(lab, v['report_file'], json.dumps(text.report(v, pods, reserved, device)) + '\n')
    check('report', steps['report'])
    # The whole lab, as the learner ends it.
    done = subprocess.run([kai_lab_command(), 'check', '--lang', 'en'], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith('the lab: PASSED (100.0%)'), done.stdout
