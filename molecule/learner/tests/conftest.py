"""The learner scenario's checks: the lab as gsb-learner, a local user without root."""

import json
import os
import pwd
import subprocess
import sys

import pytest

sys.path.append(os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'tests')))
# What the tests import from here comes from there too.
from molecule_common import kai_lab_command, run_playbook, sim_kubeconfig, sim_kubectl  # noqa: E402,F401

LEARNER = 'gsb-learner'
NS = 'kai-lab'
IDENTITY = 'system:serviceaccount:kai-lab-learner:learner'


def home():
    return pwd.getpwnam(LEARNER).pw_dir


def workdir():
    return os.path.join(home(), 'gsb-kai')


def as_learner(*argv, stdin=None, timeout=60):
    """argv run as the learner, from its login (its HOME, its ~/.kube/config)."""
    return subprocess.run(['sudo', '-H', '-n', '-u', LEARNER, '--'] + list(argv), input=stdin, capture_output=True,
                          text=True, timeout=timeout, cwd='/')


# The learner's kubectl: a copy of the sim's, root's, outside the learner's home (create.yml, molecule.yml).
LEARNER_KUBECTL = '/opt/gsb-kai-lab-learner-kubectl/kubectl'


def kubectl(*args, stdin=None):
    """The learner's kubectl (a copy of the sim's), run as the learner: its own kubeconfig."""
    return as_learner(LEARNER_KUBECTL, *args, stdin=stdin)


def admin_kubectl(*args):
    done = subprocess.run([sim_kubectl(), '--kubeconfig', sim_kubeconfig()] + list(args) + ['-o', 'json'],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope='session')
def learner_grade():
    """The whole lab checked by the learner: sudo kai-lab check --json."""
    done = as_learner('sudo', '-n', kai_lab_command(), 'check', '--json', '--lang', 'en', timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return json.loads(done.stdout)
