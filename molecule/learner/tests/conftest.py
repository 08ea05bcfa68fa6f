"""The learner scenario's checks: the lab as gsb-learner, a local user without root."""

import json
import os
import pwd
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
LEARNER = 'gsb-learner'
NS = 'kai-lab'
IDENTITY = 'system:serviceaccount:kai-lab-learner:learner'


def sim_state():
    return os.environ.get('KAI_LAB_SIM_STATE') or os.path.expanduser('~/.local/state/gsb-kai-lab/sim')


def home():
    return pwd.getpwnam(LEARNER).pw_dir


def workdir():
    return os.path.join(home(), 'gsb-kai')


def kai_lab_command():
    """The learner's check command: a sim with its own state directory has its own."""
    return os.path.join(sim_state(), 'kai-lab')


def admin_kubeconfig():
    return os.path.join(sim_state(), 'kwok', 'clusters', 'kai-lab', 'kubeconfig.yaml')


def as_learner(*argv, stdin=None, timeout=60):
    """argv run as the learner, from its login (its HOME, its ~/.kube/config)."""
    return subprocess.run(['sudo', '-H', '-n', '-u', LEARNER, '--'] + list(argv), input=stdin, capture_output=True,
                          text=True, timeout=timeout, cwd='/')


def kubectl(*args, stdin=None):
    """The learner's kubectl (its own copy, its own kubeconfig)."""
    return as_learner(os.path.join(home(), 'bin', 'kubectl'), *args, stdin=stdin)


def admin_kubectl(*args):
    done = subprocess.run([os.path.join(sim_state(), 'kubectl'), '--kubeconfig', admin_kubeconfig()] + list(args)
                          + ['-o', 'json'], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def run_playbook(name, *extra, timeout=300):
    inventory = os.path.dirname(os.environ['MOLECULE_INVENTORY_FILE'])
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'), ANSIBLE_FORCE_COLOR='0', ANSIBLE_NOCOLOR='1')
    cmd = ['ansible-playbook', '-i', inventory, os.path.join(REPO, 'playbooks', name)] + list(extra)
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope='session')
def learner_grade():
    """The whole lab checked by the learner: sudo kai-lab check --json."""
    done = as_learner('sudo', '-n', kai_lab_command(), 'check', '--json', '--lang', 'en', timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return json.loads(done.stdout)
