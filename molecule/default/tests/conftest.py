"""Shared fixtures for the sim scenarios' testinfra checks (molecule/mistakes links this file); what
every scenario's checks share is in tests/molecule_common.py."""

import importlib.util
import json
import os
import subprocess
import sys
import time

import pytest

sys.path.append(os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'tests')))
# What the tests import from here comes from there too.
from molecule_common import (REPO, kai_lab_command, run_playbook, sim_kubeconfig, sim_kubectl,  # noqa: E402,F401
                             sim_state)


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


def run_kai_lab(*args, timeout=60):
    """kai-lab args, in English: (CompletedProcess, seconds it took)."""
    started = time.monotonic()
    done = subprocess.run([kai_lab_command()] + list(args) + ['--lang', 'en'], capture_output=True, text=True,
                          timeout=timeout)
    return done, time.monotonic() - started


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
