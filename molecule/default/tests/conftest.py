"""Shared fixtures for the sim scenarios' testinfra checks."""

import importlib.util
import json
import os
import subprocess
import time

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))


def _kai_profiles():
    spec = importlib.util.spec_from_file_location('kai_profiles', os.path.join(REPO, 'plugins', 'module_utils', 'kai',
                                                                               'profiles.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


kai_profiles = _kai_profiles()


def sim_ports(base=None):
    """The scenario's sim ports (tests/molecule.sh sets its port base)."""
    return kai_profiles.sim_ports(base or os.environ.get('KAI_LAB_SIM_PORT_BASE') or 16300)


def sim_state():
    return os.environ.get('KAI_LAB_SIM_STATE') or os.path.expanduser('~/.local/state/gsb-kai-lab/sim')


def sim_kubectl():
    """The sim's own kubectl link: a test sim links none on PATH."""
    return os.path.join(sim_state(), 'kubectl')


def kai_lab_command():
    """The learner's check command provision installed: a sim with its own state directory has its own."""
    return os.path.join(sim_state(), 'kai-lab')


def run_kai_lab(*args, timeout=60):
    """kai-lab args, in English: (CompletedProcess, seconds it took)."""
    started = time.monotonic()
    done = subprocess.run([kai_lab_command()] + list(args) + ['--lang', 'en'], capture_output=True, text=True,
                          timeout=timeout)
    return done, time.monotonic() - started


def sim_kubeconfig():
    return os.path.join(sim_state(), 'kwok', 'clusters', 'kai-lab', 'kubeconfig.yaml')


@pytest.fixture(scope='session')
def workdir():
    return os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'gsb-kai')


@pytest.fixture(scope='module')
def kubectl(host):
    """kubectl against the sim, returning parsed JSON."""
    def run(*args):
        cmd = host.run('%s --kubeconfig %s %s -o json' % (sim_kubectl(), sim_kubeconfig(), ' '.join(args)))
        assert cmd.rc == 0, cmd.stderr
        return json.loads(cmd.stdout)
    return run


def run_playbook(name, *extra, timeout=300):
    """Run one of the collection's playbooks against the scenario's lab."""
    # The directory, as molecule passes it: host and group vars live beside the file.
    inventory = os.path.dirname(os.environ['MOLECULE_INVENTORY_FILE'])
    # Plain text to assert on: molecule forces colour for its own runs.
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'), ANSIBLE_FORCE_COLOR='0', ANSIBLE_NOCOLOR='1')
    cmd = ['ansible-playbook', '-i', inventory, os.path.join(REPO, 'playbooks', name)] + list(extra)
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope='session')
def grade_run():
    """Run playbooks/grade.yml against the scenario's lab and return grade.json."""
    def run(lang, output_dir, extra=()):
        proc = run_playbook('grade.yml', '-e', 'kai_lab_lang=%s' % lang, '-e', 'kai_lab_grade_dir=%s' % output_dir,
                            *extra, timeout=120)
        assert proc.returncode == 0 and 'Grade every step' in proc.stdout, proc.stdout[-3000:] + proc.stderr[-2000:]
        with open(os.path.join(output_dir, 'grade.json')) as handle:
            return json.load(handle)
    return run
