"""A stopped KAI component and an unreachable API server: grading says which,
within its time bound, and the next provision brings them back. Runs after
test_mistakes.py (file order) on the same lab."""

import json
import os
import re
import signal
import time

from conftest import run_kai_lab, run_playbook, sim_state


def kill(pid_file):
    with open(pid_file) as handle:
        os.kill(int(handle.read()), signal.SIGKILL)
    time.sleep(1)


def grade_en(tmp_path):
    proc = run_playbook('grade.yml', '-e', 'kai_lab_lang=en', '-e', 'kai_lab_grade_dir=%s' % tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    with open(os.path.join(str(tmp_path), 'grade.json')) as handle:
        return json.load(handle)


def test_stopped_binder_is_named_and_provision_restarts_it(tmp_path):
    kill(os.path.join(sim_state(), 'kai', 'pids', 'binder.pid'))
    environment = grade_en(tmp_path)['environment'][0]
    assert environment['status'] == 'failed'
    assert 'not running: binder' in environment['message']
    # The learner's own words for it: kai-lab doctor names the component and what to do, exit 2.
    done, seconds = run_kai_lab('doctor', timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert '- kai_not_ready: KAI component(s) not ready: binder. ' in done.stdout, done.stdout
    assert seconds < 10, seconds
    provision = run_playbook('provision.yml')
    assert provision.returncode == 0, provision.stdout[-3000:]
    assert re.search(r'KAI components started: binder\b', provision.stdout), provision.stdout[-3000:]
    assert grade_en(tmp_path)['environment'][0]['status'] == 'passed'
    done, _ = run_kai_lab('doctor')
    assert done.returncode == 0, done.stdout + done.stderr


def test_unreachable_api_server_fails_fast_and_clearly(tmp_path):
    kill(os.path.join(sim_state(), 'kwok', 'clusters', 'kai-lab', 'pids', 'kube-apiserver.pid'))
    started = time.monotonic()
    grade = grade_en(tmp_path)
    elapsed = time.monotonic() - started
    checks = {c['id']: c for s in grade['steps'] for c in s['checks']}
    assert elapsed < 60
    assert 'cannot reach the Kubernetes API server' in checks['queues.applied']['message']
    assert 'provision.yml' in checks['queues.applied']['hint']
    assert checks['queues.file']['status'] == 'passed'  # the learner's files are still graded
    solve = run_playbook('solve.yml', timeout=120)
    assert solve.returncode != 0 and 'step queues: cannot reach the Kubernetes API server' in solve.stdout
    assert 'step podgroup' not in solve.stdout  # it stops at the first failing step
    provision = run_playbook('provision.yml')
    assert provision.returncode == 0, provision.stdout[-3000:]
    assert 'Restart stopped control-plane processes (kube-apiserver' in provision.stdout
