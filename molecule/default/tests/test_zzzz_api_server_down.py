"""Runs after everything else (file order): with the API server stopped,
kai-lab check exits 2 within 10 s naming the API server (a lab platform's
verify script tells "could not check" from "not done") and kai-lab doctor
names the cluster alone; provision then restarts it, so destroy tears down
a whole sim."""

import os
import signal

from conftest import run_kai_lab, run_playbook, sim_state


def test_kai_lab_check_with_the_api_server_stopped_exits_2_within_10s():
    with open(os.path.join(sim_state(), 'kwok', 'clusters', 'kai-lab', 'pids', 'kube-apiserver.pid')) as handle:
        os.kill(int(handle.read()), signal.SIGKILL)
    try:
        done, seconds = run_kai_lab('check', 'queues', timeout=30)
        assert done.returncode == 2, done.stdout + done.stderr
        assert seconds < 10, seconds
        last = done.stdout.splitlines()[-1]
        assert last.startswith('could not grade: cannot reach the Kubernetes API server at https://127.0.0.1:'), last
        # kai-lab doctor names it as the cluster, not as a list of everything that cannot be read.
        done, seconds = run_kai_lab('doctor', timeout=30)
        assert done.returncode == 2, done.stdout + done.stderr
        assert seconds < 10, seconds
        named = [line for line in done.stdout.splitlines() if line.startswith('- ')]
        assert len(named) == 1 and named[0].startswith('- cluster: cannot read the cluster: '), done.stdout
    finally:
        provision = run_playbook('provision.yml')
    assert provision.returncode == 0, provision.stdout[-3000:]
