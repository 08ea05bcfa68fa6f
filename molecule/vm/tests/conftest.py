"""What the vm scenario's checks share: the VM's inventory (molecule's
directory, where create put the VM's connection), the collection's playbooks
run against it from the control host, and snapshots of the VM taken by the
harness (tests/vm/vm.py) in one SSH command each."""

import importlib.util
import os
import subprocess
import sys
import time

import pytest

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'tests'))
from molecule_common import fatal_messages, recap  # noqa: E402,F401  (tests/; the checks import them from here)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
SCENARIO = os.path.join(REPO, 'molecule', 'vm')
HARNESS = os.path.join(REPO, 'tests', 'vm', 'vm.py')
EPHEMERAL = os.environ.get('MOLECULE_EPHEMERAL_DIRECTORY', '')
INVENTORY = os.path.join(EPHEMERAL, 'inventory')

_spec = importlib.util.spec_from_file_location('vm_harness', HARNESS)
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
RELEASE = os.environ.get('KAI_LAB_VM_RELEASE') or harness.DEFAULT_RELEASE

pytestmark = pytest.mark.skipif(not EPHEMERAL, reason='run by molecule (tests/molecule.sh), which boots the VM')


def phase(name, seconds):
    print('\n[vm %s] %s: %d s' % (RELEASE, name, seconds), flush=True)


def run_playbook(path, *extra, timeout=3600):
    """ansible-playbook path against the VM: (CompletedProcess, seconds)."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'), ANSIBLE_NOCOLOR='1',
               ANSIBLE_FORCE_COLOR='0', ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, '.collections'),
               ANSIBLE_PIPELINING='true', ANSIBLE_CALLBACK_RESULT_FORMAT='yaml')
    started = time.monotonic()
    done = subprocess.run(['ansible-playbook', '-i', INVENTORY, path] + list(extra), cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)
    return done, time.monotonic() - started




def vm(*args, timeout=900):
    """The harness, its lines shown as they come (a boot's progress): (CompletedProcess, seconds)."""
    started = time.monotonic()
    with subprocess.Popen([HARNESS] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as process:
        lines = []
        for line in process.stdout:
            lines.append(line)
            if line.startswith('vm: '):
                print(line, end='', flush=True)
            if time.monotonic() - started > timeout:
                process.kill()
        process.wait()
    done = subprocess.CompletedProcess(process.args, process.returncode, ''.join(lines), '')
    return done, time.monotonic() - started


def snapshot(name):
    """The VM's packages, users, groups, sudo rules and files now (one SSH command)."""
    path = os.path.join(EPHEMERAL, 'snapshot-%s.json' % name)
    done, _ = vm('snapshot', path)
    assert done.returncode == 0, done.stdout + done.stderr
    return harness.load(path)


@pytest.fixture(scope='session')
def pristine():
    """The VM as create left it, before any test changed it."""
    return snapshot('pristine')
