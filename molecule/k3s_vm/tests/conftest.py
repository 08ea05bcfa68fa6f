"""What the k3s_vm scenario's checks share: the VM's inventory (molecule's
directory, where create put the VM's connection), the collection's playbooks
run against it with the airgap bundle's vars file, the VM's harness
(tests/vm/vm.py), and each phase's time, printed and kept."""

import importlib.util
import json
import os
import re
import subprocess
import sys
import time

import pytest

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'tests'))
from molecule_common import fatal_messages, recap  # noqa: E402,F401  (tests/; the checks import them from here)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
HARNESS = os.path.join(REPO, 'tests', 'vm', 'vm.py')
EPHEMERAL = os.environ.get('MOLECULE_EPHEMERAL_DIRECTORY', '')
INVENTORY = os.path.join(EPHEMERAL, 'inventory')
BUNDLE_VARS = os.environ.get('KAI_LAB_K3S_BUNDLE_VARS', '')
PHASES = os.path.join(REPO, 'tests', 'output', 'k3s-vm-phases.json')
# The KAI the bundle brings, which the grade must name as the one that runs.
KAI_VERSION = os.environ.get('KAI_LAB_K3S_KAI_VERSION', 'v0.17.0')

_spec = importlib.util.spec_from_file_location('vm_harness', HARNESS)
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)

pytestmark = pytest.mark.skipif(not EPHEMERAL or not BUNDLE_VARS,
                                reason='run by tests/k3s-vm.sh (molecule, a bundle\'s vars file)')


def phase(name, seconds):
    """Print a phase's time and keep it in tests/output/k3s-vm-phases.json."""
    print('\n[k3s-vm] %s: %d s' % (name, seconds), flush=True)
    os.makedirs(os.path.dirname(PHASES), exist_ok=True)
    try:
        with open(PHASES) as handle:
            kept = json.load(handle)
    except (OSError, ValueError):
        kept = {}
    kept[name] = round(seconds)
    with open(PHASES, 'w') as handle:
        json.dump(kept, handle, indent=1)


def run_playbook(name, *extra, timeout=5400):
    """One of the collection's playbooks against the VM with the bundle's vars, each task
    timed (ansible.posix.profile_tasks): (CompletedProcess, seconds)."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'), ANSIBLE_NOCOLOR='1',
               ANSIBLE_FORCE_COLOR='0', ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, '.collections'),
               ANSIBLE_PIPELINING='true', ANSIBLE_CALLBACK_RESULT_FORMAT='yaml',
               ANSIBLE_CALLBACKS_ENABLED='ansible.posix.profile_tasks')
    started = time.monotonic()
    log = os.path.join(EPHEMERAL, '%s-%d.log' % (name.replace('.yml', ''), int(time.time())))
    print('(%s: its output as it comes in %s)' % (name, log), flush=True)
    lines = []
    argv = ['ansible-playbook', '-i', INVENTORY, os.path.join(REPO, 'playbooks', name), '-e', '@' + BUNDLE_VARS]
    with open(log, 'w') as handle, subprocess.Popen(argv + list(extra), cwd=REPO, env=env, stdout=subprocess.PIPE,
                                                    stderr=subprocess.STDOUT, text=True) as process:
        for line in process.stdout:
            lines.append(line)
            handle.write(line)
            handle.flush()
            if time.monotonic() - started > timeout:
                process.kill()
        process.wait()
    done = subprocess.CompletedProcess(argv, process.returncode, ''.join(lines), '')
    return done, time.monotonic() - started


_TASK = re.compile(r'^TASK \[(.*)\] \*+$')
_CLOCK = re.compile(r'\(\d+:\d+:\d+\.\d+\)\s+(\d+):(\d+):(\d+)\.(\d+)')


def task_times(stdout):
    """[(task header, seconds)] from profile_tasks' timestamps: the time between a task's header and the next."""
    marks = []
    pending = None
    for line in stdout.splitlines():
        header = _TASK.match(line)
        if header:
            pending = header.group(1)
            continue
        clock = _CLOCK.search(line)
        if clock:
            hours, minutes, seconds, fraction = clock.groups()
            total = int(hours) * 3600 + int(minutes) * 60 + int(seconds) + float('0.' + fraction)
            marks.append((pending, total))
            pending = None
    return [(name, marks[i + 1][1] - at) for i, (name, at) in enumerate(marks[:-1]) if name]


def phase_times(stdout, markers):
    """Sum task times into phases: markers is [(substring of the task that starts a phase, phase name)], in order;
    tasks before the first marker count to the first phase."""
    totals, current, upcoming = {}, markers[0][1], list(markers)
    for name, seconds in task_times(stdout):
        if upcoming and upcoming[0][0] in name:
            current = upcoming.pop(0)[1]
        totals[current] = totals.get(current, 0) + seconds
    return totals




def ssh(command, timeout=600):
    """A command on the VM as its sudo user: (exit code, stdout, stderr, seconds)."""
    state = harness.read_state()
    started = time.monotonic()
    done = subprocess.run(harness.ssh_argv(state, command, timeout=10), capture_output=True, text=True,
                          timeout=timeout)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def vm(*args, timeout=900):
    started = time.monotonic()
    done = subprocess.run([HARNESS] + list(args), capture_output=True, text=True, timeout=timeout)
    return done, time.monotonic() - started


def snapshot(name):
    path = os.path.join(EPHEMERAL, 'snapshot-%s.json' % name)
    done, _ = vm('snapshot', path)
    assert done.returncode == 0, done.stdout + done.stderr
    return harness.load(path)


@pytest.fixture(scope='session')
def pristine():
    """The VM as create left it (the learner's login made), before any test changed it."""
    state = harness.read_state() or {}
    if state.get('boot_seconds') is not None:
        phase('boot to SSH (6 GiB, 2 vCPUs, %s)' % state.get('accelerator', '?').split(':')[0],
              state['boot_seconds'])
    return snapshot('pristine')
