"""Runs after everything else (file order): a second sim with its own state
directory and port base starts beside the scenario's, both serve, and its
teardown leaves the scenario's sim serving. Neither touches kubectl's link or
~/.kube/config (both have non-default state directories)."""

import os
import socket
import subprocess
import urllib.request

from conftest import REPO, sim_kubeconfig, sim_kubectl, sim_ports


def _serves(url):
    try:
        return urllib.request.urlopen(url, timeout=3).getcode() == 200
    except Exception:  # refused, timed out: not serving
        return False


def _kai_serves(ports):
    return {name: _serves('http://127.0.0.1:%d%s' % (ports[port], path)) for name, port, path in (
        ('scheduler', 'scheduler_metrics', '/metrics'), ('binder', 'binder_metrics', '/metrics'),
        ('podgrouper', 'podgrouper_probe', '/readyz'), ('admission', 'admission_probe', '/readyz'),
        ('podgroupcontroller', 'podgroupcontroller_probe', '/readyz'))}


def _api_ready(kubeconfig):
    return subprocess.run([sim_kubectl(), '--kubeconfig', kubeconfig, 'get', '--raw', '/readyz'],
                          capture_output=True, timeout=20).returncode == 0


def _playbook(name, env, *extra):
    inventory = os.path.dirname(os.environ['MOLECULE_INVENTORY_FILE'])
    cmd = ['ansible-playbook', '-i', inventory, os.path.join(REPO, 'playbooks', name)] + list(extra)
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)


def _port_free(port):
    with socket.socket() as probe:
        try:
            probe.bind(('127.0.0.1', port))
        except OSError:
            return False
    return True


def _free_port_base(first):
    """The first port base from `first` on, 200 apart, whose every port is
    free: another sim on the machine (a learner's lab, a benchmark's) keeps
    its ports, and the second sim here would be refused on them."""
    for base in range(first, first + 2000, 200):
        if all(_port_free(port) for port in sim_ports(base).values()):
            return base
    raise AssertionError('no free port base from %d to %d for a second sim' % (first, first + 1800))


def test_a_second_sim_runs_beside_and_its_teardown_leaves_the_first_serving(tmp_path):
    base = _free_port_base(int(os.environ.get('KAI_LAB_SIM_PORT_BASE') or 16300) + 200)
    state = str(tmp_path / 'second-sim')
    env = dict(os.environ, KAI_LAB_SIM_STATE=state, ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'),
               ANSIBLE_FORCE_COLOR='0', ANSIBLE_NOCOLOR='1')
    kubectl_link = os.path.realpath('/usr/local/bin/kubectl') if os.path.lexists('/usr/local/bin/kubectl') else None
    extra = ('-e', 'kai_lab_sim_port_base=%d' % base, '-e', 'kai_lab_workdir=%s' % (tmp_path / 'work'))
    try:
        up = _playbook('provision.yml', env, *extra)
        assert up.returncode == 0, up.stdout[-3000:] + up.stderr[-1000:]
        second = os.path.join(state, 'kwok', 'clusters', 'kai-lab', 'kubeconfig.yaml')
        assert _api_ready(second) and all(_kai_serves(sim_ports(base)).values())
        assert _api_ready(sim_kubeconfig()) and all(_kai_serves(sim_ports()).values())
    finally:
        down = _playbook('teardown.yml', env, *extra)
    assert down.returncode == 0, down.stdout[-3000:]
    assert not os.path.exists(state)
    assert _api_ready(sim_kubeconfig()), 'the first sim stopped serving after the second one was torn down'
    assert _kai_serves(sim_ports()) == dict.fromkeys(_kai_serves(sim_ports()), True)
    now = os.path.realpath('/usr/local/bin/kubectl') if os.path.lexists('/usr/local/bin/kubectl') else None
    assert now == kubectl_link
