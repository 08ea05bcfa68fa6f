"""Shared fixtures of the k3s scenario's checks: the VM as root (through sudo
for a stock cloud image's user), kubectl on the VM, and the collection's
playbooks run from the control host against the VM."""

import json
import os
import sys

import pytest

sys.path.append(os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'tests')))
import molecule_common  # noqa: E402  (tests/molecule_common.py: what every scenario's checks share)

WORKDIR = '/root/gsb-kai'
VENV_PYTHON = '/opt/gsb-kai-lab/venv/bin/python'
# The SSH user (molecule.yml's inventory): root, or a user with sudo.
USER = os.environ.get('KAI_LAB_K3S_USER', 'root')


@pytest.fixture(scope='module')
def host(host):
    """The VM as root, as the lab's roles act on it: every command (kubectl with
    root's kubeconfig, stat of /root/...) through sudo when USER is not root."""
    if USER != 'root':
        host.backend.sudo = True
    return host


@pytest.fixture(scope='module')
def kubectl(host):
    """kubectl on the VM, returning parsed JSON."""
    def run(*args):
        cmd = host.run('kubectl ' + ' '.join(args) + ' -o json')
        assert cmd.rc == 0, cmd.stderr
        return json.loads(cmd.stdout)
    return run


def lab_inventory(directory):
    """An inventory with the VM in the group the lab's playbooks target."""
    path = os.path.join(str(directory), 'k3s-inventory.yml')
    with open(path, 'w') as handle:
        json.dump({'kai_lab': {'hosts': {'kai-lab-k3s': {
            'ansible_host': os.environ['KAI_LAB_K3S_HOST'],
            'ansible_user': USER,
            'kai_lab_target': 'k3s'}}}}, handle)
    return path


def run_playbook(name, inventory, *extra, timeout=900):
    return molecule_common.run_playbook(name, *extra, inventory=inventory, timeout=timeout)


@pytest.fixture(scope='session')
def inventory(tmp_path_factory):
    return lab_inventory(tmp_path_factory.mktemp('k3s'))
