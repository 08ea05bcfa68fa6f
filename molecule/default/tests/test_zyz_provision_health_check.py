"""Re-provision of the solved lab is a health check that cannot hide drift.

create provisioned the lab (the full path, which recorded it); converge
solved it. A provision now finds it up and unchanged: one line per
component, the change tasks skipped, changed=0. Then one thing at a time is
changed that the roles would change back - a killed component, an edited KAI
Config, a deleted webhook - and each time the next provision takes the full
path, says first what it found, restores it, and the provision after is fast
again. Runs after test_zy_evidence and before test_zz_reset (file order).
"""

import json
import os
import re
import signal
import subprocess
import time

from conftest import run_playbook, sim_kubeconfig, sim_kubectl, sim_state

COMPONENTS = ('etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok-controller',
              'fake-gpu-operator', 'scheduler', 'binder', 'podgrouper', 'admission', 'queuecontroller',
              'podgroupcontroller')


def provision():
    done = run_playbook('provision.yml')
    assert done.returncode == 0, done.stdout[-3000:]
    # The YAML callback folds long messages: compare with single spaces.
    return ' '.join(done.stdout.split())


def kubectl(*args):
    done = subprocess.run([sim_kubectl(), '--kubeconfig', sim_kubeconfig()] + list(args),
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def assert_fast(out):
    for name in COMPONENTS:
        assert '%s: up, unchanged' % name in out, out[-3000:]
    assert re.search(r'TASK \[Start the cluster\] \** skipping', out), out[-3000:]
    assert 'changed=0' in out


def assert_full_and_fast_again(found):
    out = provision()
    assert 'full provision: ' + found in out, out[-3000:]
    assert 'TASK [gsb.kai_lab.kai_lab : Prove the lab' in out
    assert_fast(provision())
    return out


def test_an_unchanged_lab_is_only_checked():
    assert_fast(provision())


def test_a_killed_component_takes_the_full_path_and_is_restarted():
    pid_file = os.path.join(sim_state(), 'kai', 'pids', 'binder.pid')
    with open(pid_file) as handle:
        os.kill(int(handle.read()), signal.SIGKILL)
    time.sleep(1)
    out = assert_full_and_fast_again('binder: not running (pid file %s)' % pid_file)
    assert 'item=binder' in out.split("Start KAI's components", 1)[1].split('TASK', 1)[0]


def test_an_edited_kai_config_takes_the_full_path_and_is_applied_again():
    before = json.loads(kubectl('get', 'configs.kai.scheduler', 'kai-config', '-o', 'json'))['spec']
    kubectl('patch', 'configs.kai.scheduler', 'kai-config', '--type=merge', '-p',
            json.dumps({'spec': {'global': {'replicaCount': 7}}}))
    assert_full_and_fast_again('object Config kai-config: differs from what the last provision applied')
    assert json.loads(kubectl('get', 'configs.kai.scheduler', 'kai-config', '-o', 'json'))['spec'] == before


def test_a_deleted_webhook_takes_the_full_path_and_is_registered_again():
    name = kubectl('get', 'mutatingwebhookconfigurations', '-o', 'name').split()[0]
    kubectl('delete', name)
    assert_full_and_fast_again('MutatingWebhookConfiguration %s: is missing' % name.split('/', 1)[1])
    assert kubectl('get', name, '-o', 'name').strip() == name
